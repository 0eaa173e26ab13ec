import Foundation

/// A capture or modification time: an instant plus the UTC offset it was recorded in, written as
/// ISO 8601 with that offset (docs/API.md, "Listing"). Equal when both the instant and the offset
/// are; not `Comparable`: the listing orders by the instant alone (`AssetRecord.newestFirst`), so
/// one instant in two offsets is a tie there while it is two values here, and no one `<` could
/// agree with both.
public struct CaptureDate: Sendable, Equatable {
    /// Milliseconds since the Unix epoch (UTC).
    public var epochMilliseconds: Int64
    /// Offset from UTC the time was recorded in, minutes.
    public var offsetMinutes: Int

    /// The instant `epochMilliseconds` (ms since the epoch, UTC) as recorded `offsetMinutes`
    /// from UTC (`0`, UTC itself, by default).
    public init(epochMilliseconds: Int64, offsetMinutes: Int = 0) {
        self.epochMilliseconds = epochMilliseconds
        self.offsetMinutes = offsetMinutes
    }

    /// From EXIF `DateTimeOriginal` ("YYYY:MM:DD HH:MM:SS") and `OffsetTimeOriginal` ("+09:00");
    /// without an offset the time is read as UTC (docs/API.md). Nil when the text is not a valid date
    /// (cameras write "0000:00:00 00:00:00" when unset).
    public init?(exifDateTime: String, offset: String?) {
        let digits = exifDateTime.trimmingCharacters(in: .whitespaces).split(whereSeparator: { ":- T".contains($0) })
        guard digits.count >= 6, let year = Int(digits[0]), let month = Int(digits[1]), let day = Int(digits[2]),
              let hour = Int(digits[3]), let minute = Int(digits[4]), let second = Int(digits[5].prefix(2)),
              (1...9999).contains(year), (1...12).contains(month), (1...31).contains(day),
              (0...23).contains(hour), (0...59).contains(minute), (0...60).contains(second) else { return nil }
        var offsetMinutes = 0
        if let offset = offset?.trimmingCharacters(in: .whitespaces), offset.count == 6,
           let sign = offset.first, sign == "+" || sign == "-",
           let h = Int(offset.dropFirst().prefix(2)), let m = Int(offset.suffix(2)), h <= 14, m < 60 {
            offsetMinutes = (sign == "-" ? -1 : 1) * (h * 60 + m)
        }
        var components = DateComponents(year: year, month: month, day: day, hour: hour, minute: minute, second: second)
        components.timeZone = TimeZone(secondsFromGMT: offsetMinutes * 60)
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = components.timeZone!
        guard let date = calendar.date(from: components) else { return nil }
        self.init(epochMilliseconds: Int64((date.timeIntervalSince1970 * 1000).rounded()), offsetMinutes: offsetMinutes)
    }

    /// "2024-05-01T12:30:00+09:00" (seconds precision; milliseconds when not whole).
    public var iso8601: String {
        let shifted = epochMilliseconds + Int64(offsetMinutes) * 60_000
        var seconds = shifted.quotientAndRemainder(dividingBy: 1000)
        if seconds.remainder < 0 { seconds = (seconds.quotient - 1, seconds.remainder + 1000) }
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(secondsFromGMT: 0)!
        let c = calendar.dateComponents([.year, .month, .day, .hour, .minute, .second],
                                        from: Date(timeIntervalSince1970: TimeInterval(seconds.quotient)))
        func two(_ v: Int?) -> String { let v = v ?? 0; return v < 10 ? "0\(v)" : "\(v)" }
        let year = String(c.year ?? 1970)
        var text = "\(String(repeating: "0", count: max(0, 4 - year.count)))\(year)-\(two(c.month))-\(two(c.day))T\(two(c.hour)):\(two(c.minute)):\(two(c.second))"
        if seconds.remainder != 0 {
            let ms = String(seconds.remainder)
            text += "." + String(repeating: "0", count: 3 - ms.count) + ms
        }
        let sign = offsetMinutes < 0 ? "-" : "+"
        let magnitude = abs(offsetMinutes)
        return text + sign + two(magnitude / 60) + ":" + two(magnitude % 60)
    }
}
