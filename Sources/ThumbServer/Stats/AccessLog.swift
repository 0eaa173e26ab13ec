import Foundation
#if canImport(Glibc)
import Glibc
#endif
import HTTP
import Synchronization

/// The access log (`access_log`, `access_log_file`, `trusted_proxies`): one line per request in
/// an `AccessLogFormat`, to stdout (journald under systemd) or appended to a file that SIGUSR1
/// reopens (`reopen()`, for logrotate).
///
/// An event loop only takes the settings (one lock, to copy them) and queues the exchange; the
/// line is formatted and written on `queue`, a serial queue that alone touches the file
/// descriptor (`Destination`), so lines never interleave, the loop never waits on the disk,
/// and a reopen queued between two lines sends every line before it to the old file and every
/// line after it to the new one: none is lost.
final class AccessLog: Sendable {
    /// What to write and whom to believe; swapped by `apply` (a reload).
    struct Settings: Sendable, Equatable {
        var format: AccessLogFormat
        var trustedProxies: TrustedProxies
        /// The file lines are appended to; empty: stdout.
        var file: String
    }

    /// Whether the last reopen of the file (SIGUSR1) opened it: a failure is said at each
    /// reopen that fails, the first one that works after it once.
    enum Reopening: Sendable, Equatable {
        case opened
        case failing
    }

    /// Where lines go: stdout or an open file. Touched on `queue` only.
    private final class Destination: @unchecked Sendable {
        var fd: Int32 = STDOUT_FILENO
        var path = ""
        var reopening = Reopening.opened
    }

    /// The one lock of the settings the loops read.
    private let settings: Mutex<Settings>
    /// Serial: formats and writes every line, and opens and closes the file.
    private let queue = DispatchQueue(label: "thumbd.access-log")
    private let destination = Destination()
    /// The wall clock, s since 1970, and the local offset from UTC at that time, s; a test's
    /// fixed clock makes lines exact.
    private let clock: @Sendable () -> (time: Double, utcOffset: Int)

    /// Opens `settings.file` (when given) for appending, creating it (0640).
    /// - Throws: `ConfigError` naming `access_log_file` when it cannot be opened.
    init(settings: Settings, clock: @escaping @Sendable () -> (time: Double, utcOffset: Int) = AccessLog.systemClock)
        throws(ConfigError) {
        self.settings = Mutex(settings)
        self.clock = clock
        if !settings.file.isEmpty {
            destination.fd = try Self.open(settings.file)
            destination.path = settings.file
        }
    }

    /// `Date()` and the offset of the local time zone (TZ, /etc/localtime) at that moment.
    static let systemClock: @Sendable () -> (time: Double, utcOffset: Int) = {
        let now = Date().timeIntervalSince1970
        var seconds = time_t(now)
        var parts = tm()
        localtime_r(&seconds, &parts)
        return (now, parts.tm_gmtoff)
    }

    /// The settings in force.
    var current: Settings { settings.withLock { $0 } }

    /// Queues `exchange`'s line (nothing when the format is `off`). From any thread; does not block.
    func write(_ exchange: HTTPExchangeRecord) {
        let settings = settings.withLock { $0 }
        guard settings.format != .off else { return }
        let (time, offset) = clock()
        queue.async { [self] in
            dispatchPrecondition(condition: .onQueue(queue))
            let client = settings.trustedProxies.client(peer: exchange.peer, headers: exchange.requestHeaders)
            let entry = AccessLogEntry(exchange: exchange, client: client, time: time, utcOffsetSeconds: offset)
            guard let line = settings.format.line(entry) else { return }
            Self.writeAll(Array(line.utf8), to: destination.fd)
        }
    }

    /// Reopens the file (SIGUSR1, after logrotate moved it): lines queued before go to the old
    /// file, lines after to one opened at the same path now. Does nothing when writing to stdout.
    /// When the path cannot be opened, the old file is kept and `say` is told why (at each
    /// SIGUSR1 that fails: each is the operator's own act); the first reopen that works after
    /// one that failed is said too, once.
    func reopen(say: @escaping @Sendable (String) -> Void = { Thumbd.warn($0) }) {
        queue.async { [self] in
            dispatchPrecondition(condition: .onQueue(queue))
            guard !destination.path.isEmpty else { return }
            do throws(ConfigError) {
                let fd = try Self.open(destination.path)
                Self.close(destination)
                destination.fd = fd
                if destination.reopening == .failing {
                    say("access_log_file \(destination.path) is reopened: lines go to it again")
                }
                destination.reopening = .opened
            } catch {
                destination.reopening = .failing
                say("\(error.description); lines go on to the file open before")
            }
        }
    }

    /// Takes new settings (a reload): the format and the trusted proxies for the next request;
    /// a new `file` is opened (its lines from then on) once the lines queued before are written.
    /// - Throws: `ConfigError` when the new file cannot be opened: nothing changes then.
    func apply(_ new: Settings) throws(ConfigError) {
        let old = current
        if new.file != old.file && !new.file.isEmpty {
            // Opened here, so that a path that cannot be opened is refused before anything changes.
            let fd = try Self.open(new.file)
            queue.async { [self] in
                dispatchPrecondition(condition: .onQueue(queue))
                Self.close(destination)
                destination.fd = fd
                destination.path = new.file
                destination.reopening = .opened
            }
        } else if new.file != old.file {
            queue.async { [self] in
                dispatchPrecondition(condition: .onQueue(queue))
                Self.close(destination)
                destination.fd = STDOUT_FILENO
                destination.path = ""
                destination.reopening = .opened
            }
        }
        settings.withLock { $0 = new }
    }

    /// Waits until every line queued so far is written (tests; a stop).
    func flush() { queue.sync {} }

    private static func close(_ destination: Destination) {
        if destination.fd != STDOUT_FILENO { _ = Glibc.close(destination.fd) }
    }

    private static func open(_ path: String) throws(ConfigError) -> Int32 {
        let fd = Glibc.open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0o640)
        guard fd >= 0 else { throw cannotOpen(path, errno) }
        return fd
    }

    /// Whether a start could open `path` as the access log (`open`), tried as it would be, for
    /// `--check-config`: a file there is opened for appending and closed (nothing is written;
    /// `O_NONBLOCK`, so that a FIFO with no reader is refused, not waited on); a missing one is
    /// created (`O_EXCL`: this call's own) and removed. So a directory, a path under /proc or a
    /// directory that is not there is refused as a start would refuse it.
    /// - Throws: the `ConfigError` a start would give.
    static func checkOpening(_ path: String) throws(ConfigError) {
        var st = stat()
        let exists = stat(path, &st) == 0
        let fd = Glibc.open(path, O_WRONLY | O_APPEND | O_CLOEXEC | O_NONBLOCK | (exists ? 0 : O_CREAT | O_EXCL), 0o640)
        guard fd >= 0 else { throw cannotOpen(path, errno) }
        _ = Glibc.close(fd)
        if !exists { unlink(path) }
    }

    private static func cannotOpen(_ path: String, _ failure: Int32) -> ConfigError {
        ConfigError("access_log_file \(path) cannot be opened for appending: \(String(cString: strerror(failure)))")
    }

    /// One write(2) per line (O_APPEND keeps it whole), again after a short write or EINTR.
    private static func writeAll(_ bytes: [UInt8], to fd: Int32) {
        var sent = 0
        while sent < bytes.count {
            let n = bytes[sent...].withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) }
            if n > 0 { sent += n } else if n < 0 && errno == EINTR { continue } else { return }
        }
    }
}
