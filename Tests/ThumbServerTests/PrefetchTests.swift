import Foundation
import Testing
@testable import ThumbServer

/// `/prefetch` jobs (docs/API.md, "Prefetch").
@Suite(.serialized) struct PrefetchTests {
    /// `count` distinct copies of one fixture photo (distinct paths are distinct cache keys).
    final class CopiesLibrary {
        let root = NSTemporaryDirectory() + "thumbd-copies-\(UUID().uuidString)"
        init(count: Int, of photo: String = "Landscape_1.jpg") throws {
            try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
            for i in 0..<count {
                try FileManager.default.copyItem(atPath: Paths.fixturePhotos + "/" + photo,
                                                 toPath: root + String(format: "/copy-%04d.jpg", i))
            }
        }
        deinit { try? FileManager.default.removeItem(atPath: root) }
    }

    /// `count` hard links to one fixture photo: a large library made in milliseconds.
    final class LinksLibrary {
        let root = NSTemporaryDirectory() + "thumbd-links-\(UUID().uuidString)"
        init(count: Int) throws {
            try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
            let first = root + "/link-0000.jpg"
            try FileManager.default.copyItem(atPath: Paths.fixturePhotos + "/Landscape_1.jpg", toPath: first)
            for i in 1..<count where link(first, root + String(format: "/link-%04d.jpg", i)) != 0 {
                throw POSIXError(.EIO)
            }
        }
        deinit { try? FileManager.default.removeItem(atPath: root) }
    }

    func post(_ server: ServerHarness, _ body: String) throws -> TestResponse {
        try server.post("/prefetch", body)
    }

    func waitForFinalState(_ server: ServerHarness, job id: Int, seconds: Double = 60) throws -> [String: Any] {
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline {
            let job = try server.get("/prefetch/\(id)").json
            if job["state"] as? String != "running" { return job }
            usleep(50_000)
        }
        return try server.get("/prefetch/\(id)").json
    }

    /// Job ids count up by one within a run and start elsewhere after a restart: an id from
    /// before (a client still polling it, another node's part of a job) never names a new job.
    @Test func aRestartedServerDoesNotReuseJobIDs() throws {
        let server = try ServerHarness()
        let body = #"{"grid": "3", "paths": ["Landscape_1.jpg"]}"#
        let first = try #require(try post(server, body).json["id"] as? Int)
        #expect(try post(server, body).json["id"] as? Int == first + 1)
        try server.restart()
        let after = try #require(try post(server, body).json["id"] as? Int)
        #expect(after != first && after != first + 1, "job ids \(first), \(first + 1), then \(after) after a restart")
        #expect(try server.get("/prefetch/\(first)").status == 404)
        #expect(first > 0 && after > 0 && first <= (1 << 40) + 1 && after <= (1 << 40) + 1)
    }

    @Test func anEndPastAnyListingIsClamped() throws {
        let server = try ServerHarness()
        server.thumbd.service.index.rescan()
        let total = try server.get("/assets").json["total"] as? Int ?? 0
        for end in ["2147483648", "9007199254740991", "1e15"] {
            let accepted = try post(server, #"{"grid": "5", "start": 0, "end": \#(end)}"#)
            #expect(accepted.status == 202, "end \(end)")
            #expect(accepted.json["total"] as? Int == total, "end \(end)")
        }
        let missing = try post(server, #"{"grid": "5", "start": 0}"#)
        #expect(missing.status == 400)
        #expect(missing.json["message"] as? String == "end is missing")
        #expect(try post(server, #"{"grid": "5", "start": 0, "end": 2.5}"#).status == 400)
        #expect(try post(server, #"{"grid": "5", "start": 0, "end": true}"#).status == 400)
        _ = try server.get("/prefetch", method: "DELETE")
    }

    @Test func aRangePrefetchMakesLaterGetsHitsWithNoRender() throws {
        let server = try ServerHarness()
        server.thumbd.service.index.rescan()
        let total = try server.get("/assets").json["total"] as? Int ?? 0
        #expect(total >= 5)
        let accepted = try post(server, #"{"grid": "3", "sort": "newest", "start": 0, "end": 1000}"#)
        #expect(accepted.status == 202)
        #expect(accepted.json["total"] as? Int == total)   // end clamped to the listing
        let job = try waitForFinalState(server, job: accepted.json["id"] as? Int ?? -1)
        #expect(job["state"] as? String == "done")
        #expect(job["done"] as? Int == total)
        let rendersAfterPrefetch = try server.stat("renders", "total")
        #expect(rendersAfterPrefetch == total)
        for item in try server.get("/assets?limit=1000").json["items"] as? [[String: Any]] ?? [] {
            let path = try #require(item["path"] as? String)
            let response = try server.get("/thumbnails/3/\(encodePath(path))")
            #expect(response.status == 200)
            #expect(response.header("X-Cache") == "HIT-DISK", "\(path)")
        }
        #expect(try server.stat("renders", "total") == rendersAfterPrefetch)
        #expect(try server.stat("memory_cache", "misses") == total)   // prefetch lookups are not client misses
        // Prefetching what is cached renders nothing.
        let again = try post(server, #"{"grid": "3", "start": 0, "end": 1000}"#)
        let second = try waitForFinalState(server, job: again.json["id"] as? Int ?? -1)
        #expect(second["skipped"] as? Int == total)
        #expect(second["state"] as? String == "done")
        #expect(try server.stat("renders", "total") == rendersAfterPrefetch)
        let stats = try server.stats()["prefetch"] as? [String: Any]
        #expect(stats?["jobs"] as? Int == 2)
        #expect(stats?["done"] as? Int == total)
        #expect(stats?["skipped"] as? Int == total)
    }

    /// A damaged file is decoded once, not once per prefetch: prefetches over a library with
    /// broken files kept libvips busy with them (6,657 range POSTs gave 2,020 failed renders).
    @Test func aSourceThatCannotBeDecodedIsNotDecodedAgainByEachPrefetch() throws {
        let library = try CopiesLibrary(count: 1)
        // Cut inside its header (the SOS marker is at byte 482): nothing decodes, so 415. Cut
        // later, it would render what decodes (docs/API.md "Thumbnails").
        let truncated = try #require(FileManager.default.contents(atPath: Paths.fixturePhotos + "/Landscape_1.jpg"))
        try truncated.prefix(400).write(to: URL(fileURLWithPath: library.root + "/broken.jpg"))
        let server = try ServerHarness(library: library.root)
        for round in 0..<4 {
            let grid = ["3", "5", "3", "1"][round]
            let accepted = try post(server, #"{"grid": "\#(grid)", "paths": ["broken.jpg"]}"#)
            let job = try waitForFinalState(server, job: accepted.json["id"] as? Int ?? -1)
            #expect(job["failed"] as? Int == 1)
        }
        #expect(try server.stat("renders", "failed") == 1)
        #expect(try server.stat("renders", "total") == 1)
        #expect(try server.get("/thumbnails/3/broken.jpg").status == 415)   // a GET is answered from it too
        #expect(try server.stat("renders", "total") == 1)
        #expect(try server.stat("renders", "known_failures") == 1)
    }

    @Test func pathsAndFormatWarmExactlyWhatAGetAsksFor() throws {
        let server = try ServerHarness()
        let accepted = try post(server, #"{"grid": "5", "format": "webp", "paths": ["Landscape_1.jpg", "missing.jpg"]}"#)
        #expect(accepted.status == 202)
        let job = try waitForFinalState(server, job: accepted.json["id"] as? Int ?? -1)
        #expect(job["done"] as? Int == 1)
        #expect(job["failed"] as? Int == 1)
        let webp = try server.get("/thumbnails/5/Landscape_1.jpg", headers: ["Accept": "image/webp"])
        #expect(webp.header("X-Cache") == "HIT-DISK")
        #expect(webp.image?.format == "webp")
        #expect(try server.get("/thumbnails/5/Landscape_1.jpg").header("X-Cache") == "MISS")  // JPEG is another entry
    }

    /// A fresh index is not listed while its first scan runs: a partial listing (or a range
    /// prefetch over one) would silently miss photos. 503 with Retry-After until it is whole.
    @Test func aFreshIndexAnswers503UntilItsFirstScanEnds() throws {
        let library = try LinksLibrary(count: 4000)   // a first scan long enough to be caught in the act
        let server = try ServerHarness(library: library.root)
        var sawBuilding = false
        var listed: Int?
        while listed == nil {
            let listing = try server.get("/assets?limit=0")
            let prefetch = try post(server, #"{"grid": "5", "start": 0, "end": 10}"#)
            for response in [listing, prefetch] where response.status == 503 {
                #expect(response.json["error"] as? String == "index_building")
                #expect(response.header("Retry-After") == "1")
                sawBuilding = true
            }
            if listing.status == 200 {
                listed = listing.json["total"] as? Int ?? -1   // the first 200 must be the whole library
            } else {
                #expect(listing.status == 503)
                usleep(5_000)
            }
        }
        #expect(listed == 4000)   // never a partial total
        #expect(try post(server, #"{"grid": "5", "start": 0, "end": 10}"#).status == 202)
        #expect(sawBuilding, "the first scan ended before the first request: the test proved nothing")
    }

    /// A stop-all that lands while a large job is still queuing its items must leave nothing
    /// of it queued.
    @Test func aStopAllRacingALargeStartLeavesNothingQueued() throws {
        let library = try LinksLibrary(count: 3000)
        let server = try ServerHarness(library: library.root)
        server.thumbd.service.index.rescan()
        for _ in 0..<3 {
            let stopping = DispatchGroup()
            stopping.enter()
            Thread {
                for _ in 0..<40 { _ = try? server.get("/prefetch", method: "DELETE"); usleep(500) }
                stopping.leave()
            }.start()
            _ = try post(server, #"{"grid": "5", "start": 0, "end": 3000}"#)
            stopping.wait()
            _ = try server.get("/prefetch", method: "DELETE")
            #expect(try server.stat("prefetch", "queued") == 0)
        }
    }

    @Test func cancellingMidJobDropsQueuedItemsAndStopsRendering() throws {
        let library = try CopiesLibrary(count: 80)
        let server = try ServerHarness(library: library.root)
        server.thumbd.service.index.rescan()
        let accepted = try post(server, #"{"grid": "1", "start": 0, "end": 80}"#)
        let id = accepted.json["id"] as? Int ?? -1
        while try server.stat("renders", "total") < 2 { usleep(10_000) }
        let stopped = try server.get("/prefetch/\(id)", method: "DELETE")
        #expect(stopped.status == 200)
        #expect(stopped.json["state"] as? String == "cancelled")
        let dropped = stopped.json["cancelled"] as? Int ?? 0
        #expect(dropped > 40)
        // The job DELETE returns is final (docs/API.md): its counts add up to the total at once.
        let counts = ["done", "skipped", "failed", "cancelled"].map { stopped.json[$0] as? Int ?? 0 }
        #expect(counts.reduce(0, +) == 80)
        let rendersAtStop = try server.stat("renders", "total")
        usleep(1_500_000)
        let rendersLater = try server.stat("renders", "total")
        // At most the renders running at the stop finish: one per worker prefetch may hold.
        #expect(rendersLater <= rendersAtStop + server.thumbd.service.pipeline.prefetchWorkers)
        let final = try server.get("/prefetch/\(id)").json
        #expect(final["state"] as? String == "cancelled")
        #expect(["done", "skipped", "failed", "cancelled"].map { final[$0] as? Int ?? 0 } == counts)   // unchanged since
        #expect(try server.stat("prefetch", "queued") == 0)
    }

    @Test func foregroundMissesGoAheadOfA300ItemPrefetch() throws {
        let library = try CopiesLibrary(count: 303)
        let server = try ServerHarness(library: library.root)
        let paths = (0..<300).map { String(format: "\"copy-%04d.jpg\"", $0) }.joined(separator: ",")
        #expect(try post(server, #"{"grid": "1", "paths": [\#(paths)]}"#).status == 202)
        while try server.stat("renders", "total") < 5 { usleep(10_000) }
        // Counted, not timed: while a client miss waits, prefetch renders end only on the
        // workers that were already busy when it came (each finishes what it has; the first
        // free one takes the miss, the others may start one more each). Behind the queue the
        // miss would wait for hundreds.
        let workers = ProcessInfo.processInfo.activeProcessorCount
        for i in 300..<303 {   // copies 300...302 are outside the prefetch
            let before = try server.stat("renders", "prefetch")
            let response = try server.get(String(format: "/thumbnails/1/copy-%04d.jpg", i))
            #expect(response.header("X-Cache") == "MISS")
            let during = try server.stat("renders", "prefetch") - before
            #expect(during <= 2 * workers, "\(during) prefetch renders ended while a client miss waited")
        }
        #expect(try server.stat("prefetch", "queued") > 100)   // the prefetch really was running
        _ = try server.get("/prefetch", method: "DELETE")
    }

    @Test func stopAllCancelsEveryJob() throws {
        let library = try CopiesLibrary(count: 40)
        let server = try ServerHarness(library: library.root)
        server.thumbd.service.index.rescan()
        let first = try post(server, #"{"grid": "1", "start": 0, "end": 20}"#).json["id"] as? Int
        let second = try post(server, #"{"grid": "1", "start": 20, "end": 40}"#).json["id"] as? Int
        let stopped = try server.get("/prefetch", method: "DELETE")
        #expect(stopped.status == 200)
        let jobs = stopped.json["jobs"] as? [[String: Any]] ?? []
        #expect(Set(jobs.compactMap { $0["id"] as? Int }) == Set([first, second].compactMap { $0 }))
        #expect(jobs.allSatisfy { $0["state"] as? String == "cancelled" })
        #expect(try server.stat("prefetch", "cancelled") >= 30)
    }

    @Test func aLargePrefetchLeavesTheHotEntryInMemory() throws {
        let library = try CopiesLibrary(count: 60, of: "kodak-dc210-1998-vga.jpg")
        let server = try ServerHarness(library: library.root) { $0.memoryCacheBytes = 1 << 20 }
        server.thumbd.service.index.rescan()
        #expect(try server.get("/thumbnails/3/copy-0000.jpg").header("X-Cache") == "MISS")
        let accepted = try post(server, #"{"grid": "3", "start": 0, "end": 60}"#)
        let job = try waitForFinalState(server, job: accepted.json["id"] as? Int ?? -1)
        #expect(job["done"] as? Int == 59)
        #expect(job["skipped"] as? Int == 1)
        #expect(try server.get("/thumbnails/3/copy-0000.jpg").header("X-Cache") == "HIT-MEMORY")
    }

    @Test(arguments: [#"not json"#, #"[1,2]"#, #"{"grid": "4", "start": 0, "end": 2}"#, #"{"grid": "3", "start": 5, "end": 2}"#,
                      #"{"grid": "3", "start": -1, "end": 2}"#, #"{"grid": "3", "paths": ["../secret.jpg"]}"#,
                      #"{"grid": "3", "paths": ["/etc/passwd"]}"#, #"{"grid": "3", "paths": ["a/../../b.jpg"]}"#,
                      #"{"grid": "3", "paths": "Landscape_1.jpg"}"#, #"{"grid": "3", "format": "gif", "start": 0, "end": 1}"#,
                      #"{"grid": "3", "sort": "sideways", "start": 0, "end": 1}"#, #"{"grid": "3"}"#])
    func malformedBodiesAre400AndQueueNothing(body: String) throws {
        let server = try ServerHarness()
        let response = try post(server, body)
        #expect(response.status == 400, "\(body)")
        #expect(response.json["error"] as? String == "bad_request")
        #expect(try server.stat("prefetch", "jobs") == 0)
        #expect(try server.stat("renders", "total") == 0)
    }

    @Test func aPathThatLeadsOutsideThroughASymlinkIs400() throws {
        let root = NSTemporaryDirectory() + "thumbd-pf-escape-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: root + "/library", withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: root) }
        try FileManager.default.copyItem(atPath: Paths.fixturePhotos + "/Landscape_1.jpg", toPath: root + "/secret.jpg")
        try FileManager.default.createSymbolicLink(atPath: root + "/library/out.jpg", withDestinationPath: root + "/secret.jpg")
        let server = try ServerHarness(library: root + "/library")
        let response = try post(server, #"{"grid": "3", "paths": ["out.jpg"]}"#)
        #expect(response.status == 400)
        #expect(try server.stat("prefetch", "jobs") == 0)
    }

    @Test func unknownJobsAre404AndWrongMethods405() throws {
        let server = try ServerHarness()
        #expect(try server.get("/prefetch/999").status == 404)
        #expect(try server.get("/prefetch/999", method: "DELETE").status == 404)
        #expect(try server.get("/prefetch").status == 405)
        #expect(try server.get("/prefetch/1", method: "POST").status == 405)
    }
}

/// Bulk prefetch: accepted at once and the server keeps answering.
@Suite struct BulkPrefetchTests {
    @Test func aThousandItemRangeIsAcceptedAtOnceWhileForegroundRequestsAreServed() throws {
        let root = NSTemporaryDirectory() + "thumbd-bulk-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: root) }
        let photo = root + "/original.jpg"
        try FileManager.default.copyItem(atPath: Paths.fixturePhotos + "/sony-cybershot-small-orientation6.jpg", toPath: photo)
        for i in 0..<999 { link(photo, root + String(format: "/link-%04d.jpg", i)) }   // 1,000 paths, one inode
        let server = try ServerHarness(library: root)
        server.thumbd.service.index.rescan()
        #expect(try server.get("/assets?limit=0").json["total"] as? Int == 1000)
        let body = #"{"grid": "5", "start": 0, "end": 1000}"#
        let started = Date()
        let accepted = try TestClient.parse(TestClient.exchange(port: server.port, Array(
            "POST /prefetch HTTP/1.1\r\nHost: x\r\nConnection: close\r\nContent-Length: \(body.utf8.count)\r\n\r\n\(body)".utf8)))
        let acceptSeconds = Date().timeIntervalSince(started)
        #expect(accepted.status == 202)
        #expect(accepted.json["total"] as? Int == 1000)
        #expect(acceptSeconds < 1, "202 took \(acceptSeconds) s")
        for _ in 0..<5 {
            let t = Date()
            #expect(try server.get("/healthz").status == 200)
            #expect(Date().timeIntervalSince(t) < 0.5)
            let hit = try server.get("/assets?limit=1")
            #expect(hit.status == 200)
        }
        #expect(try server.stat("prefetch", "queued") > 0)
        _ = try server.get("/prefetch", method: "DELETE")
    }
}
