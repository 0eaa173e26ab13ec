import CVipsShim
#if canImport(Glibc)
import Glibc
#endif

/// libvips process set-up.
///
/// Idempotent and thread-safe: the first call runs `vips_init`, turns libvips' operation cache
/// off with `vips_cache_set_max(0)` (the server has its own memory and disk caches), blocks every
/// loader but those of the formats thumbd reads (`vips_operation_block_set`, README "Formats")
/// and sets `vips_concurrency_set(concurrency)`; later calls return at once and do not change the
/// concurrency. `Renderer` calls it itself with the default, so call it first to choose.
public enum Vips {
    /// Starts libvips once per process.
    /// - Parameter concurrency: worker threads libvips may use inside one render. `1` by
    ///   default: parallelism comes from concurrent requests (LIBVIPS.md).
    /// - Throws: `RenderError` `.internalFailure` when `vips_init` fails (with its text).
    public static func start(concurrency: Int = 1) throws(RenderError) {
        var failure = cvips_failure()
        if cvips_start(Int32(clamping: max(1, concurrency)), &failure) != 0 {
            throw RenderError(failure)
        }
    }

    /// The revision of the list of formats thumbd reads (README "Formats", kept in the shim's
    /// `cvips_formats.c` and applied to header reads and renders alike). It changes whenever the
    /// list does, so that what was decided about a file under another list (listed, or not an
    /// image) is decided again: `LibraryIndex` reads every header again when its database was
    /// written under another revision. `1` since the list exists (before it, every loader
    /// libvips had was read: SVG, PDF, JPEG 2000 ... were listed; BMP, ICO, TGA listed, never
    /// rendered).
    public static var formatsRevision: Int { Int(cvips_formats_revision()) }

    /// Caps glibc's malloc arenas at `arenas` (M_ARENA_MAX) unless `MALLOC_ARENA_MAX` is set in
    /// the environment. Call at process start, before any thread. libvips' threads otherwise
    /// fragment one arena each: Tests/Benchmarks/soak.sh for one minute measured 284 MB resident
    /// with the default and 161 MB with two arenas (shared/LIBVIPS.md; imgproxy does the same).
    public static func limitMallocArenas(_ arenas: Int = 2) {
        guard getenv("MALLOC_ARENA_MAX") == nil else { return }
        _ = cvips_limit_malloc_arenas(Int32(arenas))
    }

    /// Bytes libvips holds through its tracked allocator now (`vips_tracked_get_mem`: pixel
    /// buffers of the images being rendered, mostly; not its loaders' own mallocs). `0` before
    /// `start`.
    public static var trackedMemoryBytes: Int { Int(clamping: cvips_tracked_memory()) }

    /// The most bytes libvips' tracked allocator has held at once since the process started
    /// (`vips_tracked_get_mem_highwater`). `0` before `start`.
    public static var trackedMemoryHighwaterBytes: Int { Int(clamping: cvips_tracked_memory_highwater()) }
}
