import Foundation
#if canImport(Glibc)
import Glibc
#endif
import HTTP

/// What the access log writes for each request (`access_log`), one line each.
public enum AccessLogFormat: String, Sendable, Equatable, CaseIterable {
    /// No log. `false` in the config is this. The default.
    case off
    /// thumbd's own short line (what `access_log: true` always wrote): UTC time (ISO 8601),
    /// method, target, status, body bytes, `X-Cache`, duration in ms.
    /// `2026-12-06T06:07:00Z GET /thumbnails/5/a.jpg 200 5120 MISS 41.20ms`
    case brief
    /// nginx's `combined` format (ngx_http_log_module), then three fields of thumbd's:
    /// `$remote_addr - $remote_user [$time_local] "$request" $status $body_bytes_sent
    /// "$http_referer" "$http_user_agent"` then `$request_time` (s, ms resolution), `X-Cache`
    /// and the render's ms (`Server-Timing`), `-` for those it does not have. Quoted fields are
    /// escaped as nginx's `escape=default`: `"`, `\` and bytes below 32 or above 126 as `\xXX`.
    case combined
    /// One JSON object per line, keys sorted (`AccessLogEntry.JSONLine`).
    case json

    /// The words `access_log` takes, as `--help` lists them.
    static let words = "off, brief, combined or json (false is off, true brief)"

    /// From the config's word: `off`, `brief`, `combined`, `json`, or a boolean word as
    /// `ConfigOption.boolean` reads them (`false` is `off`, `true` is `brief`: what
    /// `access_log: true` wrote before there were formats). nil for any other.
    init?(configValue text: String) {
        switch text.lowercased() {
        case "off", "false", "0", "no": self = .off
        case "brief", "true", "1", "yes", "on": self = .brief
        case "combined": self = .combined
        case "json": self = .json
        default: return nil
        }
    }

    /// The line of `entry` in this format, with its newline; nil when `off`.
    func line(_ entry: AccessLogEntry) -> String? {
        switch self {
        case .off: nil
        case .brief: entry.briefLine + "\n"
        case .combined: entry.combinedLine + "\n"
        case .json: entry.jsonLine + "\n"
        }
    }
}

/// One request as the access log writes it, whatever the format: the `HTTPExchangeRecord`
/// with the client worked out (`TrustedProxies`) and the wall-clock time it finished.
struct AccessLogEntry: Sendable {
    /// The client's address (`TrustedProxies.client`); nil when unknown (written `-`).
    var client: IPAddress?
    /// When the response was written, s since 1970 (UTC).
    var time: Double
    /// The local time's offset from UTC at `time`, s (`$time_local`'s `+0100`).
    var utcOffsetSeconds: Int
    /// Empty for a request that did not parse (400, 408, 431...).
    var method: String
    var target: String
    var version: HTTPVersion?
    var status: Int
    var bodyBytes: Int
    var referer: String?
    var userAgent: String?
    /// From the request's last byte read to the response's last byte written, ns.
    var durationNanoseconds: UInt64
    /// `X-Cache` of the response (`HIT-MEMORY`, `MISS`...).
    var cache: String?
    /// The render this request waited for, ms (`Server-Timing: render;dur=`); nil for a hit.
    var renderMilliseconds: Double?

    init(exchange: HTTPExchangeRecord, client: IPAddress?, time: Double, utcOffsetSeconds: Int) {
        self.client = client
        self.time = time
        self.utcOffsetSeconds = utcOffsetSeconds
        method = exchange.method
        target = exchange.target
        version = exchange.version
        status = exchange.status
        bodyBytes = exchange.bodyBytes
        referer = exchange.requestHeaders["Referer"]
        userAgent = exchange.requestHeaders["User-Agent"]
        durationNanoseconds = exchange.durationNanoseconds
        cache = exchange.responseHeaders["X-Cache"]
        renderMilliseconds = exchange.responseHeaders["Server-Timing"].flatMap(Self.renderMilliseconds(in:))
    }

    /// `dur` of the `render` metric of a `Server-Timing` value (W3C Server Timing).
    static func renderMilliseconds(in serverTiming: String) -> Double? {
        for metric in serverTiming.split(separator: ",") {
            let parameters = metric.split(separator: ";").map { $0.trimmingWhitespace() }
            guard parameters.first == "render" else { continue }
            for parameter in parameters.dropFirst() where parameter.hasPrefix("dur=") {
                return Double(parameter.dropFirst(4))
            }
        }
        return nil
    }

    var briefLine: String {
        let method = method.isEmpty ? "-" : method, target = target.isEmpty ? "-" : target
        return "\(Date(timeIntervalSince1970: time).ISO8601Format()) \(method) \(target) \(status) \(bodyBytes) "
            + "\(cache ?? "-") \(String(format: "%.2f", Double(durationNanoseconds) / 1e6))ms"
    }

    /// `METHOD TARGET HTTP/1.1` as received; `-` for a request that did not parse.
    var requestLine: String {
        guard !method.isEmpty else { return "-" }
        return "\(method) \(target)" + (version.map { " \($0)" } ?? "")
    }

    var combinedLine: String {
        let render = renderMilliseconds.map { String(format: "%.1f", $0) } ?? "-"
        return "\(client?.description ?? "-") - - [\(Self.localTime(time, offset: utcOffsetSeconds))] "
            + "\"\(Self.escaped(requestLine))\" \(status) \(bodyBytes) \"\(Self.escaped(referer ?? "-"))\" "
            + "\"\(Self.escaped(userAgent ?? "-"))\" \(String(format: "%.3f", Double(durationNanoseconds) / 1e9)) "
            + "\(Self.escaped(cache ?? "-")) \(render)"
    }

    /// The `json` format's object. Absent values are left out.
    struct JSONLine: Encodable {
        /// UTC, ISO 8601 with ms: `2026-12-06T06:07:00.125Z`.
        var time: String
        var remoteAddr: String?
        var method: String?
        var target: String?
        var `protocol`: String?
        var status: Int
        var bodyBytes: Int
        var referer: String?
        var userAgent: String?
        /// From the request's last byte read to the response's last byte written, ms (0.01 ms).
        var requestMs: Double
        var cache: String?
        var renderMs: Double?
    }

    var jsonLine: String {
        let object = JSONLine(
            time: Date(timeIntervalSince1970: time).formatted(Date.ISO8601FormatStyle(includingFractionalSeconds: true)),
            remoteAddr: client?.description, method: method.isEmpty ? nil : method, target: method.isEmpty ? nil : target,
            protocol: version?.description, status: status, bodyBytes: bodyBytes, referer: referer, userAgent: userAgent,
            requestMs: (Double(durationNanoseconds) / 10_000).rounded() / 100, cache: cache, renderMs: renderMilliseconds)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        encoder.keyEncodingStrategy = .convertToSnakeCase
        return (try? encoder.encode(object)).map { String(decoding: $0, as: UTF8.self) } ?? "{}"
    }

    /// nginx's `$time_local`: `06/Dec/2026:07:07:00 +0100`, `time` shifted by `offset` s.
    static func localTime(_ time: Double, offset: Int) -> String {
        var seconds = time_t(time.rounded(.down)) + time_t(offset)
        var parts = tm()
        gmtime_r(&seconds, &parts)
        let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
        let sign = offset < 0 ? "-" : "+"
        return String(format: "%02d/", parts.tm_mday) + months[Int(parts.tm_mon)]
            + String(format: "/%04d:%02d:%02d:%02d ", Int32(parts.tm_year) + 1900, parts.tm_hour, parts.tm_min, parts.tm_sec)
            + sign + String(format: "%02d%02d", Int32(abs(offset) / 3600), Int32(abs(offset) % 3600 / 60))
    }

    /// nginx's `escape=default`: `"`, `\` and every byte below 32 or above 126 as `\xXX`.
    static func escaped(_ text: String) -> String {
        var out = [UInt8]()
        out.reserveCapacity(text.utf8.count)
        for byte in text.utf8 {
            if byte < 32 || byte > 126 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") {
                out += Array(String(format: "\\x%02X", byte).utf8)
            } else {
                out.append(byte)
            }
        }
        return String(decoding: out, as: UTF8.self)
    }
}
