import Foundation
import Testing
import TestSupport
import ThumbServer
import ThumbdClient

/// `ThumbdCachingManager` and `ThumbdPreheatController` against a real thumbd whose renders a
/// `GatedRenderer` holds (one worker), so jobs stay running while the test counts them on the
/// server; the per-client limits surfaced as 429 with their delay; signed URLs and a client key.
@Suite(.serialized) struct ThumbdCachingTests {
    static let small = Photos.path("photos/kodak-dc210-1998-vga.jpg", fixture: "kodak-dc210-1998-vga.jpg")
    static let nikon = Photos.path("photos/nikon-d40-orientation6.jpg", fixture: "Landscape_6.jpg")

    /// `count` copies of a 640x480 corpus photo, `IMG_000.jpg`…, each a minute newer than the last.
    static func library(_ count: Int, folder: String = "") throws -> TemporaryDirectory {
        let root = TemporaryDirectory("thumbd-client-caching")
        for n in 0..<count {
            try Photos.add(folder + String(format: "IMG_%03d.jpg", n), from: small, to: root,
                           modified: Date(timeIntervalSince1970: 1_600_000_000 + Double(n) * 60))
        }
        return root
    }

    /// A server of one gated render worker (renders wait until the test opens the gate).
    static func gatedServer(_ root: TemporaryDirectory, configure: (inout Config) -> Void = { _ in }) throws -> (TestServer, GatedRenderer) {
        let renderer = GatedRenderer()
        let server = try TestServer(library: root.path, renderer: renderer) { config in
            config.renderWorkers = 1
            configure(&config)
        }
        return (server, renderer)
    }

    @Test func assetJobsStartOnceAndStopWhenAllTheirAssetsAreLetGo() async throws {
        let root = try Self.library(6)
        let (server, renderer) = try Self.gatedServer(root)
        defer { renderer.open() }
        let library = server.client()
        let assets = try await library.fetchAssets(sort: .oldest).assets
        let caching = ThumbdCachingManager(library: library)
        let first = try #require(try await caching.startCaching(assets: Array(assets[0..<3]), grid: .three))
        #expect(first.total == 3 && first.state == .running && first.grid == .three)
        // 0-2 are being warmed: only 3 is posted.
        let second = try #require(try await caching.startCaching(assets: Array(assets[0..<4]), grid: .three))
        #expect(second.total == 1)
        #expect(try await caching.startCaching(assets: Array(assets[1..<3]), grid: .three) == nil)
        #expect(try await library.stats().prefetch.jobs == 2)   // jobs started
        // Letting 0 and 1 go leaves the first job one asset: it runs on.
        #expect(try await caching.stopCaching(assets: Array(assets[0..<2]), grid: .three).isEmpty)
        #expect(try await caching.job(id: first.id).state == .running)
        let stopped = try await caching.stopCaching(assets: [assets[2]], grid: .three)
        // Its 3 items dropped (the one rendering behind the gate counts cancelled too).
        #expect(stopped.map(\.id) == [first.id] && stopped.first?.state == .cancelled && stopped.first?.cancelled == 3)
        #expect(try await caching.job(id: second.id).state == .running)
        #expect(await caching.jobIDs == [second.id])
        let all = try await caching.stopCachingAll()
        #expect(all.map(\.id) == [second.id] && all.first?.state == .cancelled && all.first?.cancelled == 1)
        let stats = try await library.stats()
        #expect(stats.prefetch.jobs == 2 && stats.prefetch.cancelled == 4 && stats.prefetch.done == 0)
        #expect(await caching.jobIDs.isEmpty)
    }

    @Test func aRangeJobIsThisClientsAlone() async throws {
        let root = try Self.library(6)
        let (server, renderer) = try Self.gatedServer(root)
        defer { renderer.open() }
        let caching = ThumbdCachingManager(library: server.client(clientID: "phone-1"))
        let job = try await caching.startCaching(range: 2..<40, sort: .newest, focus: 3, grid: .five)
        #expect(job.total == 4 && job.state == .running)   // clamped to the 6 items
        #expect(try await caching.job(id: job.id).id == job.id)
        // Another client neither sees nor stops it.
        let other = ThumbdCachingManager(library: server.client(clientID: "phone-2"))
        await #expect { _ = try await other.job(id: job.id) } throws: { ($0 as? ThumbdError)?.serverError?.status == 404 }
        #expect(try await other.stopCachingAll().isEmpty)
        #expect(try await caching.job(id: job.id).state == .running)
        #expect(try await caching.stopCaching(job: job.id)?.state == .cancelled)
        #expect(try await caching.stopCaching(job: 1) == nil)   // a job the server does not know
    }

    @Test func aPrefetchPastAClientLimitIs429WithItsDelay() async throws {
        let root = try Self.library(8)
        let (server, renderer) = try Self.gatedServer(root) { config in
            config.prefetchClientJobs = 1
            config.prefetchClientItemsPerMinute = 4
        }
        defer { renderer.open() }
        let library = server.client()
        let assets = try await library.fetchAssets().assets
        let caching = ThumbdCachingManager(library: library)
        let spentAt = ContinuousClock.now
        try await caching.startCaching(assets: Array(assets[0..<3]), grid: .three)
        await #expect {
            try await caching.startCaching(assets: [assets[3]], grid: .three)
        } throws: { error in
            guard case .server(let answer) = error as? ThumbdError else { return false }
            return answer.status == 429 && answer.code == "too_many_jobs" && answer.retryAfter == .seconds(1)
        }
        try await caching.stopCachingAll()
        // 3 of the minute's 4 items are spent; 4 more need 3 more, 15 s each: 45 s, less what
        // has passed since (seconds on a loaded machine running the whole suite).
        await #expect {
            try await caching.startCaching(assets: Array(assets[3..<7]), grid: .three)
        } throws: { error in
            guard let answer = (error as? ThumbdError)?.serverError, answer.code == "rate_limited",
                  let delay = answer.retryAfter else { return false }
            let passed = ContinuousClock.now - spentAt
            return answer.status == 429 && (Duration.seconds(44) - passed...Duration.seconds(45)).contains(delay)
        }
        let stats = try await library.stats()
        #expect(stats.prefetch.refused.tooManyJobs == 1 && stats.prefetch.refused.rateLimited == 1)
        #expect(await caching.jobIDs.isEmpty)
    }

    @Test func signedURLsAndAClientKeyReachOnlyTheKeysFolder() async throws {
        let root = try Self.library(3, folder: "alice/")
        try Photos.add("bob/b.jpg", from: Self.nikon, to: root)
        let server = try TestServer(library: root.path) { config in
            config.clientKeys = [ThumbdLibraryTests.aliceKey]   // prefix: none; a folder below
            config.clientKeys[0].prefix = [Array("alice".utf8)]
            config.signingKeys = ["k1:" + String(repeating: "5c", count: 32)]
        }
        let library = server.client(clientKey: "alice-phone-key")
        let assets = try await library.fetchAssets().assets
        // One EXIF date for all three copies: ties go by path.
        #expect(assets.map(\.path) == ["alice/IMG_000.jpg", "alice/IMG_001.jpg", "alice/IMG_002.jpg"])
        let url = try #require(assets[0].thumbnails[.three])
        let query = try #require(URLComponents(url: url, resolvingAgainstBaseURL: false)?.queryItems).map(\.name)
        #expect(Set(query) == ["v", "exp", "kid", "sig"])
        let results = try await ThumbdImageManagerTests.results(ThumbdImageManager(library: library).requestImage(for: assets[0], grid: .three))
        // 640x480 at grid 3 (cover 393): a 393x393 centre square.
        #expect(ThumbdImageManagerTests.header(results.last) == ImageHeader(format: "jpeg", width: 393, height: 393))
        // The same asset without its signature is refused, as the error says.
        var unsigned = assets[0]
        unsigned.thumbnails[.three] = URL(string: url.absoluteString.components(separatedBy: "&exp=")[0])
        await #expect {
            _ = try await ThumbdImageManagerTests.results(ThumbdImageManager(library: library).requestImage(for: unsigned, grid: .three))
        } throws: { ($0 as? ThumbdError)?.serverError?.code == "signature_required" }
        // Prefetch with the key: its folder's assets, and 403 for a path outside it.
        let caching = ThumbdCachingManager(library: library)
        #expect(try await caching.startCaching(assets: assets, grid: .five)?.total == 3)
        var bob = assets[0]
        bob.path = "bob/b.jpg"
        bob.url = "bob/b.jpg"
        await #expect {
            try await caching.startCaching(assets: [bob], grid: .five)
        } throws: { ($0 as? ThumbdError)?.serverError?.code == "outside_prefix" }
        // Without the key: 401, told apart from a network failure.
        await #expect { _ = try await server.client().fetchAssets() } throws: {
            if case .unauthorized = $0 as? ThumbdError { return true }
            return false
        }
    }

    @Test func thePreheatControllerStartsAndStopsRangeJobsAsTheViewMoves() async throws {
        let root = try Self.library(100)
        let (server, renderer) = try Self.gatedServer(root)
        defer { renderer.open() }
        let library = server.client()
        let caching = ThumbdCachingManager(library: library)
        let preheat = ThumbdPreheatController(caching: caching, grid: .three, columns: 3, itemCount: 100)
        // The table's first case ("scrolling down and back up"), against the server.
        await preheat.update(top: 0, height: 7)
        await preheat.settle()
        let ids = await caching.jobIDs
        #expect(ids.count == 1)
        let first = try await caching.job(id: ids[0])
        #expect(first.total == 33 && first.state == .running)
        await preheat.update(top: 2, height: 7)         // not a third of a viewport: nothing
        await preheat.update(top: 2.4, height: 7)       // rows 11-13: 6 items
        await preheat.update(top: 10, height: 7)        // rows 13-21: 24 items
        await preheat.settle()
        let three = await caching.jobIDs
        let started = try await library.stats().prefetch.jobs
        #expect(three.count == 3 && started == 3)
        await preheat.update(top: 20, height: 7)        // rows 21-31 start; 0-11 and 11-13 stop
        await preheat.settle()
        // The jobs by their item counts (their ids count up in the order the server got them).
        var byTotal: [Int: ThumbdPrefetchJob] = [:]
        for id in Set(three + (await caching.jobIDs)) { let job = try await caching.job(id: id); byTotal[job.total] = job }
        #expect(try await library.stats().prefetch.jobs == 4)
        #expect(byTotal.keys.sorted() == [6, 24, 30, 33])
        #expect(byTotal[33]?.state == .cancelled && byTotal[6]?.state == .cancelled)
        #expect(byTotal[24]?.state == .running && byTotal[30]?.state == .running)
        #expect(await caching.jobIDs.sorted() == [byTotal[24]!.id, byTotal[30]!.id].sorted())
        // A column switch: every job stops.
        await preheat.reset(grid: .five, columns: 5, itemCount: 100, sort: .newest)
        #expect(try await caching.job(id: byTotal[24]!.id).state == .cancelled)
        #expect(try await caching.job(id: byTotal[30]!.id).state == .cancelled)
        #expect(await caching.jobIDs.isEmpty)
        #expect(await preheat.lastError == nil)
    }
}
