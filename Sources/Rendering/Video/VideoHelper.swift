import CVideoShim
#if canImport(Glibc)
import Glibc
#endif

/// The video helper process: the thumbd binary run again with `argument` (README "Videos").
/// It decodes poster frames for its parent over the socket on its descriptor 3 and exits when
/// the parent closes it (or dies).
public enum VideoHelper {
    /// The hidden argument that makes the binary a helper: `--video-helper`.
    public static let argument = "--video-helper"

    /// When `arguments` (the whole command line, `CommandLine.arguments`) is the binary and
    /// `argument` alone, serves as the helper and exits; otherwise returns at once. Call first
    /// thing in `main`, before any thread starts.
    public static func serveIfAsked(_ arguments: [String]) {
        guard arguments.count == 2, arguments[1] == argument else { return }
        exit(cvideo_helper_serve(3))
    }
}
