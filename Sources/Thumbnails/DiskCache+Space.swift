import Dispatch
import Synchronization
#if canImport(Glibc)
import Glibc
import Locking
#endif

/// The driver of `DiskSpace` (a full or read-only file system, issue 29 item 7): the events
/// come from failed writes (`store`) and from probes (`checkSpace`: `/healthz`, `/stats`, a
/// prefetch's start, and while a fault lasts a Dispatch timer every `spaceProbeNanoseconds`);
/// the state sits in the index, under its lock, so the limit a write is admitted against and
/// the fault are one value. A lowered limit's victims are chosen under that lock and counted
/// (`pendingUnlink`) until their files are gone, as a write's are: bytes on disk never grow past
/// the lowered limit, and what was there above it only shrinks.
extension DiskCache {
    /// The file system of `directory` as `statvfs(3)` reads it; nil when it cannot be read.
    static func readSpace(_ directory: String) -> DiskSpace.Reading? {
        var fs = statvfs()
        guard statvfs(directory, &fs) == 0 else { return nil }
        return DiskSpace.Reading(free: Int(fs.f_bavail) * Int(fs.f_frsize), readOnly: fs.f_flag & UInt(ST_RDONLY) != 0)
    }

    /// What a `DiskSpace` event leaves to do once the index lock is let go.
    struct SpaceWork {
        var effects: [DiskSpace.Effect] = []
        /// Entries a lowered limit evicted: out of the index, busy and in `pendingUnlink`.
        var victims: [(digest: String, cost: Int)] = []
    }

    /// Under the index lock: feeds the event `made` from the bytes held now (entries, writes
    /// under way, files not yet unlinked) at the clock's time, and chooses the victims of a
    /// lowered limit, least recently used first, while the bytes counted exceed it.
    func handleSpace(_ made: (Int) -> DiskSpace.Event, in state: inout Index) -> SpaceWork {
        let held = state.lru.totalCost + state.reserved + state.pendingUnlink
        var work = SpaceWork(effects: state.space.handle(made(held), at: clock.now()))
        for case .evict(let limit) in work.effects {
            // Until the victims are gone their bytes stay counted (`pendingUnlink`): they are
            // chosen until what is left would fit.
            let others = state.reserved + state.pendingUnlink
            while state.lru.totalCost + others > limit,
                  let oldest = state.lru.leastRecentKey, let cost = state.lru.remove(oldest) {
                state.lru.evictions += 1
                state.open[oldest] = nil
                state.busy.insert(oldest)
                state.pendingUnlink += cost
                work.victims.append((oldest, cost))
            }
        }
        return work
    }

    /// Outside the index lock: unlinks the victims (each counted until its unlink returned, for
    /// good when it failed), says what is to be said, arms or cancels the probe.
    func perform(_ work: SpaceWork) {
        if !work.victims.isEmpty { victimsChosenForTesting?(work.victims.map(\.digest)) }
        for victim in work.victims {
            let gone = removeDropped(path(for: victim.digest))
            index.withLock { state in
                state.busy.remove(victim.digest)
                if gone { state.pendingUnlink -= victim.cost }
            }
        }
        for effect in work.effects {
            switch effect {
            case .say(let line): warn(line)
            case .evict: break   // its victims, above
            case .startProbing: startProbing()
            case .stopProbing: stopProbing()
            }
        }
    }

    /// Reads the file system (`statvfs`) and feeds it to `DiskSpace`: a full file system's
    /// lowered limit follows the space freed or taken since, and its fault ends when the
    /// configured limit fits again; a read-only one is found, or found writable again. Returns
    /// why the tier cannot keep thumbnails as configured (`DiskSpace.fault`), or nil. One
    /// `statvfs`, and the unlinks of a limit lowered further. Blocks on file I/O: call it off
    /// the event loops.
    @discardableResult
    public func checkSpace() -> String? {
        ThreadRole.assertNot(.eventLoop, "DiskCache.checkSpace blocks on file I/O")
        guard var reading = Self.readSpace(directory) else { return index.withLock { $0.space.fault } }
        // A file system the kernel turned read-only after an error (ext4's errors=remount-ro:
        // `emergency_ro`) is still mounted read-write as statvfs reads it, while every write
        // fails with EROFS: a read-only tier is writable again when a file can be made.
        if !reading.readOnly, index.withLock({ if case .readOnly = $0.space.state { true } else { false } }) {
            reading.readOnly = !canMakeAFile()
        }
        let (work, fault) = index.withLock { state in
            (handleSpace({ .probed(reading, held: $0) }, in: &state), state.space.fault)
        }
        perform(work)
        return fault
    }

    /// Whether a file can be made in `tmp/` (made empty and unlinked at once, a name of this
    /// process's own): false only for EROFS; another failure is left to the writes to report.
    func canMakeAFile() -> Bool {
        let path = temporaryDirectory + "/\(getpid())-probe.tmp"
        let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        if fd < 0 { return errno != EROFS }
        close(fd)
        unlink(path)
        return true
    }

    /// Arms the probe (a Dispatch timer on a global queue, never an event loop) unless armed.
    private func startProbing() {
        let interval = DispatchTimeInterval.nanoseconds(Int(spaceProbeNanoseconds))
        probe.withLock { probe in
            guard probe == nil else { return }
            let timer = DispatchSource.makeTimerSource(queue: .global(qos: .utility))
            timer.schedule(deadline: .now() + interval, repeating: interval)
            // A fault ended by another probe between its start and this arming stops it here.
            timer.setEventHandler { [weak self] in
                if let self, self.checkSpace() == nil { self.stopProbing() }
            }
            timer.resume()
            probe = timer
        }
    }

    private func stopProbing() {
        probe.withLock { probe in
            probe?.cancel()
            probe = nil
        }
    }
}
