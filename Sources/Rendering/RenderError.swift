import CVideoShim
import CVipsShim

/// Why a source gave no thumbnail. Each kind has one HTTP status (docs/API.md, "Thumbnails"),
/// given in one place: `ThumbService.apiError(for:)` in ThumbServer (noted per kind below).
public struct RenderError: Error, Sendable, Equatable, CustomStringConvertible {
    public enum Kind: Sendable, Equatable {
        /// The source file does not exist (ENOENT at open). HTTP 404.
        case sourceNotFound
        /// Not a decodable image: empty, text, bad signature, truncated or corrupt at libvips'
        /// `fail_on=truncated` level (a JPEG only when it fails at `fail_on=none` too: else it
        /// renders `degraded`), a format thumbd does not read (README "Formats": PDF,
        /// SVG...), or not a regular file. HTTP 415.
        case unsupportedSource
        /// Over the pixel limit, judged from the header before decoding. HTTP 422.
        case sourceTooLarge
        /// A fault of the server: out of memory, encoder failure. HTTP 500.
        case internalFailure
        /// The file's permissions keep the server from reading it (EACCES or EPERM at open): the
        /// user's to fix, and it may pass (a `chmod`), so it is never remembered. HTTP 403.
        case sourceUnreadable
        /// The file opened is not the one the request was resolved to (`RenderRequest.expectedSource`):
        /// replaced or changed since, or while it was read, or a symlink is now on the way to it. Its thumbnail must not be stored
        /// under the old key. HTTP 503 (the service first resolves the path again and retries).
        case sourceChanged
        /// No file descriptor was free to open or read the source (EMFILE, ENFILE): the
        /// process or the system is at its open-file limit for now. Never remembered. HTTP 503
        /// `out_of_descriptors` with `Retry-After`.
        case outOfDescriptors
        /// A video's decode outlived its deadline (`VideoPosters.Configuration.timeoutMilliseconds`,
        /// libav's interrupt callback), or its helper process gave no answer and was killed. It
        /// may be the machine's load, so it is never remembered. HTTP 503 `render_timeout`.
        case decodeTimeout
    }

    public var kind: Kind
    /// One human sentence, with the libvips error text captured where the call failed.
    /// Never contains the source's path.
    public var message: String
    /// For `.unsupportedSource` from a header read: the file is in a format thumbd reads, by
    /// its first bytes, but its header does not decode (`CVIPS_UNDECODABLE`: a lossless JPEG,
    /// SOF3, which Debian 12's libjpeg-turbo 2.1 refuses; a header cut short), rather than in
    /// none thumbd reads (a PDF, a text). The listing counts and says the files it leaves out
    /// so (`LibraryIndex.undecodableFiles`). False for every other failure.
    public var isUndecodable = false

    public init(kind: Kind, message: String) {
        self.kind = kind
        self.message = message
    }

    public var description: String { "\(kind): \(message)" }

    /// A failure reported by the C shim.
    init(_ failure: cvips_failure) {
        var failure = failure
        let message = withUnsafeBytes(of: &failure.message) { String(cBytes: $0) }
        let kind: Kind = switch failure.status {
        case CVIPS_NOT_FOUND: .sourceNotFound
        case CVIPS_UNSUPPORTED, CVIPS_UNDECODABLE: .unsupportedSource
        case CVIPS_MOVED: .sourceChanged
        case CVIPS_DENIED: .sourceUnreadable
        case CVIPS_NO_DESCRIPTORS: .outOfDescriptors
        default: .internalFailure
        }
        self.init(kind: kind, message: message.isEmpty ? "libvips failed" : message)
        isUndecodable = failure.status == CVIPS_UNDECODABLE
    }
}

extension RenderError {
    /// A failure reported by the video shim. A helper that died during the decode is the
    /// file's doing as far as thumbd can tell (a decoder crash comes back on every try), so it
    /// is `.unsupportedSource` (remembered until the file changes), unless it was killed with
    /// SIGKILL from outside (`VideoPosters.poster` tells that apart); one that hung is
    /// `.decodeTimeout`.
    init(_ failure: cvideo_failure) {
        var failure = failure
        let message = withUnsafeBytes(of: &failure.message) { String(cBytes: $0) }
        let kind: Kind = switch failure.status {
        case CVIDEO_UNSUPPORTED, CVIDEO_HELPER_LOST: .unsupportedSource
        case CVIDEO_TOO_LARGE: .sourceTooLarge
        case CVIDEO_TIMEOUT, CVIDEO_HELPER_HUNG: .decodeTimeout
        default: .internalFailure
        }
        self.init(kind: kind, message: message.isEmpty ? "FFmpeg failed" : message)
    }
}
