import Foundation
import Testing
@testable import ThumbServer

/// How the parts of a job on several nodes add up (`PrefetchCounts`), and how a forward is cut
/// into bodies a node accepts (`ClusterPrefetch.chunks`).
@Suite struct PrefetchCountsTests {
    static func counts(_ state: String, total: Int, done: Int = 0, skipped: Int = 0, cancelled: Int = 0) -> PrefetchCounts {
        var c = PrefetchCounts(id: 7, state: state)
        c.total = total; c.done = done; c.skipped = skipped; c.cancelled = cancelled
        return c
    }

    @Test func partsAddUpAndTheJobRunsWhileAnyPartRuns() {
        let local = Self.counts("done", total: 4, done: 3, skipped: 1)
        let sum = local.adding([Self.counts("running", total: 10, done: 2), Self.counts("done", total: 6, skipped: 6)])
        #expect(sum.id == 7 && sum.total == 20 && sum.done == 5 && sum.skipped == 7 && sum.outstanding == 8)
        #expect(sum.state == "running")
        #expect(local.adding([Self.counts("done", total: 2, done: 2)]).state == "done")
        #expect(local.adding([Self.counts("cancelled", total: 2, cancelled: 2), Self.counts("done", total: 1, done: 1)]).state == "cancelled")
        #expect(local.adding([]) == local)
    }

    @Test func aPartWhoseNodeDidNotAnswerAStopCountsItsOutstandingItemsCancelled() {
        let part = Self.counts("running", total: 10, done: 3, cancelled: 1).stopped()
        #expect(part.state == "cancelled" && part.cancelled == 7 && part.outstanding == 0)
    }

    @Test func theJobBodyOfAnotherNodeIsReadOrRefused() throws {
        let text = #"{"id":3,"grid":"3","state":"running","total":5,"done":1,"skipped":2,"failed":0,"not_stored":0,"cancelled":0,"not_stored_reason":null}"#
        let job = try JSONDecoder().decode(PrefetchJobBody.self, from: Data(text.utf8))
        let counts = job.counts
        #expect(counts.id == 3 && counts.state == "running" && counts.total == 5 && counts.done == 1 && counts.skipped == 2)
        #expect(job.grid == "3" && job.notStoredReason == nil && job.partOf == nil)
        for broken in [#"{"id":3}"#, text.replacingOccurrences(of: #""done":1"#, with: #""done":-1"#),
                       text.replacingOccurrences(of: "running", with: "paused"),
                       text.replacingOccurrences(of: #""total":5"#, with: #""total":"5""#),
                       text.replacingOccurrences(of: #","not_stored_reason":null"#, with: ""),
                       text.replacingOccurrences(of: #""id":3"#, with: #""id":true"#),
                       text.replacingOccurrences(of: "}", with: #","part_of":{"node":1}}"#)] {
            #expect((try? JSONDecoder().decode(PrefetchJobBody.self, from: Data(broken.utf8))) == nil, "\(broken)")
        }
    }

    @Test func aForwardIsCutIntoBodiesANodeAccepts() {
        // Each path counts 3 x 100,000 + 3 bytes: two fit 768 KiB, three do not.
        let entries = (0..<5).map { (path: [UInt8](repeating: 0x61, count: 100_000), item: $0) }
        let chunks = ClusterPrefetch.chunks(of: entries)
        #expect(chunks.map { $0.map(\.item) } == [[0, 1], [2, 3], [4]])
        // One path longer than the limit still goes, alone.
        let long = ClusterPrefetch.chunks(of: [(path: [UInt8](repeating: 0x61, count: 300_000), item: 0), (path: [0x62], item: 1)])
        #expect(long.map { $0.map(\.item) } == [[0], [1]])
        let small = ClusterPrefetch.chunks(of: (0..<1000).map { (path: Array("2024/IMG_\($0).jpg".utf8), item: $0) })
        #expect(small.count == 1 && small[0].count == 1000)
    }
}
