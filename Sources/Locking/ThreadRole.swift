#if canImport(Glibc)
import Glibc
#endif

/// What the calling thread is for, so that thread confinement is checked in code, not in
/// comments (as swift-nio's `assertInEventLoop` / `assertNotInEventLoop`): the owner of a thread
/// sets its role as the thread starts (`HTTPEventLoop`, `RenderScheduler`), and entry points
/// that must run on such a thread, or never on one, assert it. The checks run in debug builds
/// (the tests) and cost nothing in release builds. Threads nobody set are `unassigned`
/// (Dispatch's, the main thread, a test's).
public enum ThreadRole: UInt8, Sendable {
    case unassigned = 0
    /// An HTTP event loop: must never block (no file I/O, no render, no waiting on a peer).
    case eventLoop
    /// A render worker (`RenderScheduler`): libvips renders and the blocking disk work around them.
    case renderWorker

    /// The calling thread's role; set once by the thread's owner, as it starts.
    public static var current: ThreadRole {
        get { ThreadRole(rawValue: UInt8(truncatingIfNeeded: Int(bitPattern: pthread_getspecific(key)))) ?? .unassigned }
        set { pthread_setspecific(key, UnsafeRawPointer(bitPattern: Int(newValue.rawValue))) }
    }

    /// Debug builds: stops with `message` when the calling thread is not a `role` thread.
    @inlinable
    public static func assertCurrent(_ role: ThreadRole, _ message: @autoclosure () -> String,
                                     file: StaticString = #file, line: UInt = #line) {
        assert(current == role, message(), file: file, line: line)
    }

    /// Debug builds: stops with `message` when the calling thread is a `role` thread (for work
    /// that blocks: `assertNot(.eventLoop, …)`).
    @inlinable
    public static func assertNot(_ role: ThreadRole, _ message: @autoclosure () -> String,
                                 file: StaticString = #file, line: UInt = #line) {
        assert(current != role, message(), file: file, line: line)
    }

    private static let key: pthread_key_t = {
        var key = pthread_key_t()
        pthread_key_create(&key, nil)
        return key
    }()
}
