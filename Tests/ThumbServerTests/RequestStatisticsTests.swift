import HTTP
import Testing
@testable import ThumbServer

/// The request counters behind `/stats` `requests` and `thumbd_http_request_duration_seconds`.
@Suite struct RequestStatisticsTests {
    func exchange(_ status: Int, ms: Double) -> HTTPExchangeRecord {
        HTTPExchangeRecord(method: "GET", target: "/", status: status, bodyBytes: 0,
                           durationNanoseconds: UInt64(ms * 1e6), responseHeaders: HTTPHeaders())
    }

    @Test func countsByStatusAndCumulativeDurationBuckets() {
        let statistics = RequestStatistics()
        statistics.record(exchange(200, ms: 0.3))
        statistics.record(exchange(200, ms: 0.5))    // on the first bound: in its bucket (le)
        statistics.record(exchange(404, ms: 0.7))
        statistics.record(exchange(42, ms: 3000))   // sent as a 500; beyond the last bound
        let s = statistics.snapshot
        #expect(s.total == 4)
        #expect(s.byStatus == [200: 2, 404: 1, 500: 1])
        // Bounds 0.5 ms, 1 ms, 2.5 ms, …, 2.5 s: cumulative counts, the 3 s request only in +Inf.
        #expect(s.durationBuckets == [2, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3])
        #expect(abs(s.durationSumSeconds - 3.0015) < 1e-9)
    }
}
