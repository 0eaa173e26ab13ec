import Foundation
import HTTP

/// One line per request on stdout: time, method, target, status, body bytes, cache tier and
/// duration in ms. Lines are written from one serial queue so they never interleave.
final class AccessLog: Sendable {
    private let queue = DispatchQueue(label: "thumbd.access-log")

    func write(_ exchange: HTTPExchangeRecord) {
        let tier = exchange.responseHeaders["X-Cache"] ?? "-"
        let ms = Double(exchange.durationNanoseconds) / 1e6
        queue.async {
            // A request that did not parse (400, 408, 431...) has no method or target: "-".
            let method = exchange.method.isEmpty ? "-" : exchange.method
            let target = exchange.target.isEmpty ? "-" : exchange.target
            let line = "\(Date().ISO8601Format()) \(method) \(target) \(exchange.status) "
                + "\(exchange.bodyBytes) \(tier) \(String(format: "%.2f", ms))ms\n"
            var bytes = Array(line.utf8)
            _ = bytes.withUnsafeMutableBytes { Foundation.write(STDOUT_FILENO, $0.baseAddress, $0.count) }
        }
    }
}
