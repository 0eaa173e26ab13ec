import CVideoShim

extension SourceInfo {
    /// The EXIF orientation that turns a frame stored unrotated upright when the container's
    /// display matrix says `degrees` clockwise: 90 → 6, 180 → 3, 270 → 8, anything else → 1.
    static func orientation(clockwiseRotation degrees: Int) -> Int {
        switch degrees {
        case 90: 6
        case 180: 3
        case 270: 8
        default: 1
        }
    }

    /// From the shim's container header: the stored size, the displayed size (the sample aspect
    /// ratio applied to the width, the height kept: 720x480 at 32:27 is shown 853x480; then the
    /// display rotation, as the orientation that applies it, swaps the sides), the duration,
    /// and the creation time as EXIF-style text
    /// (`dateTimeOriginal`, `offsetTimeOriginal`) so the listing reads it as a photo's:
    /// QuickTime's `com.apple.quicktime.creationdate` with its own offset, else
    /// `creation_time` as UTC.
    init(video header: cvideo_header) {
        var header = header
        let container = withUnsafeBytes(of: &header.container) { String(cBytes: $0) }
        let quickTime = withUnsafeBytes(of: &header.quicktime_creation) { String(cBytes: $0) }
        let creation = withUnsafeBytes(of: &header.creation_time) { String(cBytes: $0) }
        let taken = Self.videoDate(quickTime, keepOffset: true) ?? Self.videoDate(creation, keepOffset: false)
        self.init(width: Int(header.width), height: Int(header.height),
                  orientation: Self.orientation(clockwiseRotation: Int(header.rotation)), pages: 1,
                  hasAlpha: false, loader: "ffmpeg:" + (container.split(separator: ",").first.map(String.init) ?? container),
                  dateTimeOriginal: taken?.dateTime, offsetTimeOriginal: taken?.offset,
                  needsColourTransform: false)
        durationMilliseconds = header.duration_ms >= 0 ? Int(header.duration_ms) : 0
        // Anamorphic: stretched before it is turned (the poster frame is too, in the helper).
        let shownWidth = Int(header.display_width)
        if shownWidth > 0 && shownWidth != width {
            if orientation >= 5 { displayHeight = shownWidth } else { displayWidth = shownWidth }
        }
    }

    /// An ISO 8601 container date ("2024-05-01T12:30:00+0900", "2024-05-01T03:30:00.000000Z")
    /// as EXIF text: "2024:05:01 12:30:00" and an offset "+09:00" (`keepOffset`; with it false,
    /// or none written, "+00:00": the time is UTC). Nil when it does not start with a date and time,
    /// or its year, month or day is zero ("0000-00-00T00:00:00Z": no date, so the other tag is read).
    static func videoDate(_ text: String, keepOffset: Bool) -> (dateTime: String, offset: String)? {
        let characters = Array(text.utf8)
        guard characters.count >= 19 else { return nil }
        let digitsAt = [0, 1, 2, 3, 5, 6, 8, 9, 11, 12, 14, 15, 17, 18]
        guard digitsAt.allSatisfy({ (0x30...0x39).contains(characters[$0]) }) else { return nil }
        let date = String(decoding: characters[0..<19], as: UTF8.self)
        guard let year = Int(date.prefix(4)), let month = Int(date.dropFirst(5).prefix(2)),
              let day = Int(date.dropFirst(8).prefix(2)), year > 0, month > 0, day > 0 else { return nil }
        let dateTime = date.prefix(10).replacingDashes() + " " + date.suffix(8)
        var offset = "+00:00"
        if keepOffset, let sign = characters[19...].firstIndex(where: { $0 == UInt8(ascii: "+") || $0 == UInt8(ascii: "-") }) {
            let digits = characters[(sign + 1)...].filter { (0x30...0x39).contains($0) }
            if digits.count == 4 {
                offset = String(UnicodeScalar(characters[sign])) + String(decoding: digits[0..<2], as: UTF8.self)
                    + ":" + String(decoding: digits[2..<4], as: UTF8.self)
            }
        }
        return (dateTime, offset)
    }
}

extension Substring {
    /// "2024-05-01" as EXIF writes it, "2024:05:01".
    fileprivate func replacingDashes() -> String {
        String(map { $0 == "-" ? ":" : $0 })
    }
}
