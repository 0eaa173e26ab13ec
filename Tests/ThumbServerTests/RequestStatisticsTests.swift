import HTTP
import Testing
@testable import ThumbServer

/// The request counters behind `/stats` `requests` and `thumbd_http_request_duration_seconds`.
@Suite struct RequestStatisticsTests {
    func exchange(_ status: Int, ms: Double, loop: Int = 0) -> HTTPExchangeRecord {
        var record = HTTPExchangeRecord(method: "GET", target: "/", status: status, bodyBytes: 0,
                                        durationNanoseconds: UInt64(ms * 1e6), responseHeaders: HTTPHeaders())
        record.loopIndex = loop
        return record
    }

    /// With one shard, and with the exchanges spread over the shards of three event loops (a
    /// loop index beyond them wraps): the same sums.
    @Test(arguments: [1, 3]) func countsByStatusAndCumulativeDurationBuckets(shards: Int) {
        let statistics = RequestStatistics(shards: shards)
        statistics.record(exchange(200, ms: 0.3, loop: 0))
        statistics.record(exchange(200, ms: 0.5, loop: 1))    // on the first bound: in its bucket (le)
        statistics.record(exchange(404, ms: 0.7, loop: 2))
        statistics.record(exchange(42, ms: 3000, loop: 4))   // sent as a 500; beyond the last bound
        let s = statistics.snapshot
        #expect(s.total == 4)
        #expect(s.byStatus == [200: 2, 404: 1, 500: 1])
        // Bounds 0.5 ms, 1 ms, 2.5 ms, …, 2.5 s: cumulative counts, the 3 s request only in +Inf.
        #expect(s.durationBuckets == [2, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3])
        #expect(abs(s.durationSumSeconds - 3.0015) < 1e-9)
    }
}
