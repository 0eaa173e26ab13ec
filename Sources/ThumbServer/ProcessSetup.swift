import Foundation
#if canImport(Glibc)
import Glibc
#endif
import HTTP
import Rendering

/// The one place that changes process-wide state, called by the launcher (`thumbd`'s `Launcher`)
/// before anything else starts, and by test harnesses that run a server in-process: no server
/// part touches a signal disposition, a resource limit or a library's global set-up itself.
///
/// In order: glibc's malloc arenas capped (`Vips.limitMallocArenas`: before any thread),
/// SIGPIPE ignored (a write to a socket the peer closed is `EPIPE`, not death), the soft
/// `RLIMIT_NOFILE` raised to the hard limit (`DescriptorBudget.raiseLimit`: each connection is one
/// descriptor), libvips started (`Vips.start`), libcrypto's first use made (`Crypto.start`: it
/// reads its config file then, and no request should). Idempotent: the first call does it, later
/// calls return the same `Report`.
public enum ProcessSetup {
    /// What `prepare` found and did.
    public struct Report: Sendable, Equatable {
        /// The soft open-file limit after raising it (descriptors); 1024 when it cannot be read.
        public var openFileLimit: Int
        /// The soft open-file limit before, when raising it changed it; nil when it was already at
        /// the hard limit (or could not be read).
        public var raisedOpenFileLimitFrom: Int?
    }

    private static let once: Result<Report, ConfigError> = {
        Vips.limitMallocArenas()
        HTTPProcess.ignoreBrokenPipes()
        let raised = DescriptorBudget.raiseLimit()
        do {
            try Vips.start()
        } catch {
            return .failure(ConfigError("libvips could not start: \(error)"))
        }
        Crypto.start()
        return .success(Report(openFileLimit: raised?.after ?? 1024,
                               raisedOpenFileLimitFrom: raised.flatMap { $0.before < $0.after ? $0.before : nil }))
    }()

    /// Sets the process up once (see the type); thread-safe.
    /// - Throws: `ConfigError` when libvips cannot start (with its text).
    @discardableResult
    public static func prepare() throws(ConfigError) -> Report {
        try once.get()
    }
}
