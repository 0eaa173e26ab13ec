import Foundation
import Testing
import TestSupport
@testable import ThumbServer

/// Prefetch jobs belong to their client (docs/API.md, "Prefetch"): seen and stopped by it alone
/// (and the admin), and limited per client with 429 and `Retry-After`, counted per outcome.
@Suite struct PrefetchOwnershipTests {
    static let photos = ["Landscape_1.jpg", "Landscape_6.jpg", "kodak-dc210-1998-vga.jpg", "galaxy-s-orientation6-gps-vga.jpg"]

    static func body(_ names: ArraySlice<String>) -> String {
        #"{"grid": "5", "paths": [\#(names.map { "\"\($0)\"" }.joined(separator: ","))]}"#
    }

    static func phone(_ id: String) -> [String: String] { [Client.idHeader: id] }

    @Test func twoPhonesStopOnlyTheirOwnJobs() throws {
        let gate = GatedRenderer()   // shut: the jobs stay running until the test opens it
        let server = try ServerHarness(renderer: gate)
        defer { gate.open() }
        let a = try server.post("/prefetch", Self.body(Self.photos[0..<2]), headers: Self.phone("phone-a"))
        let b = try server.post("/prefetch", Self.body(Self.photos[2..<4]), headers: Self.phone("phone-b"))
        #expect(a.status == 202 && b.status == 202)
        let aID = try #require(a.json["id"] as? Int), bID = try #require(b.json["id"] as? Int)
        // Each sees its own job; another's is 404, as one that does not exist.
        #expect(try server.get("/prefetch/\(aID)", headers: Self.phone("phone-a")).json["state"] as? String == "running")
        #expect(try server.get("/prefetch/\(aID)", headers: Self.phone("phone-b")).status == 404)
        #expect(try server.get("/prefetch/\(aID)", method: "DELETE").status == 404)   // anonymous
        // Phone a's grid switch stops a's job alone.
        let stopped = try server.get("/prefetch", headers: Self.phone("phone-a"), method: "DELETE")
        #expect(stopped.status == 200)
        let jobs = try #require(stopped.json["jobs"] as? [[String: Any]])
        #expect(jobs.map { $0["id"] as? Int } == [aID])
        #expect(jobs.first?["state"] as? String == "cancelled" && jobs.first?["cancelled"] as? Int == 2)
        #expect(try server.get("/prefetch/\(bID)", headers: Self.phone("phone-b")).json["state"] as? String == "running")
        // No admin token is set: anyone may stop every client's (all=true).
        let all = try server.get("/prefetch?all=true", method: "DELETE").json["jobs"] as? [[String: Any]]
        #expect(all?.map { $0["id"] as? Int } == [bID])
        #expect(try server.get("/prefetch", headers: Self.phone("not an id!"), method: "DELETE").status == 400)
    }

    @Test func theAdminTokenSeesAndStopsEveryJob() throws {
        let gate = GatedRenderer()
        let server = try ServerHarness(renderer: gate) { $0.adminToken = "admin-secret" }
        defer { gate.open() }
        let admin = ["Authorization": "Bearer admin-secret"]
        // Two apps holding the admin token own their jobs apart by the ids they name.
        let a = try server.post("/prefetch", Self.body(Self.photos[0..<1]), headers: admin.merging(Self.phone("app-a")) { $1 })
        let b = try server.post("/prefetch", Self.body(Self.photos[1..<2]), headers: admin.merging(Self.phone("app-b")) { $1 })
        let aID = try #require(a.json["id"] as? Int), bID = try #require(b.json["id"] as? Int)
        let own = try server.get("/prefetch", headers: admin.merging(Self.phone("app-a")) { $1 }, method: "DELETE")
        #expect((own.json["jobs"] as? [[String: Any]])?.map { $0["id"] as? Int } == [aID])
        // Without the token, all=true is not allowed; with it, every job stops.
        #expect(try server.get("/prefetch?all=true", method: "DELETE").status == 401)
        let everything = try server.get("/prefetch?all=true", headers: admin, method: "DELETE")
        #expect((everything.json["jobs"] as? [[String: Any]])?.map { $0["id"] as? Int } == [bID])
    }

    @Test func limitsPerClientAnswer429AndAreCounted() throws {
        let gate = GatedRenderer()
        let server = try ServerHarness(renderer: gate) {
            $0.prefetchClientJobs = 2
            $0.prefetchClientItemsPerJob = 3
            $0.prefetchClientItemsPerMinute = 0
        }
        defer { gate.open() }
        #expect(try server.post("/prefetch", Self.body(Self.photos[0..<1]), headers: Self.phone("a")).status == 202)
        #expect(try server.post("/prefetch", Self.body(Self.photos[1..<2]), headers: Self.phone("a")).status == 202)
        let third = try server.post("/prefetch", Self.body(Self.photos[2..<3]), headers: Self.phone("a"))
        #expect(third.status == 429 && third.json["error"] as? String == "too_many_jobs" && third.header("Retry-After") == "1")
        // Another client has its own two.
        #expect(try server.post("/prefetch", Self.body(Self.photos[2..<3]), headers: Self.phone("b")).status == 202)
        // A stopped job frees its place.
        _ = try server.get("/prefetch", headers: Self.phone("a"), method: "DELETE")
        #expect(try server.post("/prefetch", Self.body(Self.photos[2..<3]), headers: Self.phone("a")).status == 202)
        let large = try server.post("/prefetch", Self.body(Self.photos[0..<4]), headers: Self.phone("b"))
        #expect(large.status == 429 && large.json["error"] as? String == "too_many_items")
        #expect(large.header("Retry-After") == "1")
        let prefetch = try #require(try server.stats()["prefetch"] as? [String: Any])
        #expect(prefetch["refused"] as? [String: Int] == ["too_many_jobs": 1, "too_many_items": 1, "rate_limited": 0])
        let metrics = try server.get("/metrics").text
        #expect(metrics.contains("thumbd_prefetch_refused_total{outcome=\"too_many_jobs\"} 1\n"))
        #expect(metrics.contains("thumbd_prefetch_refused_total{outcome=\"too_many_items\"} 1\n"))
        #expect(metrics.contains("thumbd_prefetch_refused_total{outcome=\"rate_limited\"} 0\n"))
        // Per outcome, never per client: no client id reaches /metrics.
        #expect(!metrics.contains("phone") && !metrics.contains("id:a"))
    }

    @Test func itemsPerMinuteRefillEvenly() throws {
        let server = try ServerHarness { $0.prefetchClientItemsPerMinute = 2; $0.prefetchClientItemsPerJob = 0 }
        #expect(try server.post("/prefetch", Self.body(Self.photos[0..<2]), headers: Self.phone("a")).status == 202)
        let refused = try server.post("/prefetch", Self.body(Self.photos[2..<3]), headers: Self.phone("a"))
        #expect(refused.status == 429 && refused.json["error"] as? String == "rate_limited")
        // 2 a minute refill one item in 30 s (less the moment between the two posts).
        #expect(["29", "30"].contains(refused.header("Retry-After") ?? ""))
        #expect(try server.post("/prefetch", Self.body(Self.photos[2..<3]), headers: Self.phone("b")).status == 202)
    }
}
