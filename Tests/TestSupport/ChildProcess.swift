#if canImport(Glibc)
import Glibc
#endif

/// Long-running child processes of a test (nginx, thumbd nodes), started and stopped by pid.
public enum ChildProcess {
    /// Starts `arguments` (`arguments[0]` an absolute path; posix_spawn, since Foundation's
    /// Process cannot wait on two children at once) with no signal blocked and SIGTERM at its
    /// default action: a test thread blocks SIGTERM, and a child inherits the mask. Nil when
    /// posix_spawn fails.
    public static func spawn(_ arguments: [String]) -> pid_t? {
        var argv: [UnsafeMutablePointer<CChar>?] = arguments.map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var none = sigset_t(), defaults = sigset_t()
        sigemptyset(&none)
        sigemptyset(&defaults)
        sigaddset(&defaults, SIGTERM)
        posix_spawnattr_setsigmask(&attributes, &none)
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))
        var child: pid_t = 0
        return posix_spawn(&child, arguments[0], nil, &attributes, &argv, environ) == 0 ? child : nil
    }

    /// Sends `pid` SIGTERM and reaps it; its exit status (`waitpid`'s), or nil when it could not
    /// be reaped.
    @discardableResult
    public static func stop(_ pid: pid_t) -> Int32? {
        kill(pid, SIGTERM)
        var status: Int32 = 0
        var reaped = waitpid(pid, &status, 0)
        while reaped < 0 && errno == EINTR { reaped = waitpid(pid, &status, 0) }
        return reaped == pid ? status : nil
    }
}
