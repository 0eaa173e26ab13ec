import Console
import Dispatch
import Locking

/// The driver of `IndexWrites`: each write to `index.sqlite` (the listing's in `persist`, a
/// placeholder's in `LibraryIndex+Thumbhash`) feeds its outcome under the database lock, so
/// outcomes arrive in the order the writes ran; the lines are said once the lock is let go.
extension LibraryIndex {
    /// Feeds a write's outcome at the index's clock. Call with the database lock held; say the
    /// effects (`say`) after letting it go.
    func noteWrite(_ event: IndexWrites.Event) -> [IndexWrites.Effect] {
        let now = uptime()
        return writes.withLock { $0.handle(event, at: now) }
    }

    /// Says `effects` on stderr (`Console.warn`).
    func say(_ effects: [IndexWrites.Effect]) {
        for case .say(let line) in effects { Console.warn(line) }
    }

    /// Why the index cannot be written to its file now (`IndexWrites.fault`), or nil: the
    /// sentence `/healthz` gives while a write failed and none was taken since.
    public var writeFault: String? { writes.withLock { $0.fault } }

    /// `writeFault`, after trying a write first while it is set (the formats revision written
    /// again as it is, one page; nothing changes), so the answer is mended as soon as the file
    /// can be written again, space freed or the disk mended. Blocks on file I/O: call it off
    /// the event loops.
    @discardableResult
    public func checkWrites() -> String? {
        ThreadRole.assertNot(.eventLoop, "LibraryIndex.checkWrites blocks on file I/O")
        guard writeFault != nil else { return nil }
        let effects = database.withLock { db -> [IndexWrites.Effect] in
            do {
                try db.transaction { try db.execute("PRAGMA user_version = \(try Self.formatsRevision(of: db))") }
                return noteWrite(.written)
            } catch {
                return noteWrite(.failed(why: String(describing: error)))
            }
        }
        say(effects)
        return writeFault
    }
}
