import Foundation
import Testing
import TestSupport
import ThumbHash
@testable import ThumbdClient

/// `ThumbdImageManager` against a real thumbd: the placeholder, then the thumbnail at its exact
/// size; the memory cache; coalescing; cancellation reaching the server.
@Suite(.serialized) struct ThumbdImageManagerTests {
    /// nikon-d40-orientation6.jpg: 3008x2000 stored, EXIF orientation 6, so 2000x3008 displayed.
    static let nikon = Photos.path("photos/nikon-d40-orientation6.jpg", fixture: "Landscape_6.jpg")
    static let pixel = Photos.path("photos/google-pixel-12mp-gps.jpg", fixture: "Landscape_1.jpg")

    /// Every result of a request, in order.
    static func results(_ stream: AsyncThrowingStream<ThumbdImageResult, any Error>) async throws -> [ThumbdImageResult] {
        var results: [ThumbdImageResult] = []
        for try await result in stream { results.append(result) }
        return results
    }

    /// Whether a cancelled request's iteration ended without a thumbnail: at nil (the stream
    /// saw the cancel) or with `CancellationError` (the download did first).
    static func endedWithoutThumbnail(_ task: Task<[ThumbdImageResult], any Error>) async -> Bool {
        do {
            return try await task.value.allSatisfy(\.isDegraded)
        } catch {
            return error is CancellationError
        }
    }

    static func header(_ result: ThumbdImageResult?) -> ImageHeader? {
        guard case .thumbnail(let thumbnail) = result else { return nil }
        return ImageHeader(Array(thumbnail.data))
    }

    @Test func thePlaceholderComesFirstThenTheThumbnailAtItsExactSize() async throws {
        let root = try Photos.library([("nikon.jpg", Self.nikon)])
        let server = try TestServer(library: root.path) { $0.thumbhashBackfill = false }
        let library = server.client()
        let listed = try await library.fetchAssets()
        let first = try #require(listed.first)
        #expect(first.thumbhash == nil)   // nothing rendered yet, no backfill
        // Without a placeholder: the thumbnail alone. Grid 5: a centre square of 236 px.
        let five = try await Self.results(ThumbdImageManager(library: library).requestImage(for: first, grid: .five))
        #expect(five.count == 1 && Self.header(five.first) == ImageHeader(format: "jpeg", width: 236, height: 236))

        // That render made the placeholder: published as the listing's next generation, which
        // the change feed brings (a changed item); given first from then on, degraded.
        var changes = library.changes(since: listed).makeAsyncIterator()
        let details = try #require(try await changes.next())
        #expect(details.changedIndexes == IndexSet([0]) && details.removedIndexes.isEmpty && details.insertedIndexes.isEmpty)
        let asset = try #require(details.fetchResultAfterChanges.first)
        #expect(try await library.page().assets.first?.thumbhash == asset.thumbhash)
        let hash = try #require(asset.thumbhash)
        let manager = ThumbdImageManager(library: library)
        let results = try await Self.results(manager.requestImage(for: asset, grid: .one))
        #expect(results.map(\.isDegraded) == [true, false])
        guard case .placeholder(let placeholder) = results.first else { Issue.record("no placeholder first"); return }
        // Grid 5's render made it of the whole photo, not its centre square: 2000x3008 shown,
        // 66 or 67 x 100 px, 5 terms across and 7 down, so 32 x 5 / 7 = 22.9 -> 23 x 32 px decoded.
        #expect(placeholder.width == 23 && placeholder.height == 32 && placeholder.rgba.count == 23 * 32 * 4)
        #expect(placeholder.rgba == ThumbHash.decode(hash)?.rgba)
        // Grid 1 (contain 1179x2358) of 2000x3008 displayed: width 1179, height 3008 x 0.5895 = 1773.
        #expect(Self.header(results.last) == ImageHeader(format: "jpeg", width: 1179, height: 1773))
        guard case .thumbnail(let thumbnail) = results.last else { return }
        #expect(thumbnail.contentType == "image/jpeg" && thumbnail.cacheStatus == "MISS" && thumbnail.renderMilliseconds != nil)
        #expect(manager.memoryCacheBytes == thumbnail.data.count)

        // Asked again: from memory, the thumbnail alone, and the server is not asked.
        let before = try await library.stats()
        let again = try await Self.results(manager.requestImage(for: asset, grid: .one))
        #expect(again == [.thumbnail(thumbnail)])
        let after = try await library.stats()
        #expect(after.requests.total == before.requests.total + 1)   // the /stats call alone
    }

    @Test func identicalRequestsShareOneDownloadAndOneLeavingKeepsItForTheOther() async throws {
        let root = try Photos.library([("nikon.jpg", Self.nikon)])
        let renderer = GatedRenderer()
        let server = try TestServer(library: root.path, renderer: renderer) { $0.renderWorkers = 1 }
        let library = server.client()
        let asset = try #require(try await library.page().assets.first)
        let manager = ThumbdImageManager(library: library)
        let kept = Task { try await Self.results(manager.requestImage(for: asset, grid: .three)) }
        let left = Task { try await Self.results(manager.requestImage(for: asset, grid: .three)) }
        #expect(await offThePool { renderer.waitForStarts(1) })
        #expect(await manager.downloadsInFlight == 1)
        left.cancel()
        #expect(await Self.endedWithoutThumbnail(left))
        #expect(await manager.downloadsInFlight == 1)
        renderer.open()
        let results = try await kept.value
        #expect(Self.header(results.last) == ImageHeader(format: "jpeg", width: 393, height: 393))
        let stats = try await library.stats()
        #expect(stats.requests[200] == 2 && stats.requests[499] == 0)   // the listing and one thumbnail
        #expect(stats.renders.total == 1 && renderer.started == ["nikon.jpg"])
    }

    @Test func aCancelledRequestReachesTheServerWhichDropsItsRender() async throws {
        let root = try Photos.library([("a.jpg", Self.nikon), ("b.jpg", Self.pixel)])
        let renderer = GatedRenderer()
        let server = try TestServer(library: root.path, renderer: renderer) { $0.renderWorkers = 1 }
        let library = server.client()
        let assets = try await library.page(sort: .oldest).assets
        let a = try #require(assets.first { $0.path == "a.jpg" }), b = try #require(assets.first { $0.path == "b.jpg" })
        let manager = ThumbdImageManager(library: library)
        let holding = Task { try await Self.results(manager.requestImage(for: a, grid: .three)) }
        #expect(await offThePool { renderer.waitForStarts(1) })
        // b's render waits behind a's on the one worker; its cell scrolls away.
        let leaving = Task { try await Self.results(manager.requestImage(for: b, grid: .three)) }
        #expect(try await eventually { try await library.stats().renders.queued == 1 })
        leaving.cancel()
        #expect(await Self.endedWithoutThumbnail(leaving))
        // The server saw its client go (499); the render it queued is dropped when the worker
        // comes to it (abandoned), never run.
        #expect(try await eventually { try await library.stats().requests[499] == 1 })
        renderer.open()
        #expect(Self.header(try await holding.value.last) == ImageHeader(format: "jpeg", width: 393, height: 393))
        #expect(try await eventually {
            let stats = try await library.stats()
            return stats.renders.abandoned == 1 && stats.renders.queued == 0 && stats.renders.inFlight == 0
        })
        #expect(renderer.started == ["a.jpg"])
        #expect(await manager.downloadsInFlight == 0)
    }

    /// On FoundationNetworking a connection's first request spins a core while it waits
    /// (`ThumbdDownloadQueue`): the first thumbnail goes over a connection a no-op opened, one
    /// connection for both.
    @Test func theFirstDownloadGoesOverAConnectionANoOpOpened() async throws {
        let root = try Photos.library([("nikon.jpg", Self.nikon)])
        let server = try TestServer(library: root.path)
        let library = server.client()
        let asset = try #require(try await library.page().assets.first)
        let before = try await library.stats()
        let results = try await Self.results(ThumbdImageManager(library: library).requestImage(for: asset, grid: .three))
        #expect(Self.header(results.last) == ImageHeader(format: "jpeg", width: 393, height: 393))
        let after = try await library.stats()
        #expect(after.connections.total - before.connections.total == 1)
        #if canImport(FoundationNetworking)
        #expect(after.requests[204] - before.requests[204] == 1)   // OPTIONS /
        #else
        #expect(after.requests[204] - before.requests[204] == 0)
        #endif
        #expect(after.requests[200] - before.requests[200] == 2)   // the thumbnail, the first /stats
    }

    /// The memory cache (1000 bytes), by table: inserts (`key`: 100 bytes, `key:bytes`) and reads
    /// (`?key`) in, the keys held after out.
    @Test(arguments: [
        // Ten of 100 in 1000: all fit.
        (["a", "b", "c", "d", "e", "f", "g", "h", "i", "j"], ["a", "b", "c", "d", "e", "f", "g", "h", "i", "j"]),
        // An eleventh pushes out the least recently used (a).
        (["a", "b", "c", "d", "e", "f", "g", "h", "i", "j", "k"], ["b", "c", "d", "e", "f", "g", "h", "i", "j", "k"]),
        // Reading a first makes b the least recently used.
        (["a", "b", "c", "d", "e", "f", "g", "h", "i", "j", "?a", "k"], ["a", "c", "d", "e", "f", "g", "h", "i", "j", "k"]),
        // Over a tenth of the limit: not kept, nothing evicted.
        (["a", "b:101"], ["a"]),
        // The same key again replaces it, counted once: b to k fit with a.
        (["a", "a", "b", "c", "d", "e", "f", "g", "h", "i"], ["a", "b", "c", "d", "e", "f", "g", "h", "i"]),
    ])
    func theMemoryCacheKeepsTheMostRecentlyUsedWithinItsBytes(steps: [String], held: [String]) {
        let limit = 1000
        let cache = ThumbdMemoryCache(limitBytes: limit)
        func thumbnail(_ bytes: Int) -> ThumbdThumbnail {
            ThumbdThumbnail(data: Data(count: bytes), contentType: "image/jpeg", url: URL(string: "http://x/")!,
                            cacheStatus: nil, renderMilliseconds: nil)
        }
        for step in steps {
            if step.hasPrefix("?") { _ = cache[String(step.dropFirst())]; continue }
            let parts = step.split(separator: ":")
            cache.insert(thumbnail(parts.count > 1 ? Int(parts[1])! : 100), for: String(parts[0]))
        }
        let keys = ["a", "b", "c", "d", "e", "f", "g", "h", "i", "j", "k"].filter { cache[$0] != nil }
        #expect(keys == held)
        #expect(cache.bytes <= limit && cache.count == held.count)
    }
}
