import CVipsShim
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A source opened for one job: a descriptor the C shim reads the header and the pixels from,
/// closed when the value goes away. Opened non-blocking and checked to be a non-empty regular
/// file (a FIFO or directory must never block a render thread).
struct SourceFile: ~Copyable {
    let descriptor: Int32

    /// `resolved`: `path` had no symlink in it when it was resolved (a realpath), and none may
    /// be followed now (`cvips_source_open_resolved`): a directory or the file swapped for a
    /// link since, perhaps to outside the library, is not opened.
    /// - Throws: `.sourceNotFound` (ENOENT), `.unsupportedSource` (not a regular file, empty),
    ///   `.sourceChanged` (a symlink on the way, when `resolved`), `.sourceUnreadable` (EACCES,
    ///   EPERM), `.outOfDescriptors` (EMFILE, ENFILE), `.internalFailure` (other open errors).
    init(path: DiskPath, resolved: Bool = false) throws(RenderError) {
        var failure = cvips_failure()
        let fd = path.withCString { path in
            resolved ? cvips_source_open_resolved(path, &failure) : cvips_source_open(path, &failure)
        }
        guard fd >= 0 else { throw RenderError(failure) }
        descriptor = fd
    }

    /// The header, without decoding pixels.
    /// - Throws: `.unsupportedSource` when libvips cannot read a header.
    func header() throws(RenderError) -> SourceInfo {
        var header = cvips_header()
        var failure = cvips_failure()
        guard cvips_header_read(descriptor, &header, &failure) == 0 else {
            throw RenderError(failure)
        }
        return SourceInfo(header)
    }

    /// Throws `.sourceChanged` unless the open file's size and mtime are `expected`'s (none
    /// given: nothing to check). `fstat` on the descriptor: the very file being read.
    func check(_ expected: SourceIdentity?) throws(RenderError) {
        guard let expected else { return }
        var st = stat()
        guard fstat(descriptor, &st) == 0, SourceIdentity(st) == expected else {
            throw RenderError(kind: .sourceChanged, message: "the source changed while it was being rendered")
        }
    }

    deinit { close(descriptor) }
}
