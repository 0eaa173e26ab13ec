import Foundation
import Glibc
import Rendering
import Synchronization
import Testing
import TestSupport
@testable import Thumbnails

/// The disk tier's file-system fault (issue 29, item 7): `DiskSpace` as a table, events and the
/// time in, effects, limit and fault out; then its driver on a real directory, fed the events a
/// full file system would give.
@Suite struct DiskSpaceTests {
    typealias Event = DiskSpace.Event
    typealias Effect = DiskSpace.Effect

    static let mebibyte = 1_048_576

    static func seconds(_ s: UInt64) -> UInt64 { s * 1_000_000_000 }

    static func probe(free: Int, readOnly: Bool = false, held: Int) -> Event {
        .probed(DiskSpace.Reading(free: free, readOnly: readOnly), held: held)
    }

    static func failed(_ errno: Int32, held: Int, free: Int?) -> Event {
        .writeFailed(errno: errno, held: held, reading: free.map { DiskSpace.Reading(free: $0, readOnly: false) })
    }

    /// One step: the event at `at` seconds, the effects it must return, then the limit and
    /// whether a fault is reported (and a word of its sentence).
    struct Step {
        let event: Event
        let at: UInt64
        let effects: [Effect]
        let limit: Int
        let fault: String?
    }

    static let steps: [Step] = [
        // Writable: a probe of a writable file system, and a failure that is not this machine's, change nothing.
        Step(event: probe(free: 10 * mebibyte, held: 0), at: 1, effects: [], limit: mebibyte, fault: nil),
        Step(event: failed(EIO, held: 500_000, free: 10), at: 1, effects: [], limit: mebibyte, fault: nil),
        // ENOSPC with 410,000 bytes held (the failed write's own not counted) and 102,400 free:
        // the limit is both, in whole blocks; said once, probing starts.
        Step(event: failed(ENOSPC, held: 410_000, free: 102_400), at: 2,
             effects: [.say("disk cache: the file system of /c is full (102400 bytes free): the limit is lowered from "
                            + "1048576 to 512000 bytes, least recently used entries evicted to make room; raised again as space returns"),
                       .evict(toLimit: 512_000), .startProbing],
             limit: 512_000, fault: "its file system is full (102400 bytes free); its limit is lowered to 512000 of 1048576 bytes"),
        // Another write failing (it needed more than the 2,000 bytes free): lowered again, no second line.
        Step(event: failed(ENOSPC, held: 409_600, free: 2_000), at: 3, effects: [.evict(toLimit: 409_600)], limit: 409_600,
             fault: "(2000 bytes free); its limit is lowered to 409600 of"),
        // A probe with nothing changed.
        Step(event: probe(free: 2_000, held: 409_600), at: 4, effects: [], limit: 409_600, fault: "full"),
        // Another program freed 300,000 bytes: up by as much (in whole blocks), nothing to do;
        // the fault tells the bytes free now.
        Step(event: probe(free: 302_000, held: 409_600), at: 5, effects: [], limit: 708_608,
             fault: "its file system is full (302000 bytes free); its limit is lowered to 708608 of"),
        // The tier's own writes take free bytes as they add held ones: the limit stays.
        Step(event: probe(free: 105_392, held: 606_208), at: 6, effects: [], limit: 708_608, fault: "full"),
        // Another program took 100,000: the limit follows, down, and evicts.
        Step(event: probe(free: 5_392, held: 606_208), at: 7, effects: [.evict(toLimit: 610_304)], limit: 610_304, fault: "full"),
        // Room for the whole configured limit: the fault is over, said once, probing stops.
        Step(event: probe(free: 2_000_000, held: 606_208), at: 62,
             effects: [.say("disk cache: the file system of /c has room again (2000000 bytes free), after 60 s: "
                            + "the limit is back to 1048576 bytes"), .stopProbing],
             limit: mebibyte, fault: nil),
        // EROFS: read-only until a probe finds it writable; said once each way.
        Step(event: failed(EROFS, held: 0, free: nil), at: 70,
             effects: [.say("disk cache: /c is read-only: thumbnails are not kept on disk (those the memory cache "
                            + "does not hold are rendered again) until it is writable again"), .startProbing],
             limit: mebibyte, fault: "its file system is read-only"),
        Step(event: failed(EROFS, held: 0, free: nil), at: 71, effects: [], limit: mebibyte, fault: "read-only"),
        Step(event: probe(free: 5_000_000, readOnly: true, held: 0), at: 80, effects: [], limit: mebibyte, fault: "read-only"),
        Step(event: probe(free: 5_000_000, held: 0), at: 100,
             effects: [.say("disk cache: /c is writable again, after 30 s read-only; thumbnails are kept on disk again"),
                       .stopProbing],
             limit: mebibyte, fault: nil),
        // A probe alone finds a read-only mount, before any write fails.
        Step(event: probe(free: 5_000_000, readOnly: true, held: 0), at: 110,
             effects: [.say("disk cache: /c is read-only: thumbnails are not kept on disk (those the memory cache "
                            + "does not hold are rendered again) until it is writable again"), .startProbing],
             limit: mebibyte, fault: "read-only"),
        Step(event: probe(free: 5_000_000, held: 0), at: 111,
             effects: [.say("disk cache: /c is writable again, after 1 s read-only; thumbnails are kept on disk again"),
                       .stopProbing],
             limit: mebibyte, fault: nil),
        // A quota: statvfs does not see it, so the file system's free bytes as they were at
        // the failure are no room; only what is freed since is.
        Step(event: failed(EDQUOT, held: 600_000, free: 50_000_000), at: 120,
             effects: [.say("disk cache: the disk quota of /c is met (50000000 bytes free): the limit is lowered from "
                            + "1048576 to 598016 bytes, least recently used entries evicted to make room; raised again as space returns"),
                       .evict(toLimit: 598_016), .startProbing],
             limit: 598_016, fault: "its disk quota is met"),
        Step(event: probe(free: 50_000_000, held: 598_016), at: 125, effects: [], limit: 598_016, fault: "quota"),
        Step(event: probe(free: 50_600_000, held: 598_016), at: 130,
             effects: [.say("disk cache: the file system of /c has room again (50600000 bytes free), after 10 s: "
                            + "the limit is back to 1048576 bytes"), .stopProbing],
             limit: mebibyte, fault: nil),
    ]

    /// Feeds `steps` to `space` in order, checking each one's effects, limit and fault.
    static func run(_ steps: [Step], on space: inout DiskSpace) {
        for (n, step) in steps.enumerated() {
            let effects = space.handle(step.event, at: seconds(step.at))
            #expect(effects == step.effects, "step \(n): \(step.event)")
            #expect(space.limit == step.limit, "step \(n)")
            if let word = step.fault {
                #expect(space.fault?.contains(word) == true, "step \(n): \(space.fault ?? "no fault")")
            } else {
                #expect(space.fault == nil, "step \(n): \(space.fault ?? "")")
            }
        }
    }

    @Test func theFaultIsAStateFedWritesAndProbes() {
        var space = DiskSpace(directory: "/c", configuredLimit: Self.mebibyte)
        Self.run(Self.steps, on: &space)
        #expect(space.faults == 4)   // full, read-only twice, the quota
    }

    /// The library index shares the cache directory (`index.sqlite` and its WAL): on a full file
    /// system the limit is lowered below what fits by the index's headroom, so that the index
    /// can still be written, and the fault ends only when the configured limit fits beside it.
    @Test func aFullFileSystemLeavesTheIndexItsHeadroom() {
        #expect(DiskSpace.indexHeadroom(fileSystemBytes: 100 << 30) == 4 << 20)
        #expect(DiskSpace.indexHeadroom(fileSystemBytes: 256 << 20) == 4 << 20)
        #expect(DiskSpace.indexHeadroom(fileSystemBytes: 4 << 20) == 64 << 10)
        #expect(DiskSpace.indexHeadroom(fileSystemBytes: 1_000_000) == 12_288)   // 15,625 in whole blocks
        #expect(DiskSpace.indexHeadroom(fileSystemBytes: 200_000) == 0)          // 3,125: less than a block

        let limit = 8 * Self.mebibyte
        let steps: [Step] = [
            // 2 MiB held, 10,000 bytes free, 64 KiB of headroom: 2,041,616 fit, 2,039,808 in whole blocks.
            Step(event: Self.failed(ENOSPC, held: 2 * Self.mebibyte, free: 10_000), at: 1,
                 effects: [.say("disk cache: the file system of /c is full (10000 bytes free): the limit is lowered from "
                                + "8388608 to 2039808 bytes (65536 bytes left free for the library index), least recently "
                                + "used entries evicted to make room; raised again as space returns"),
                           .evict(toLimit: 2_039_808), .startProbing],
                 limit: 2_039_808, fault: "its limit is lowered to 2039808 of 8388608 bytes"),
            // The victims' 57,344 bytes are free now: the headroom is there, nothing changes.
            Step(event: Self.probe(free: 67_344, held: 2_039_808), at: 2, effects: [], limit: 2_039_808, fault: "full"),
            // The index took 40 KiB of it: the tier gives as much back.
            Step(event: Self.probe(free: 26_384, held: 2_039_808), at: 3, effects: [.evict(toLimit: 1_998_848)],
                 limit: 1_998_848, fault: "full"),
            // Room for the configured limit, not for it and the headroom: still full, the limit raised.
            Step(event: Self.probe(free: limit - 1_998_848 + 4096, held: 1_998_848), at: 4, effects: [],
                 limit: limit - 61_440, fault: "full"),
            // Room for both: over.
            Step(event: Self.probe(free: limit - 1_998_848 + 65_536, held: 1_998_848), at: 5,
                 effects: [.say("disk cache: the file system of /c has room again (6455296 bytes free), after 4 s: "
                                + "the limit is back to 8388608 bytes"), .stopProbing],
                 limit: limit, fault: nil),
        ]
        var space = DiskSpace(directory: "/c", configuredLimit: limit, headroom: 65_536)
        Self.run(steps, on: &space)
    }

    /// A reload (`disk_cache_bytes`, `DiskCache.setLimit`) that lowers the configured limit
    /// below a full file system's lowered one: writes are held to the lower of the two.
    @Test func aReloadedLimitBelowAFullFileSystemsIsTheLimit() {
        var space = DiskSpace(directory: "/c", configuredLimit: Self.mebibyte)
        _ = space.handle(Self.failed(ENOSPC, held: 600 * 1024, free: 100 * 1024), at: 0)
        #expect(space.limit == 700 * 1024)
        space.configuredLimit = 512 * 1024
        #expect(space.limit == 512 * 1024)
        space.configuredLimit = 2 * Self.mebibyte
        #expect(space.limit == 700 * 1024)
    }

    // MARK: The driver

    func key(_ name: String) -> CacheKey {
        CacheKey(assetPath: name, source: SourceIdentity(size: 10, modifiedNanoseconds: 1),
                 spec: GridSpec.defaults[1], format: .automatic, quality: 80)
    }

    /// A thumbnail whose entry takes exactly `blocks` 4 KiB blocks on disk.
    func thumbnail(blocks: Int) -> Thumbnail {
        Thumbnail(bytes: [UInt8](repeating: 7, count: blocks * 4096 - 600), format: .png, width: 33, height: 44)
    }

    /// Bytes the regular files under `entries/` and `tmp/` occupy (`st_blocks`, as `du`).
    func bytesOnDisk(_ cache: String) -> Int { DiskUsage.cacheBytes(cache) }

    /// Feeds `event` (made from the bytes held) to `cache` as its store and probes do.
    func feed(_ cache: DiskCache, _ event: @escaping @Sendable (Int) -> Event) {
        let work = cache.index.withLock { cache.handleSpace(event, in: &$0) }
        cache.perform(work)
    }

    /// A lowered limit is a limit: its victims are the least recently used entries, their bytes
    /// leave the count only as their files go, and a write after it is admitted against it,
    /// evicting as under the configured one. Raised again, the configured limit holds.
    @Test func aLoweredLimitEvictsTheLeastRecentlyUsedAndBoundsTheWritesAfterIt() throws {
        let dir = TemporaryDirectory()
        let path = dir.path
        let said = LockedLines()
        // What runs between a lowered limit's choice of victims and their unlinks (once).
        let interleaved = Mutex<(@Sendable () -> Void)?>(nil)
        let cache = try DiskCache(directory: dir.path, limitBytes: 40_960, spaceProbeSeconds: 3600, warn: said.append,
                                  victimsChosenForTesting: { _ in
                                      interleaved.withLock { action in
                                          defer { action = nil }
                                          return action
                                      }?()
                                  })
        let names = (0..<8).map { "e\($0)" }
        for name in names { #expect(cache.store(thumbnail(blocks: 1), for: key(name)) == .written) }
        #expect(cache.read(key("e0")) != nil)   // e0 now the most recent: e1 is the least
        #expect(cache.statistics.bytes == 32_768)

        // A write met a quota: the limit is what was held (statvfs' 20,000 bytes free are no room).
        feed(cache) { .writeFailed(errno: EDQUOT, held: $0, reading: DiskSpace.Reading(free: 20_000, readOnly: false)) }
        #expect(cache.statistics.effectiveLimitBytes == 32_768)
        #expect(cache.statistics.evictions == 0)
        #expect(said.lines.count == 1)
        // Another program took 16 KiB: four entries go, the least recently used. Until their
        // files are gone they stay counted: a write at that moment finds no room.
        let between = Mutex<(outcome: DiskCache.WriteOutcome, counted: Int, onDisk: Int)?>(nil)
        interleaved.withLock {
            $0 = {
                let outcome = cache.store(thumbnail(blocks: 1), for: key("between"))
                between.withLock { $0 = (outcome, cache.statistics.bytes, bytesOnDisk(path)) }
            }
        }
        feed(cache) { .probed(DiskSpace.Reading(free: 20_000 - 16_384, readOnly: false), held: $0) }
        let seen = try #require(between.withLock { $0 })
        #expect(seen.outcome == .noRoom("the disk cache's limit, lowered to 16384 bytes while its file system is full, is held by writes under way or too small"))
        #expect(seen.counted == 32_768 && seen.onDisk == 32_768)
        var statistics = cache.statistics
        #expect(statistics.effectiveLimitBytes == 16_384)
        #expect(statistics.evictions == 4)
        #expect(statistics.bytes == 16_384)
        #expect(statistics.spaceFaults == 1)
        #expect(statistics.fault?.contains("its disk quota is met") == true)
        let kept = names.filter { FileManager.default.fileExists(atPath: cache.path(for: key($0).digest)) }
        #expect(kept == ["e0", "e5", "e6", "e7"])
        #expect(bytesOnDisk(dir.path) == 16_384)
        // A write of two blocks evicts the two least recent and fits.
        #expect(cache.store(thumbnail(blocks: 2), for: key("new")) == .written)
        statistics = cache.statistics
        #expect(statistics.bytes == 16_384)
        #expect(statistics.evictions == 6)
        #expect(!cache.contains(key("e5")) && !cache.contains(key("e6")))
        // Larger than the lowered limit (not than the configured one): not written, nothing evicted.
        #expect(cache.store(thumbnail(blocks: 5), for: key("big")) == .noRoom("the disk cache's limit, lowered to 16384 bytes while its file system is full, is held by writes under way or too small"))
        #expect(cache.statistics.evictions == 6)
        #expect(said.lines.count == 1)
        // Space back for the whole limit: raised, said, and the configured limit holds again.
        feed(cache) { .probed(DiskSpace.Reading(free: 20_000 + 40_960, readOnly: false), held: $0) }
        #expect(cache.statistics.effectiveLimitBytes == 40_960)
        #expect(cache.statistics.fault == nil)
        #expect(said.lines.count == 2)
        #expect(cache.store(thumbnail(blocks: 5), for: key("big")) == .written)
        #expect(cache.statistics.bytes == 36_864)   // e7, e0, new and big
        #expect(cache.statistics.evictions == 6)
    }
}

/// Lines said, for a `warn`.
final class LockedLines: Sendable {
    private let storage = Mutex<[String]>([])
    var lines: [String] { storage.withLock { $0 } }
    func append(_ line: String) { storage.withLock { $0.append(line) } }
}
