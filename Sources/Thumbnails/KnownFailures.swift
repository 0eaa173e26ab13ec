import Rendering
import Synchronization

/// Sources whose render failed for a reason that lies in the file itself, remembered against the
/// file's identity so that GETs and prefetches of it answer at once instead of decoding it again.
///
/// Only failures that the same bytes always give are kept (`remembers`): not a decodable image
/// (415) and over the pixel or byte limit (422). Failures that may pass by themselves are never
/// kept: a missing file, a server fault (out of memory or descriptors, an unreadable file, a
/// full disk), a source that changed while it was read, a full queue or a timeout. A remembered
/// failure ends when the file changes: the identity is the path with its device, inode, size and
/// modification time, so a file rewritten, replaced or touched is rendered again.
///
/// Bounded: at most `capacity` sources (default 10,000), the oldest remembered forgotten first.
/// Thread-safe: one `Mutex`.
final class KnownFailures: Sendable {
    /// Which file a failure belongs to.
    struct Source: Hashable, Sendable {
        var path: DiskPath
        var device: UInt64
        var inode: UInt64
        var identity: SourceIdentity
    }

    private struct State {
        var failures: [DiskPath: (source: Source, error: RenderError)] = [:]
        /// The keys of `failures`, in the order they were first remembered.
        var order = FIFO<DiskPath>()
    }

    /// Sources remembered at most (default 10,000).
    let capacity: Int
    private let state = Mutex(State())

    init(capacity: Int = 10_000) {
        self.capacity = max(1, capacity)
    }

    /// Whether a failure of this kind is a fact about the file's bytes (and the server's fixed
    /// limits), the same at every grid and every try.
    static func remembers(_ kind: RenderError.Kind) -> Bool {
        switch kind {
        case .unsupportedSource, .sourceTooLarge: true
        case .sourceNotFound, .internalFailure, .sourceChanged, .sourceUnreadable, .outOfDescriptors, .decodeTimeout: false
        }
    }

    /// The failure remembered for exactly this file, or nil.
    func failure(of source: Source) -> RenderError? {
        state.withLock { state in
            guard let known = state.failures[source.path], known.source == source else { return nil }
            return known.error
        }
    }

    /// Remembers `error` for `source` when its kind is one that `remembers`; replaces what was
    /// remembered for the same path (an older identity of it stays unused until then: a lookup
    /// wants the identity to match).
    func record(_ error: RenderError, for source: Source) {
        guard Self.remembers(error.kind) else { return }
        state.withLock { state in
            if state.failures.updateValue((source, error), forKey: source.path) == nil { state.order.push(source.path) }
            while state.failures.count > capacity, let oldest = state.order.pop() {
                state.failures[oldest] = nil
            }
        }
    }

    /// Sources remembered now.
    var count: Int { state.withLock { $0.failures.count } }
}
