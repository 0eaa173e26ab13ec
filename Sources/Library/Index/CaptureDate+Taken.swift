import Rendering

extension CaptureDate {
    /// 1971-01-01T00:00:00Z, ms since the epoch: a video's container date before it is a clock
    /// that was never set, not a capture time. A zero (Unix or QuickTime 1904, which FFmpeg reads
    /// as Unix seconds below 2,082,844,800) lands in 1970.
    static let earliestVideoDateMilliseconds: Int64 = 31_536_000_000
    /// How far a video's container date may be after its file's modification time and still be a
    /// capture time, ms: a day, for cameras that write their local time as UTC (offsets up to 14 h).
    static let videoDateSlackMilliseconds: Int64 = 86_400_000

    /// The listing's `taken` for a file whose header is `info` and whose modification time is
    /// `modifiedNanoseconds` (ns since the epoch), docs/API.md "Listing": the capture time in the
    /// header (EXIF DateTimeOriginal; a video's container date), else the modification time.
    /// A video's container date is not taken when it lies in 1970 (an unset clock: 0, or
    /// QuickTime's 1904 epoch as FFmpeg reads it) or more than a day after the modification time
    /// (a file is not recorded after it was last written: all-ones `0xFFFFFFFF` reads as 2040).
    static func taken(header info: SourceInfo, modifiedNanoseconds: Int64) -> CaptureDate {
        let modified = CaptureDate(epochMilliseconds: modifiedNanoseconds / 1_000_000)
        guard let text = info.dateTimeOriginal,
              let taken = CaptureDate(exifDateTime: text, offset: info.offsetTimeOriginal) else { return modified }
        if info.isVideo, taken.epochMilliseconds < earliestVideoDateMilliseconds
            || taken.epochMilliseconds > modified.epochMilliseconds + videoDateSlackMilliseconds {
            return modified
        }
        return taken
    }
}
