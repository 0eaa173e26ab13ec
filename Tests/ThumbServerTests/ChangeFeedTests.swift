import Foundation
#if canImport(Glibc)
import Glibc
#endif
import HTTP
@testable import Library
import Rendering
import Testing
import TestSupport
@testable import ThumbServer

/// The change feed (docs/API.md, "Change feed"; issue 28): `GET /assets/changes?since=G` answers
/// what changed in the client's listing since generation G, as removed items (indexes in the
/// listing at G) and inserted and changed items (indexes now), that turn the listing at G into
/// the listing now; 410 when G is too old; a long-poll (`wait`) parked without a thread and
/// answered when the generation moves, at most `maxListingWaiters` at once. In-process, with
/// `rescan()` as the change's arrival (no socket, no watch).
@Suite struct ChangeFeedTests {
    /// Capture times set by mtime (these photos carry no EXIF date): 2020, 2021, 2022 and later.
    static let y2019 = 1_546_300_800, y2020 = 1_577_836_800, y2021 = 1_609_459_200, mid2021 = 1_622_505_600, y2022 = 1_640_995_200

    /// a/one.jpg (2020), a/two.jpg (2021), a/three.jpg (2022) and b/kodak.jpg (EXIF 2000-10-26);
    /// alice/ holds alice/a.jpg (2020); keys as `ClientKeyTests`.
    final class Service: InProcessServer, @unchecked Sendable {
        let library: TemporaryDirectory

        init() throws {
            let library = TemporaryDirectory("thumbd-changes")
            self.library = library
            try super.init(library: library.path) { config in
                config.clientKeys = [ClientKeyTests.alice]
                config.adminToken = "the-admin-token"
                config.makeNoPlaceholders()   // made only when a test says (`storeThumbhash`)
            }
            put("a/one.jpg", "Landscape_1.jpg", at: ChangeFeedTests.y2020)
            put("a/two.jpg", "Landscape_1.jpg", at: ChangeFeedTests.y2021)
            put("a/three.jpg", "Landscape_6.jpg", at: ChangeFeedTests.y2022)
            library.write("b/kodak.jpg", Array(Fixtures.photo("kodak-dc210-1998-vga.jpg")))
            put("alice/a.jpg", "Landscape_1.jpg", at: ChangeFeedTests.y2020)
            thumbd.service.index.rescan()
        }

        /// Writes fixture photo `photo` at `path`, its mtime (so its `taken`) `seconds` since the epoch.
        func put(_ path: String, _ photo: String, at seconds: Int) {
            library.write(path, Array(Fixtures.photo(photo)))
            ListingTests.setModified(library.path + "/" + path, seconds: seconds)
        }

        func remove(_ path: String) {
            #expect(unlink(library.path + "/" + path) == 0)
        }

        var generation: Int { thumbd.service.index.generation }

        func get(_ target: String, key: String = "the-admin-token") -> HTTPResponse {
            respond("GET", target, headers: [("Authorization", "Bearer " + key)])
        }

        /// Sends a request and returns at once; its response, when it comes, is in the box.
        func send(_ target: String, key: String = "the-admin-token") -> LockedArray<HTTPResponse> {
            let box = LockedArray<HTTPResponse>()
            thumbd.service.respond(to: HTTPRequest(method: "GET", target: target,
                                                   headers: HTTPHeaders([("Authorization", "Bearer " + key)]))) { box.append($0) }
            return box
        }
    }

    static func json(_ response: HTTPResponse) -> [String: Any] {
        (try? JSONSerialization.jsonObject(with: Data(response.body))) as? [String: Any] ?? [:]
    }

    /// `[index: path]` of a changes answer's `removed`, `inserted` or `changed`.
    static func placed(_ answer: [String: Any], _ name: String) -> [Int: String] {
        var out: [Int: String] = [:]
        for entry in answer[name] as? [[String: Any]] ?? [] {
            let path = (entry["item"] as? [String: Any])?["path"] as? String ?? entry["path"] as? String
            out[entry["index"] as? Int ?? -1] = path
        }
        return out
    }

    static func paths(_ listing: HTTPResponse) -> [String] {
        (json(listing)["items"] as? [[String: Any]] ?? []).compactMap { $0["path"] as? String }
    }

    /// Added, deleted, replaced in place and replaced with another date (moved), over several
    /// generations: the exact indexes, worked out by hand from the dates, in both orders; and
    /// applied to the listing at G, they give the listing now.
    @Test func addDeleteReplaceAndMoveGiveTheirIndexesInBothOrders() throws {
        let service = try Service()
        let since = service.generation
        let newestBefore = Self.paths(service.get("/assets?limit=100"))
        let oldestBefore = Self.paths(service.get("/assets?sort=oldest&limit=100"))
        #expect(newestBefore == ["a/three.jpg", "a/two.jpg", "a/one.jpg", "alice/a.jpg", "b/kodak.jpg"])
        service.put("a/new.jpg", "Landscape_6.jpg", at: Self.mid2021)
        service.thumbd.service.index.rescan()
        service.remove("a/one.jpg")
        service.thumbd.service.index.rescan()
        service.put("a/two.jpg", "Landscape_6.jpg", at: Self.y2021)    // another size, the same date: changed
        service.put("a/three.jpg", "Landscape_6.jpg", at: Self.y2019)  // another date: moved
        service.thumbd.service.index.rescan()
        // A file that came and went between: nothing.
        service.put("a/brief.jpg", "Landscape_1.jpg", at: Self.y2022)
        service.thumbd.service.index.rescan()
        service.remove("a/brief.jpg")
        service.thumbd.service.index.rescan()
        #expect(service.generation == since + 5)

        let newest = service.get("/assets/changes?since=\(since)")
        #expect(newest.status == 200)
        let answer = Self.json(newest)
        #expect(answer["since"] as? Int == since)
        #expect(answer["generation"] as? Int == since + 5)
        #expect(answer["total"] as? Int == 5)
        // Newest first: before three(0) two(1) one(2) alice/a(3) kodak(4); now new(0) two(1) alice/a(2) three(3) kodak(4).
        #expect(Self.placed(answer, "removed") == [0: "a/three.jpg", 2: "a/one.jpg"])
        #expect(Self.placed(answer, "inserted") == [0: "a/new.jpg", 3: "a/three.jpg"])
        #expect(Self.placed(answer, "changed") == [1: "a/two.jpg"])
        let changedItem = (answer["changed"] as? [[String: Any]])?.first?["item"] as? [String: Any]
        #expect(changedItem?["bytes"] as? Int == Fixtures.photo("Landscape_6.jpg").count)   // the file it is now
        #expect((changedItem?["thumbnails"] as? [String: String])?["3"]?.hasPrefix("/thumbnails/3/a/two.jpg?v=") == true)
        #expect(Self.apply(answer, to: newestBefore) == Self.paths(service.get("/assets?limit=100")))

        // Oldest first: before kodak(0) one(1) alice/a(2) two(3) three(4); now kodak(0) three(1) alice/a(2) two(3) new(4).
        let oldest = Self.json(service.get("/assets/changes?since=\(since)&sort=oldest"))
        #expect(Self.placed(oldest, "removed") == [1: "a/one.jpg", 4: "a/three.jpg"])
        #expect(Self.placed(oldest, "inserted") == [1: "a/three.jpg", 4: "a/new.jpg"])
        #expect(Self.placed(oldest, "changed") == [3: "a/two.jpg"])
        #expect(Self.apply(oldest, to: oldestBefore) == Self.paths(service.get("/assets?sort=oldest&limit=100")))

        // Since a later generation, only what came after it: the brief file's two steps cancel.
        let late = Self.json(service.get("/assets/changes?since=\(since + 3)"))
        #expect(Self.placed(late, "removed").isEmpty && Self.placed(late, "inserted").isEmpty && Self.placed(late, "changed").isEmpty)
        #expect(late["generation"] as? Int == since + 5)
    }

    /// The listing at `since` (paths) with `answer` applied as docs/API.md says: removed by their
    /// indexes, then inserted at theirs, ascending.
    static func apply(_ answer: [String: Any], to before: [String]) -> [String] {
        var list = before
        for index in placed(answer, "removed").keys.sorted(by: >) {
            guard list.indices.contains(index) else { return ["no index \(index) to remove"] }
            list.remove(at: index)
        }
        for (index, path) in placed(answer, "inserted").sorted(by: { $0.key < $1.key }) {
            guard (0...list.count).contains(index) else { return ["no index \(index) to insert at"] }
            list.insert(path, at: index)
        }
        return list
    }

    /// A client key sees the changes of its folder alone, by the listing's one rule: a link in
    /// its folder to a file outside is not its (`LibraryScope`); its indexes count its items.
    @Test func aClientKeySeesItsFolderOnly() throws {
        let service = try Service()
        let since = service.generation
        service.put("a/other.jpg", "Landscape_1.jpg", at: Self.y2022)
        #expect(symlink("../b/kodak.jpg", service.library.path + "/alice/link.jpg") == 0)
        service.thumbd.service.index.rescan()
        let outside = Self.json(service.get("/assets/changes?since=\(since)", key: "alice-phone-key"))
        #expect(outside["generation"] as? Int == since + 1)
        #expect(outside["total"] as? Int == 1)
        #expect(Self.placed(outside, "inserted").isEmpty && Self.placed(outside, "removed").isEmpty)
        // The admin sees both.
        #expect(Self.placed(Self.json(service.get("/assets/changes?since=\(since)")), "inserted")
                == [0: "a/other.jpg", 5: "alice/link.jpg"])

        service.put("alice/b.jpg", "Landscape_6.jpg", at: Self.y2021)
        service.remove("alice/link.jpg")
        service.thumbd.service.index.rescan()
        let inside = Self.json(service.get("/assets/changes?since=\(since)", key: "alice-phone-key"))
        #expect(Self.placed(inside, "inserted") == [0: "alice/b.jpg"])
        #expect(Self.placed(inside, "removed").isEmpty)
        #expect(inside["total"] as? Int == 2)
    }

    /// A generation whose changes are not known (before this run's first, or never given) is 410
    /// `generation_too_old`: the client lists again. Bad parameters are 400.
    @Test func anUnknownGenerationIsGone() throws {
        let service = try Service()
        for since in [0, service.generation - 1_000_000, service.generation + 1] {
            let response = service.get("/assets/changes?since=\(since)")
            #expect(response.status == 410, "\(since)")
            #expect(Self.json(response)["error"] as? String == "generation_too_old")
        }
        #expect(service.get("/assets/changes?since=\(service.generation)").status == 200)
        for bad in ["", "?since=x", "?since=1&wait=61", "?since=1&wait=-1", "?since=1&sort=up", "?since=1&limit=3"] {
            #expect(service.get("/assets/changes" + bad).status == 400, "\(bad)")
        }
    }

    /// A malformed number is 400 with one sentence naming the parameter, the value and what it
    /// must be: `since=-1` is no generation (400, not 410: the value is malformed, not too old),
    /// `wait=1.5` no whole number, and a number past 64 bits too large (it was told as
    /// negative). Found by an operator.
    @Test func aMalformedNumberIsRefusedSayingWhatIsWrongWithIt() throws {
        let service = try Service()
        let cases: [(String, String)] = [
            ("/assets/changes?since=-1", "since=-1 is too small: since must be a listing's generation, a whole number ≥ 0"),
            ("/assets/changes", "since is missing: since must be a listing's generation, a whole number ≥ 0"),
            ("/assets/changes?since=x", "since=x is not a whole number: since must be a listing's generation, a whole number ≥ 0"),
            ("/assets/changes?since=99999999999999999999",
             "since=99999999999999999999 is too large: since must be a listing's generation, a whole number ≥ 0"),
            ("/assets/changes?since=1&wait=1.5", "wait=1.5 is not a whole number: wait must be a whole number of seconds from 0 to 60"),
            ("/assets/changes?since=1&wait=61", "wait=61 is too large: wait must be a whole number of seconds from 0 to 60"),
            ("/assets/changes?since=1&wait=", "wait= is not a whole number: wait must be a whole number of seconds from 0 to 60"),
            ("/assets?offset=99999999999999999999",
             "offset=99999999999999999999 is too large: offset must be a whole number from 0 to 2147483647"),
            ("/assets?offset=-99999999999999999999",
             "offset=-99999999999999999999 is too small: offset must be a whole number from 0 to 2147483647"),
            ("/assets?offset=-1", "offset=-1 is too small: offset must be a whole number from 0 to 2147483647"),
            ("/assets?offset=--1", "offset=--1 is not a whole number: offset must be a whole number from 0 to 2147483647"),
            ("/assets?limit=10001", "limit=10001 is too large: limit must be a whole number from 0 to 10000"),
        ]
        for (target, message) in cases {
            let response = service.get(target)
            #expect(response.status == 400, "\(target)")
            #expect(Self.json(response)["error"] as? String == "bad_request", "\(target)")
            #expect(Self.json(response)["message"] as? String == message, "\(target)")
        }
        #expect(service.get("/assets?offset=1&limit=1").status == 200)
        #expect(service.get("/assets/changes?since=\(service.generation)&wait=0").status == 200)
    }

    /// A request with nothing new waits, parked (its completion not called, no thread held), and
    /// is answered as the file arrives; one whose wait ends unchanged is answered with nothing.
    @Test func aParkedRequestIsAnsweredWhenAFileArrives() throws {
        let service = try Service()
        let since = service.generation
        let parked = service.send("/assets/changes?since=\(since)&wait=60", key: "alice-phone-key")
        #expect(parked.values.isEmpty)
        service.put("alice/new.jpg", "Landscape_6.jpg", at: Self.y2022)
        service.thumbd.service.index.rescan()
        #expect(eventually(within: 30) { !parked.values.isEmpty })
        let answer = Self.json(try #require(parked.values.first))
        #expect(answer["generation"] as? Int == since + 1)
        #expect(Self.placed(answer, "inserted") == [0: "alice/new.jpg"])

        let short = service.send("/assets/changes?since=\(since + 1)&wait=1")
        #expect(eventually(within: 30) { !short.values.isEmpty })
        let unchanged = Self.json(try #require(short.values.first))
        #expect(unchanged["generation"] as? Int == since + 1 && Self.placed(unchanged, "inserted").isEmpty)
    }

    /// A placeholder made after a page listed (a preview read, a render, the backfill, a peer's)
    /// reaches it through the feed: a waiting request is answered, and the placeholders are told
    /// as changed items at their places, with the same thumbnail URLs and the new `thumbhash`; the note that a file cannot be rendered is no placeholder and is not told.
    @Test func aPlaceholderMadeAfterTheListingIsAChangedItem() throws {
        let service = try Service()
        let index = service.thumbd.service.index
        let since = service.generation
        let listing = Self.json(service.get("/assets?limit=100"))["items"] as? [[String: Any]] ?? []
        let before = Dictionary(uniqueKeysWithValues: listing.map { ($0["path"] as! String, $0) })
        #expect(before["a/two.jpg"]?["thumbhash"] is NSNull && before["b/kodak.jpg"]?["thumbhash"] is NSNull)
        let parked = service.send("/assets/changes?since=\(since)&wait=60")
        let records = index.listing(order: .newest, offset: 0, limit: 100).items
        func record(_ path: String) throws -> AssetRecord { try #require(records.first { $0.path == DiskPath(path) }) }
        let two: [UInt8] = [0x21, 0x08, 0x0a, 0x07, 0x80, 0x57, 0x88, 0x87, 0x78, 0x77, 0x88, 0x88, 0x68, 0x77, 0x88]
        let kodak: [UInt8] = [0x55, 0x18, 0x0a, 0x07, 0x80, 0x57, 0x88, 0x87, 0x78, 0x77, 0x88, 0x88, 0x68, 0x77, 0x88]
        index.storeThumbhash(two, for: DiskPath("a/two.jpg"), source: try record("a/two.jpg").identity)
        index.storeThumbhash(kodak, for: DiskPath("b/kodak.jpg"), source: try record("b/kodak.jpg").identity)
        index.storeThumbhash([], for: DiskPath("a/one.jpg"), source: try record("a/one.jpg").identity)   // cannot be rendered: no placeholder
        // The request waiting for a change is answered by the publication (50 ms after the first
        // arrival: the two are one generation unless this thread stalled between them).
        #expect(eventually(within: 30) { !parked.values.isEmpty })
        let woken = Self.json(try #require(parked.values.first))
        #expect((woken["generation"] as? Int ?? 0) > since && !Self.placed(woken, "changed").isEmpty)
        index.publishArrivedPlaceholders()   // one left, if this thread stalled
        let generation = service.generation
        #expect(generation == since + 1 || generation == since + 2)
        let answer = Self.json(service.get("/assets/changes?since=\(since)"))
        #expect(answer["generation"] as? Int == generation)
        // Newest first: three(0) two(1) one(2) alice/a(3) kodak(4).
        #expect(Self.placed(answer, "changed") == [1: "a/two.jpg", 4: "b/kodak.jpg"])
        #expect(Self.placed(answer, "removed").isEmpty && Self.placed(answer, "inserted").isEmpty)
        for entry in answer["changed"] as? [[String: Any]] ?? [] {
            let item = try #require(entry["item"] as? [String: Any]), path = try #require(item["path"] as? String)
            #expect(item["thumbhash"] as? String == Data(path == "a/two.jpg" ? two : kodak).base64EncodedString())
            #expect(item["thumbnails"] as? [String: String] == before[path]?["thumbnails"] as? [String: String])
        }
        // In the other order, the same two at their places there: kodak(0) one(1) alice/a(2) two(3) three(4).
        let oldest = Self.json(service.get("/assets/changes?since=\(since)&sort=oldest"))
        #expect(Self.placed(oldest, "changed") == [0: "b/kodak.jpg", 3: "a/two.jpg"])
        // A client key's folder holds neither: its answer has them not, but the new generation.
        let alice = Self.json(service.get("/assets/changes?since=\(since)", key: "alice-phone-key"))
        #expect(alice["generation"] as? Int == generation && Self.placed(alice, "changed").isEmpty)

    }

    /// Over a socket, as `thumbd` stops: a request parked on the feed is answered (200, nothing
    /// changed) at once, so the shutdown need not wait out its grace period (30 s here) for it.
    @Test func shutdownAnswersAParkedRequestOverItsSocket() throws {
        let server = try ServerHarness(library: Paths.fixturePhotos) {
            $0.shutdownGraceSeconds = 30
            $0.makeNoPlaceholders()
        }
        server.waitForInitialScan()
        let since = server.thumbd.service.index.generation
        let answer = LockedArray<TestResponse>()
        let port = server.port
        let asked = DispatchSemaphore(value: 0)
        DispatchQueue.global().async {
            if let response = try? TestClient.get(port: port, "/assets/changes?since=\(since)&wait=60") { answer.append(response) }
            asked.signal()
        }
        #expect(eventually(within: 30) { server.thumbd.service.waitingChangeRequests == 1 })
        #expect(answer.values.isEmpty)
        let stopped = DispatchSemaphore(value: 0)
        server.thumbd.shutdown { stopped.signal() }
        #expect(stopped.wait(timeout: .now() + 20) == .success, "the shutdown waited for the parked request")
        #expect(asked.wait(timeout: .now() + 20) == .success)
        #expect(answer.values.first?.status == 200)
        #expect(answer.values.first?.json["generation"] as? Int == since)
    }

    /// A client that closes its connection while parked leaves: its place among the waiters is
    /// free again (`HTTPClientAbort`), not held until its wait ends.
    @Test func aClientThatGoesAwayLeavesTheWaiters() throws {
        let server = try ServerHarness(library: Paths.fixturePhotos) { $0.makeNoPlaceholders() }
        server.waitForInitialScan()
        let fd = try TestClient.connect(port: server.port)
        let request = Array("GET /assets/changes?since=\(server.thumbd.service.index.generation)&wait=60 HTTP/1.1\r\nHost: x\r\n\r\n".utf8)
        #expect(request.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) } == request.count)
        #expect(eventually(within: 30) { server.thumbd.service.waitingChangeRequests == 1 })
        close(fd)
        #expect(eventually(within: 30) { server.thumbd.service.waitingChangeRequests == 0 })
    }

    /// At most `maxListingWaiters` wait at once: the next is 503 `too_many_waiters`; shutting down
    /// answers every parked one, and a request after is answered at once.
    @Test func theWaitersAreBoundedAndShutdownAnswersThem() throws {
        let service = try Service()
        let since = service.generation
        let parked = (0..<ThumbService.maxListingWaiters).map { _ in service.send("/assets/changes?since=\(since)&wait=60") }
        #expect(parked.allSatisfy { $0.values.isEmpty })
        let refused = service.get("/assets/changes?since=\(since)&wait=60")
        #expect(refused.status == 503)
        #expect(Self.json(refused)["error"] as? String == "too_many_waiters")
        service.thumbd.service.stopListingWaiters()
        #expect(parked.allSatisfy { $0.values.map(\.status) == [200] })
        #expect(service.get("/assets/changes?since=\(since)&wait=60").status == 200)
    }
}
