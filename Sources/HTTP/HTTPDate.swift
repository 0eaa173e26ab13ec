#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The `Date` header line (RFC 9110 §6.6.1) in IMF-fixdate form (RFC 9110 §5.6.7),
/// e.g. `Date: Sun, 06 Nov 1994 08:49:37 GMT\r\n`, formatted at most once a second.
///
/// Not thread-safe: each worker (`HTTPWorker`) owns one, confined to its event-loop thread, so
/// no lock is taken per response.
struct HTTPDateCache {
    private var second: time_t = -1
    private(set) var line: [UInt8] = []

    /// The header line for the current second, reformatting only when the second changed.
    mutating func currentLine() -> [UInt8] {
        let now = time(nil)
        if now != second {
            second = now
            line = Self.headerLine(for: now)
        }
        return line
    }

    /// Formats `Date: <IMF-fixdate>\r\n` for a Unix time, in seconds.
    static func headerLine(for t: time_t) -> [UInt8] {
        var copy = t
        var tm = tm()
        gmtime_r(&copy, &tm)
        var out: [UInt8] = []
        out.reserveCapacity(37)
        out.append(contentsOf: "Date: ".utf8)
        out.append(contentsOf: days[Int(tm.tm_wday)].utf8)
        out.append(contentsOf: ", ".utf8)
        appendTwoDigits(&out, Int(tm.tm_mday))
        out.append(0x20)
        out.append(contentsOf: months[Int(tm.tm_mon)].utf8)
        out.append(0x20)
        let year = Int(tm.tm_year) + 1900
        appendTwoDigits(&out, year / 100)
        appendTwoDigits(&out, year % 100)
        out.append(0x20)
        appendTwoDigits(&out, Int(tm.tm_hour))
        out.append(UInt8(ascii: ":"))
        appendTwoDigits(&out, Int(tm.tm_min))
        out.append(UInt8(ascii: ":"))
        appendTwoDigits(&out, Int(tm.tm_sec))
        out.append(contentsOf: " GMT\r\n".utf8)
        return out
    }

    private static let days = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"]
    private static let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                 "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]

    private static func appendTwoDigits(_ out: inout [UInt8], _ n: Int) {
        out.append(UInt8(48 + n / 10 % 10))
        out.append(UInt8(48 + n % 10))
    }
}
