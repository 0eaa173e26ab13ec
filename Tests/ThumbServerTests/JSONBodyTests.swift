import Foundation
import HTTP
import Testing
@testable import ThumbServer

/// The `Codable` bodies (docs/API.md): each written with every field it must have, `null` where
/// the contract says null and nothing where it says absent, keys sorted; and read back into the
/// same type, as a node reads another's answers.
@Suite struct JSONBodyTests {
    static func text(_ body: some Encodable) -> String { String(decoding: JSONBody.encode(body), as: UTF8.self) }

    static func job(partOf: ClusterPrefetch.PartKey? = nil, reason: String? = nil) -> PrefetchJobBody {
        var counts = PrefetchCounts(id: 3, state: "running")
        counts.total = 5; counts.done = 1; counts.skipped = 2
        return PrefetchJobBody(grid: "3", counts: counts, notStoredReason: reason, partOf: partOf)
    }

    @Test func aJobIsWrittenWithANullReasonAndNoPartOf() {
        #expect(Self.text(Self.job()) == #"{"cancelled":0,"done":1,"failed":0,"grid":"3","id":3,"not_stored":0,"#
                + #""not_stored_reason":null,"skipped":2,"state":"running","total":5}"#)
        #expect(Self.text(Self.job(partOf: ClusterPrefetch.PartKey(peer: 1, id: 9), reason: "disk full: /var/cache"))
                == #"{"cancelled":0,"done":1,"failed":0,"grid":"3","id":3,"not_stored":0,"#
                + #""not_stored_reason":"disk full: /var/cache","part_of":{"id":9,"node":1},"skipped":2,"state":"running","total":5}"#)
    }

    @Test func aJobListIsWrittenAsJobs() {
        #expect(Self.text(PrefetchJobListBody(jobs: [])) == #"{"jobs":[]}"#)
        let list = PrefetchJobListBody(jobs: [Self.job(), Self.job(partOf: ClusterPrefetch.PartKey(peer: 0, id: 4))])
        let read = try? JSONDecoder().decode(PrefetchJobListBody.self, from: Data(JSONBody.encode(list)))
        #expect(read == list)
        #expect(read?.jobs[1].partOf == ClusterPrefetch.PartKey(peer: 0, id: 4))
    }

    @Test func theHealthBodyHasADiskCacheOnlyWhenDegraded() {
        #expect(Self.text(HealthBody(status: .ok)) == #"{"status":"ok"}"#)
        #expect(Self.text(HealthBody(status: .degraded, diskCache: "the cache directory /var/cache/thumbd is gone"))
                == #"{"disk_cache":"the cache directory /var/cache/thumbd is gone","status":"degraded"}"#)
        let read = try? JSONDecoder().decode(HealthBody.self, from: Data(#"{"status":"degraded","disk_cache":"gone"}"#.utf8))
        #expect(read == HealthBody(status: .degraded, diskCache: "gone"))
        #expect(Self.text(HealthBody(status: .degraded, libraryIndex: "the library index cannot be written"))
                == #"{"library_index":"the library index cannot be written","status":"degraded"}"#)
    }

    @Test func theErrorBodyEscapesWhatJSONMust() {
        let body = HTTPErrorBody(error: "bad_request", message: "say \"hi\" \\ to 한글/\u{1}\n")
        #expect(Self.text(body) == #"{"error":"bad_request","message":"say \"hi\" \\ to 한글/\u0001\n"}"#)
        #expect((try? JSONDecoder().decode(HTTPErrorBody.self, from: Data(JSONBody.encode(body)))) == body)
    }

    @Test func theServiceAnswersWithTheseBodies() throws {
        let service = try InProcessRouteTests.Service()
        let health = service.respond("GET", "/healthz")
        #expect(health.status == 200)
        #expect(String(decoding: health.body, as: UTF8.self) == "{\"status\":\"ok\"}\n")
        let missing = service.respond("GET", "/prefetch/77")
        #expect(missing.status == 404)
        #expect(String(decoding: missing.body, as: UTF8.self) == #"{"error":"not_found","message":"no such prefetch job"}"#)
        let stopped = service.respond("DELETE", "/prefetch")
        #expect(stopped.status == 200)
        #expect(String(decoding: stopped.body, as: UTF8.self) == "{\"jobs\":[]}\n")
        let started = service.respond("POST", "/prefetch", body: #"{"grid": "5", "paths": ["Landscape_1.jpg", "none.jpg"]}"#)
        #expect(started.status == 202)
        let job = try JSONDecoder().decode(PrefetchJobBody.self, from: Data(started.body))
        #expect(job.grid == "5" && job.total == 2 && job.failed == 1 && job.partOf == nil && job.notStoredReason == nil)
    }
}
