import Foundation
import Rendering
import Synchronization
import Testing
import TestSupport
@testable import Thumbnails

/// The pipeline's rules alone, without sockets: renders are held by a `GatedRenderer` on one
/// worker, so coalescing, each waiter's own deadline, abandonment and the prefetch rules are
/// checked in an order the test decides.
@Suite struct PipelineTests {
    /// A pipeline with one render worker over a cache of its own, and requests for fixture photos.
    final class Rig: @unchecked Sendable {
        let cache = TemporaryDirectory("thumbd-pipeline")
        let renderer = GatedRenderer()
        let pipeline: ThumbnailPipeline
        let grid = GridSpec(name: "3", width: 393, height: 393, fit: .cover)

        /// `clock`: the system's uptime unless a test passes time by hand (`ManualClock`).
        init(deadlineSeconds: Double = 30, memoryLimitBytes: Int = 64 << 20,
             clock: any UptimeClock = SystemUptimeClock()) throws {
            var configuration = PipelineConfiguration(cacheDirectory: cache.path + "/cache")
            configuration.renderWorkers = 1
            configuration.renderDeadlineSeconds = deadlineSeconds
            configuration.memoryLimitBytes = memoryLimitBytes
            pipeline = try ThumbnailPipeline(configuration: configuration, renderer: renderer, clock: clock)
        }

        deinit {
            renderer.open()
            pipeline.stop()
        }

        /// The request for fixture `photo` at grid 3, keyed by the file's real size and mtime.
        func request(_ photo: String) -> ThumbnailRequest {
            let path = Fixtures.photos + "/" + photo
            var st = stat()
            _ = stat(path, &st)
            let key = CacheKey(assetPath: photo, source: SourceIdentity(st), spec: grid, format: .automatic, quality: 80)
            return ThumbnailRequest(key: key, source: DiskPath(path))
        }

        /// Starts a client request for `photo`; its outcome lands in the returned box.
        @discardableResult
        func ask(_ photo: String) -> Answer {
            let answer = Answer()
            let request = request(photo)
            switch pipeline.cached(request.key) {
            case .hit(let result): answer.set(.success(result))
            case .absent(let absence):
                answer.waiting = pipeline.thumbnail(for: request, after: absence) { answer.set($0) }
            }
            return answer
        }
    }

    /// One client's outcome, once it has come.
    final class Answer: @unchecked Sendable {
        private let outcome = Mutex<Result<ThumbnailResult, ThumbnailError>?>(nil)
        private let arrived = DispatchSemaphore(value: 0)
        /// Its place in the flight, for `abandon`.
        var waiting: ThumbnailPipeline.Waiting?

        func set(_ result: Result<ThumbnailResult, ThumbnailError>) {
            outcome.withLock { $0 = result }
            arrived.signal()
        }

        /// The outcome, waiting up to `seconds` for it; nil when none came.
        func wait(_ seconds: Double = 10) -> Result<ThumbnailResult, ThumbnailError>? {
            guard arrived.wait(timeout: .now() + seconds) == .success else { return nil }
            arrived.signal()
            return outcome.withLock { $0 }
        }

        /// The failure it came to, waiting up to `seconds`; nil for a success or none.
        func failure(_ seconds: Double = 10) -> ThumbnailError? {
            if case .failure(let error) = wait(seconds) { return error }
            return nil
        }

        /// The outcome if it has come, without waiting.
        var now: Result<ThumbnailResult, ThumbnailError>? { outcome.withLock { $0 } }
    }

    @Test func concurrentRequestsForOneKeyShareOneRender() throws {
        let rig = try Rig()
        let answers = (0..<3).map { _ in rig.ask("Landscape_1.jpg") }
        #expect(rig.renderer.waitForStarts(1))
        rig.renderer.open()
        let results = answers.compactMap { try? $0.wait()?.get() }
        #expect(results.count == 3)
        #expect(Set(results.compactMap(\.thumbnail?.bytes)).count == 1)
        #expect(results.allSatisfy { $0.tier == .miss && $0.width == 393 && $0.height == 393 && $0.thumbnail != nil })
        #expect(rig.renderer.started == ["Landscape_1.jpg"])
        #expect(rig.pipeline.statistics.renders.total == 1)
        #expect(rig.pipeline.statistics.renders.coalesced == 2)
    }

    @Test func eachWaiterGetsItsOwnDeadlineAndTheRenderIsStillStored() throws {
        let rig = try Rig(deadlineSeconds: 0.6)
        let started = DispatchTime.now()
        let early = rig.ask("Landscape_1.jpg")
        #expect(rig.renderer.waitForStarts(1))
        usleep(300_000)
        let late = rig.ask("Landscape_1.jpg")   // joins 0.3 s later: its deadline is 0.3 s later
        #expect(early.failure(2) == .deadlineExceeded)
        let failedAt = Double(DispatchTime.now().uptimeNanoseconds - started.uptimeNanoseconds) / 1e9
        #expect(failedAt >= 0.6)
        // The first deadline has passed; the late waiter's (0.3 s later) has not.
        usleep(100_000)
        #expect(late.now == nil)
        #expect(late.failure(2) == .deadlineExceeded)
        // The render goes on and stores its result for the next request.
        rig.renderer.open()
        #expect(eventually { rig.pipeline.isCached(rig.request("Landscape_1.jpg").key) })
        #expect(rig.renderer.started == ["Landscape_1.jpg"])
    }

    @Test func aQueuedRenderWhoseClientsAllLeftIsDropped() throws {
        let rig = try Rig()
        let holding = rig.ask("Landscape_1.jpg")
        #expect(rig.renderer.waitForStarts(1))
        let leaving = rig.ask("Landscape_6.jpg")
        let alsoLeaving = rig.ask("Landscape_6.jpg")
        rig.pipeline.abandon(try #require(leaving.waiting))
        rig.pipeline.abandon(try #require(alsoLeaving.waiting))
        rig.renderer.open()
        #expect(try holding.wait()?.get().tier == .miss)
        #expect(eventually { rig.pipeline.statistics.renders.abandoned == 1 })
        #expect(eventually { rig.pipeline.statistics.queuedForClients == 0 && rig.pipeline.statistics.running == 0 })
        #expect(rig.renderer.started == ["Landscape_1.jpg"])
        #expect(leaving.now == nil && alsoLeaving.now == nil)   // an abandoned waiter is never called
        #expect(rig.pipeline.statistics.flights == 0)
        // The flight is gone: the next client renders it.
        #expect(try rig.ask("Landscape_6.jpg").wait()?.get().tier == .miss)
    }

    @Test func aQueuedRenderRunsForTheClientThatStayed() throws {
        let rig = try Rig()
        rig.ask("Landscape_1.jpg")
        #expect(rig.renderer.waitForStarts(1))
        let leaving = rig.ask("Landscape_6.jpg")
        let staying = rig.ask("Landscape_6.jpg")
        rig.pipeline.abandon(try #require(leaving.waiting))
        rig.renderer.open()
        #expect(try staying.wait()?.get().tier == .miss)
        #expect(rig.renderer.started == ["Landscape_1.jpg", "Landscape_6.jpg"])
        #expect(rig.pipeline.statistics.renders.abandoned == 0)
    }

    @Test func aRenderWhoseWaiterTimedOutIsNotDroppedWhenItComesUp() throws {
        let rig = try Rig(deadlineSeconds: 0.3)
        rig.ask("Landscape_1.jpg")
        #expect(rig.renderer.waitForStarts(1))
        let timedOut = rig.ask("Landscape_6.jpg")
        #expect(timedOut.failure(2) == .deadlineExceeded)   // told 503: it will ask again
        rig.renderer.open()
        #expect(eventually { rig.pipeline.isCached(rig.request("Landscape_6.jpg").key) })
        #expect(rig.pipeline.statistics.renders.abandoned == 0)
    }

    @Test func clientMissesRunBeforeQueuedPrefetchAndPrefetchStoresOnDiskOnly() throws {
        let rig = try Rig()
        rig.ask("Landscape_1.jpg")
        #expect(rig.renderer.waitForStarts(1))
        let outcomes = Mutex<[String: WarmOutcome]>([:])
        for photo in ["Landscape_6.jpg", "kodak-dc210-1998-vga.jpg"] {
            rig.pipeline.prefetch(rig.request(photo), group: 1) { outcome in outcomes.withLock { $0[photo] = outcome } }
        }
        let client = rig.ask("galaxy-s-orientation6-gps-vga.jpg")   // asked after the prefetch items were queued
        #expect(rig.pipeline.statistics.queuedForPrefetch == 2)
        rig.renderer.open()
        #expect(try client.wait()?.get().tier == .miss)
        #expect(eventually { outcomes.withLock { $0.count } == 2 })
        #expect(rig.pipeline.statistics.flights == 0)
        #expect(rig.renderer.started.prefix(2) == ["Landscape_1.jpg", "galaxy-s-orientation6-gps-vga.jpg"])
        #expect(outcomes.withLock { $0.values.allSatisfy { $0 == .done } })
        // Prefetched: on disk, not in memory; a client gets it from disk (then memory).
        let prefetched = rig.request("Landscape_6.jpg").key
        #expect(!rig.pipeline.memory.contains(prefetched.digest))
        #expect(rig.pipeline.disk.contains(prefetched))
        #expect(try rig.ask("Landscape_6.jpg").wait()?.get().tier == .disk)
        #expect(try rig.ask("Landscape_6.jpg").wait()?.get().tier == .memory)
        #expect(rig.pipeline.statistics.renders.prefetch == 2)
    }

    @Test func aClientThatReachesAQueuedPrefetchItemLateMakesPrefetchCatchUp() throws {
        // Time passes by hand: the client is late by 300 ms whatever the machine's load.
        let clock = ManualClock()
        let rig = try Rig(clock: clock)
        rig.ask("Landscape_1.jpg")
        #expect(rig.renderer.waitForStarts(1))
        for photo in ["Landscape_6.jpg", "kodak-dc210-1998-vga.jpg", "fuji-sp2500-tiny-orientation6.jpg"] {
            rig.pipeline.prefetch(rig.request(photo), group: 1) { _ in }
        }
        // The second item was due 2 x 100 ms (the render time assumed) + 100 ms after it was
        // queued; the client reaches it later.
        clock.advance(milliseconds: 310)
        let other = rig.ask("galaxy-s-orientation6-gps-vga.jpg")   // a miss no job has queued
        let late = rig.ask("kodak-dc210-1998-vga.jpg")
        #expect(rig.pipeline.statistics.latePrefetch == 1)
        #expect(rig.pipeline.statistics.catchingUp)
        rig.renderer.open()
        #expect(try late.wait()?.get().tier == .miss)
        #expect(try other.wait()?.get().tier == .miss)
        #expect(eventually { rig.pipeline.statistics.flights == 0 && rig.renderer.started.count == 5 })
        // Two prefetch items for each client miss: Landscape_6, then the job's kodak, which runs
        // the client's kodak render queued behind galaxy there and then; then galaxy, then fuji.
        // Client misses first would give galaxy, kodak, Landscape_6, fuji; and a job's item that
        // only joined the client's queued render would leave kodak behind galaxy and fuji.
        #expect(rig.renderer.started == ["Landscape_1.jpg", "Landscape_6.jpg", "kodak-dc210-1998-vga.jpg",
                                         "galaxy-s-orientation6-gps-vga.jpg", "fuji-sp2500-tiny-orientation6.jpg"])
        #expect(rig.pipeline.statistics.renders.total == 5)   // kodak once
        #expect(rig.pipeline.memory.contains(rig.request("kodak-dc210-1998-vga.jpg").key.digest))   // a client waited
    }

    @Test func aDerivedRenderThatFailsIsMadeFromTheSourceAndCounted() throws {
        let rig = try Rig()
        rig.renderer.open()
        // A grid-1 "thumbnail" in memory that no decoder reads: grid 3 would be derived from it.
        let request = rig.request("Landscape_1.jpg")
        let donorKey = CacheKey(asset: request.key.assetPath, source: request.key.source, spec: GridSpec.defaults[0],
                                format: .automatic, quality: 80)
        rig.pipeline.memory.insert(Thumbnail(bytes: Array(repeating: 0x42, count: 4096), format: .jpeg, width: 1179, height: 786),
                                   for: donorKey.digest)
        let result = try #require(try rig.ask("Landscape_1.jpg").wait()?.get())
        #expect(result.tier == .miss && result.width == 393 && result.height == 393)
        let renders = rig.pipeline.statistics.renders
        #expect(renders.deriveFallbacks == 1)
        #expect(renders.derived == 0 && renders.total == 1 && renders.failed == 0)
        #expect(rig.renderer.started == ["Landscape_1.jpg"])   // from the source
    }

    @Test func aClientJoinsAPrefetchRenderUnderWayAndGetsItInMemory() throws {
        let rig = try Rig()
        let warmed = DispatchSemaphore(value: 0)
        rig.pipeline.prefetch(rig.request("Landscape_1.jpg"), group: 1) { _ in warmed.signal() }
        #expect(rig.renderer.waitForStarts(1))
        let client = rig.ask("Landscape_1.jpg")
        rig.renderer.open()
        #expect(try client.wait()?.get().tier == .miss)
        #expect(warmed.wait(timeout: .now() + 10) == .success)
        #expect(rig.renderer.started == ["Landscape_1.jpg"])
        #expect(rig.pipeline.statistics.renders.coalesced == 1)
        #expect(rig.pipeline.memory.contains(rig.request("Landscape_1.jpg").key.digest))
    }

    @Test func aPrefetchOfWhatIsCachedIsSkippedWithoutARender() throws {
        let rig = try Rig()
        rig.renderer.open()
        #expect(try rig.ask("Landscape_1.jpg").wait()?.get().tier == .miss)
        let outcome = Mutex<WarmOutcome?>(nil)
        let warmed = DispatchSemaphore(value: 0)
        rig.pipeline.prefetch(rig.request("Landscape_1.jpg"), group: 2) { result in
            outcome.withLock { $0 = result }
            warmed.signal()
        }
        #expect(warmed.wait(timeout: .now() + 10) == .success)
        #expect(outcome.withLock { $0 } == .skipped)
        #expect(rig.renderer.started == ["Landscape_1.jpg"])
        #expect(rig.pipeline.statistics.renders.prefetch == 0)
    }

    @Test func stoppingAPrefetchGroupDropsItsQueuedItems() throws {
        let rig = try Rig()
        rig.ask("Landscape_1.jpg")
        #expect(rig.renderer.waitForStarts(1))
        let called = Mutex(0)
        for photo in ["Landscape_6.jpg", "kodak-dc210-1998-vga.jpg"] {
            rig.pipeline.prefetch(rig.request(photo), group: 4) { _ in called.withLock { $0 += 1 } }
        }
        #expect(rig.pipeline.stopPrefetching(group: 4) == 2)
        rig.renderer.open()
        #expect(eventually { rig.pipeline.statistics.running == 0 })
        usleep(100_000)
        #expect(called.withLock { $0 } == 0)
        #expect(rig.renderer.started == ["Landscape_1.jpg"])
    }
}

/// A clock whose time moves only when a test says so (`advance`), from an uptime of 1 s.
final class ManualClock: UptimeClock {
    private let time = Mutex<UInt64>(1_000_000_000)
    func now() -> UInt64 { time.withLock { $0 } }
    func advance(milliseconds: UInt64) { time.withLock { $0 += milliseconds * 1_000_000 } }
}
