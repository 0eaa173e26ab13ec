import Foundation
import Testing
import TestSupport
import ThumbServer
import ThumbdClient

/// `ThumbdLibrary` against a real thumbd: the listing by cursor while the library changes, an
/// asset's fields against the source's header, the change details of a re-list, the errors.
@Suite struct ThumbdLibraryTests {
    /// 2020-01-01 plus `hours`: the `taken` of photos without an EXIF date (their file time).
    static func hour(_ hours: Int) -> Date { Date(timeIntervalSince1970: 1_577_836_800 + Double(hours) * 3600) }

    /// Six corpus photos without an EXIF date, `p1` the oldest and `p6` the newest.
    static func sixPhotos() throws -> TemporaryDirectory {
        let root = TemporaryDirectory("thumbd-client-listing")
        for n in 1...6 {
            try Photos.add("p\(n).jpg", from: Photos.path("photos/Landscape_\(n).jpg", fixture: "Landscape_1.jpg"),
                           to: root, modified: hour(n))
        }
        return root
    }

    @Test func pagesByCursorSeeEveryAssetOnceWhileTheLibraryChanges() async throws {
        let root = try Self.sixPhotos()
        let server = try TestServer(library: root.path)
        let library = server.client()
        var seen: [String] = []
        var generations: [Int] = []
        var changed = false
        for try await page in library.pages(sort: .newest, pageSize: 2) {
            seen += page.assets.map(\.path)
            generations.append(page.generation)
            if !changed {
                // After the first page: a photo newer than all (before the cursor) arrives, and
                // one not yet seen goes (it was not present throughout). Offsets would now show
                // p5 again.
                try Photos.add("p7.jpg", from: Photos.path("photos/Landscape_7.jpg", fixture: "Landscape_1.jpg"),
                               to: root, modified: Self.hour(7))
                try FileManager.default.removeItem(atPath: root.path + "/p2.jpg")
                server.rescan()
                changed = true
            }
        }
        #expect(seen == ["p6.jpg", "p5.jpg", "p4.jpg", "p3.jpg", "p1.jpg"])
        #expect(generations.count == 3 && generations[0] != generations[1] && generations[1] == generations[2])
        let now = try await library.fetchAssets(sort: .oldest)
        #expect(now.map(\.path) == ["p1.jpg", "p3.jpg", "p4.jpg", "p5.jpg", "p6.jpg", "p7.jpg"])
        #expect(now.generation == generations[1])
    }

    @Test func anAssetCarriesTheSourcesSizeDateAndVersionedURLs() async throws {
        let source = Photos.path("photos/nikon-d40-orientation6.jpg", fixture: "Landscape_6.jpg")
        let dated = Photos.path("photos/kodak-dc210-1998-vga.jpg", fixture: "kodak-dc210-1998-vga.jpg")
        let root = try Photos.library([("2024/nikon d40 #1.jpg", source), ("kodak.jpg", dated)])
        let server = try TestServer(library: root.path)
        let page = try await server.client().page(sort: .oldest, limit: 10)
        #expect(page.total == 2 && page.offset == 0 && page.next == nil)
        let kodak = try #require(page.assets.first { $0.path == "kodak.jpg" })
        // EXIF DateTimeOriginal 2000:10:26 16:46:51, without an offset: read as UTC.
        #expect(kodak.taken == Date(timeIntervalSince1970: 972_578_811))
        let nikon = try #require(page.assets.first { $0.path == "2024/nikon d40 #1.jpg" })
        let size = try #require(VipsHeader.displaySize(source))
        #expect(nikon.pixelWidth == size.width && nikon.pixelHeight == size.height)
        #expect(nikon.url == "2024/nikon%20d40%20%231.jpg" && nikon.id == nikon.url)
        #expect(nikon.mediaType == .photo && nikon.duration == nil)
        #expect(nikon.bytes == (try FileManager.default.attributesOfItem(atPath: source)[.size] as? Int))
        let three = try #require(nikon.thumbnails[.three])
        #expect(three.absoluteString.hasPrefix("http://127.0.0.1:\(server.port)/thumbnails/3/2024/nikon%20d40%20%231.jpg?v="))
        #expect(Set(nikon.thumbnails.keys) == [.one, .three, .five])
    }

    @Test func changesAreGivenAsRemovedInsertedAndChangedIndexes() async throws {
        let root = try Self.sixPhotos()
        let server = try TestServer(library: root.path)
        let library = server.client()
        let before = try await library.fetchAssets(sort: .newest)
        #expect(before.map(\.path) == ["p6.jpg", "p5.jpg", "p4.jpg", "p3.jpg", "p2.jpg", "p1.jpg"])
        let changes = library.changes(since: before)
        var iterator = changes.makeAsyncIterator()
        // The client waits on the change feed (a long-poll), not on a timer.
        // The async eventually (never block the pool), and a long bound: under the whole suite the
        // task that sends the request may wait its turn on the pool for seconds.
        #expect(await eventually(within: 60) { () async in server.thumbd.service.waitingChangeRequests == 1 })
        // p7 arrives at the top, p3 goes, p5 is replaced in place (another photo, same time).
        try Photos.add("p7.jpg", from: Photos.path("photos/Landscape_7.jpg", fixture: "Landscape_1.jpg"),
                       to: root, modified: Self.hour(7))
        try FileManager.default.removeItem(atPath: root.path + "/p3.jpg")
        try Photos.add("p5.jpg", from: Photos.path("photos/Portrait_5.jpg", fixture: "Landscape_6.jpg"),
                       to: root, modified: Self.hour(5))
        server.rescan()
        let details = try #require(try await iterator.next())
        #expect(details.fetchResultAfterChanges.map(\.path) == ["p7.jpg", "p6.jpg", "p5.jpg", "p4.jpg", "p2.jpg", "p1.jpg"])
        #expect(details.fetchResultAfterChanges.generation == server.thumbd.service.index.generation)
        #expect(details.removedIndexes == IndexSet([3]))     // p3, 4th before
        #expect(details.insertedIndexes == IndexSet([0]))    // p7, first after
        #expect(details.changedIndexes == IndexSet([2]))     // p5, 3rd after: new versions
        #expect(!details.hasMoves)
        let old = before[1], new = details.fetchResultAfterChanges[2]
        #expect(old.thumbnails[.three] != new.thumbnails[.three] && old.bytes != new.bytes)
    }

    /// A generation the server does not know (410 `generation_too_old`: here one it never gave,
    /// as after a restart) is not an error: the listing is fetched again and the two diffed.
    @Test func aGenerationTooOldListsAgainAndGivesTheDifference() async throws {
        let root = try Self.sixPhotos()
        let server = try TestServer(library: root.path)
        let library = server.client()
        var before = try await library.fetchAssets(sort: .newest)
        before.generation = 1
        try FileManager.default.removeItem(atPath: root.path + "/p6.jpg")
        server.rescan()
        var iterator = library.changes(since: before).makeAsyncIterator()
        let details = try #require(try await iterator.next())
        #expect(details.fetchResultAfterChanges.map(\.path) == ["p5.jpg", "p4.jpg", "p3.jpg", "p2.jpg", "p1.jpg"])
        #expect(details.removedIndexes == IndexSet([0]) && details.insertedIndexes.isEmpty && details.changedIndexes.isEmpty)
        #expect(details.fetchResultAfterChanges.generation == server.thumbd.service.index.generation)
    }

    @Test func aMoveIsGivenAsAMoveNotARemovalAndInsertion() {
        func asset(_ name: String) -> ThumbdAsset {
            ThumbdAsset(path: name, url: name, bytes: 1, mediaType: .photo, duration: nil, pixelWidth: 1, pixelHeight: 1,
                        taken: Date(timeIntervalSince1970: 0), modified: Date(timeIntervalSince1970: 0), thumbhash: nil,
                        thumbnails: [:])
        }
        let before = ThumbdFetchResult(assets: ["a", "b", "c", "d"].map(asset), sort: .newest, generation: 1)
        let after = ThumbdFetchResult(assets: ["b", "c", "a", "e"].map(asset), sort: .newest, generation: 2)
        let details = ThumbdChangeDetails(from: before, to: after)
        #expect(details.removedIndexes == IndexSet([3]) && details.insertedIndexes == IndexSet([3]))
        #expect(details.moves.map(\.from) == [0] && details.moves.map(\.to) == [2])
        #expect(details.changedIndexes.isEmpty)
    }

    // MARK: - Errors a caller can act on

    /// SHA-256 of `alice-phone-key` and of `old-key` (`printf %s KEY | sha256sum`).
    static let aliceKey = ClientKey(id: "alice-phone", sha256: hex("805df7cb96e8ea7f3c00ce18aa1488dca42d944ccf36cfff6d660df011b5e297"))
    static let oldKey = ClientKey(id: "old", sha256: hex("762c08fc17a1cc5f00d248f8b50f2f2f4d17ff2934ac31e64deacb3f5bb3f2ec"),
                                  expires: 1_700_000_000)

    static func hex(_ text: String) -> [UInt8] {
        var bytes: [UInt8] = []
        var index = text.startIndex
        while index < text.endIndex {
            let next = text.index(index, offsetBy: 2)
            bytes.append(UInt8(text[index..<next], radix: 16)!)
            index = next
        }
        return bytes
    }

    @Test func aMissingOrExpiredKeyIsUnauthorizedNotANetworkFailure() async throws {
        let root = try Self.sixPhotos()
        let server = try TestServer(library: root.path) { $0.clientKeys = [Self.aliceKey, Self.oldKey] }
        await #expect {
            _ = try await server.client().page()
        } throws: { error in
            guard case .unauthorized(let answer) = error as? ThumbdError else { return false }
            return answer.status == 401 && answer.code == "unauthorized" && !answer.message.isEmpty
        }
        await #expect {
            _ = try await server.client(clientKey: "old-key").page()
        } throws: { error in
            (error as? ThumbdError)?.serverError?.code == "key_expired"
        }
        let page = try await server.client(clientKey: "alice-phone-key").page()
        #expect(page.total == 6)
        // Nothing listens on a port taken and closed again: a network failure, not a 401.
        let closed = try #require(LoopbackPorts.free(1)?.first)
        await #expect {
            _ = try await ThumbdLibrary(baseURL: URL(string: "http://127.0.0.1:\(closed)/")!).page()
        } throws: { error in
            guard case .network(let code, _) = error as? ThumbdError else { return false }
            return code == URLError.cannotConnectToHost.rawValue
        }
    }

    @Test func aCursorOfTheOtherSortIsBadCursor() async throws {
        let root = try Self.sixPhotos()
        let server = try TestServer(library: root.path)
        let library = server.client()
        let newest = try await library.page(sort: .newest, limit: 2)
        let cursor = try #require(newest.next)
        await #expect {
            _ = try await library.page(sort: .oldest, after: cursor, limit: 2)
        } throws: { error in
            error as? ThumbdError == .server(ThumbdServerError(status: 400, code: "bad_cursor",
                                                              message: (error as? ThumbdError)?.serverError?.message ?? ""))
        }
    }

    @Test func statsDecodeTheServersCounters() async throws {
        let root = try Self.sixPhotos()
        let server = try TestServer(library: root.path) { $0.adminToken = "the-admin-token" }
        let library = server.client()
        await #expect {
            _ = try await library.stats()
        } throws: { error in
            if case .unauthorized = error as? ThumbdError { return true }
            return false
        }
        let stats = try await library.stats(adminToken: "the-admin-token")
        #expect(stats.library.assets == 6)
        #expect(stats.requests[401] == 1)
        #expect(stats.memoryCache.limitBytes == server.thumbd.config.memoryCacheBytes)
    }
}
