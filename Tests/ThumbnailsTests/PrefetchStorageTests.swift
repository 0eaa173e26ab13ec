import Foundation
import Rendering
import Synchronization
import Testing
import TestSupport
@testable import Thumbnails

/// A prefetch item is `done` only when a tier holds its thumbnail afterwards: the disk, or
/// memory when a client waited on the render (a prefetch alone writes to disk only). One that
/// no tier keeps is `notStored`, with the disk's reason; one that joined a render under way is
/// told when that render has ended and been stored, not before.
@Suite struct PrefetchStorageTests {
    typealias Rig = PipelineTests.Rig

    /// One item's outcome, once it has come.
    final class Outcome: Sendable {
        private let value = Mutex<WarmOutcome?>(nil)
        private let arrived = DispatchSemaphore(value: 0)
        var sink: WarmCompletion { { outcome in self.value.withLock { $0 = outcome }; self.arrived.signal() } }
        var now: WarmOutcome? { value.withLock { $0 } }

        /// The outcome, waiting up to 10 s; nil when none came.
        func wait() -> WarmOutcome? {
            guard arrived.wait(timeout: .now() + 10) == .success else { return nil }
            arrived.signal()
            return now
        }

        /// The reason of a `notStored` outcome, waiting for it; nil for any other.
        func notStoredReason() -> String? {
            if case .notStored(let why) = wait() { return why }
            return nil
        }
    }

    /// Removes the rig's cache together with the directory above it: the cache cannot be made again.
    func removeCacheAndParent(_ rig: Rig) throws {
        try FileManager.default.removeItem(atPath: rig.cache.path)
    }

    @Test func aPrefetchRenderThatNoTierKeepsIsNotStoredAndSaysWhy() throws {
        let rig = try Rig()
        rig.renderer.open()
        try removeCacheAndParent(rig)
        let outcome = Outcome()
        rig.pipeline.prefetch(rig.request("Landscape_1.jpg"), group: 1, outcome: outcome.sink)
        let why = try #require(outcome.notStoredReason())
        #expect(why.contains("cannot keep thumbnails"))
        #expect(why.contains("the directory that held the cache directory \(rig.cache.path)/cache is gone too"))
        #expect(!rig.pipeline.isCached(rig.request("Landscape_1.jpg").key))
        #expect(rig.pipeline.statistics.renders.prefetch == 1)
        #expect(rig.pipeline.statistics.flights == 0)
    }

    /// A client joined the prefetch's render: it went to memory, so a later GET hits it there.
    @Test func aPrefetchRenderAClientJoinedIsDoneWhenMemoryHoldsIt() throws {
        let rig = try Rig()
        try removeCacheAndParent(rig)
        let outcome = Outcome()
        rig.pipeline.prefetch(rig.request("Landscape_1.jpg"), group: 1, outcome: outcome.sink)
        #expect(rig.renderer.waitForStarts(1))
        let client = rig.ask("Landscape_1.jpg")
        rig.renderer.open()
        #expect(try client.wait()?.get().tier == .miss)
        #expect(outcome.wait() == .done)
        #expect(try rig.ask("Landscape_1.jpg").wait()?.get().tier == .memory)
    }

    /// The same with the memory tier off: nothing holds it.
    @Test func aPrefetchRenderAClientJoinedIsNotStoredWithTheMemoryTierOff() throws {
        let rig = try Rig(memoryLimitBytes: 0)
        try removeCacheAndParent(rig)
        let outcome = Outcome()
        rig.pipeline.prefetch(rig.request("Landscape_1.jpg"), group: 1, outcome: outcome.sink)
        #expect(rig.renderer.waitForStarts(1))
        let client = rig.ask("Landscape_1.jpg")
        rig.renderer.open()
        #expect(try client.wait()?.get().tier == .miss)
        #expect(outcome.notStoredReason()?.contains("cannot keep thumbnails") == true)
    }

    /// A pipeline with two render workers, so a prefetch item can come up while a client's
    /// render of the same key is under way, and join it.
    final class TwoWorkers: @unchecked Sendable {
        let cache = TemporaryDirectory("thumbd-prefetch-join")
        let renderer = GatedRenderer()
        let pipeline: ThumbnailPipeline

        init() throws {
            var configuration = PipelineConfiguration(cacheDirectory: cache.path + "/cache")
            configuration.renderWorkers = 2
            configuration.memoryLimitBytes = 0
            pipeline = try ThumbnailPipeline(configuration: configuration, renderer: renderer)
        }

        /// The request for fixture `photo` at grid 3, keyed by the file's real size and mtime.
        func request(_ photo: String) -> ThumbnailRequest {
            let path = Fixtures.photos + "/" + photo
            var st = stat()
            _ = stat(path, &st)
            let grid = GridSpec(name: "3", width: 393, height: 393, fit: .cover)
            let key = CacheKey(assetPath: photo, source: SourceIdentity(st), spec: grid, format: .automatic, quality: 80)
            return ThumbnailRequest(key: key, source: DiskPath(path))
        }

        deinit {
            renderer.open()
            pipeline.stop()
        }

        /// A client request for `photo`, answered into `answer`.
        func ask(_ photo: String) -> PipelineTests.Answer {
            let answer = PipelineTests.Answer()
            let asked = request(photo)
            if case .absent(let absence) = pipeline.cached(asked.key) {
                answer.waiting = pipeline.thumbnail(for: asked, after: absence) { answer.set($0) }
            }
            return answer
        }

        /// Prefetch items waiting on the flight of `photo`'s key.
        func joined(_ photo: String) -> Int {
            pipeline.flights.withLock { $0.flights[request(photo).key.digest]?.prefetches.count ?? 0 }
        }
    }

    @Test(arguments: [true, false])
    func aPrefetchThatJoinsAClientRenderIsToldOnceItIsStoredOrNot(diskWorks: Bool) throws {
        let two = try TwoWorkers()
        if !diskWorks { try FileManager.default.removeItem(atPath: two.cache.path) }
        let client = two.ask("Landscape_1.jpg")
        #expect(two.renderer.waitForStarts(1))
        let outcome = Outcome()
        two.pipeline.prefetch(two.request("Landscape_1.jpg"), group: 1, outcome: outcome.sink)
        #expect(eventually { two.joined("Landscape_1.jpg") == 1 })
        #expect(outcome.now == nil)   // the render it joined has not ended
        two.renderer.open()
        #expect(try client.wait()?.get().tier == .miss)
        if diskWorks {
            #expect(outcome.wait() == .done)
            #expect(two.pipeline.disk.contains(two.request("Landscape_1.jpg").key))
        } else {
            #expect(outcome.notStoredReason()?.contains("cannot keep thumbnails") == true)
        }
        #expect(two.renderer.started == ["Landscape_1.jpg"])   // one render, shared
        #expect(two.pipeline.statistics.flights == 0)
    }
}
