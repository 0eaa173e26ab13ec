/// Decoding a chunked request body (RFC 9112 §7.1): extensions and trailers are read and
/// ignored; the de-chunked size is held to `maxBodyBytes`.
extension HTTPRequestParser {
    /// Longest chunk-size line (size, extensions, CRLF) accepted, in bytes.
    static let maxChunkLineBytes = 4096

    /// Consumes as much of the chunked body as has arrived; true when it is complete.
    mutating func parseChunks() throws(HTTPParseError) -> Bool {
        while true {
            switch phase {
            case .chunkSize:
                guard let lf = indexOfLF(from: start) else {
                    if buffer.count - start > Self.maxChunkLineBytes { throw .badRequest("Chunk size line too long.") }
                    return false
                }
                if lf - start > Self.maxChunkLineBytes { throw .badRequest("Chunk size line too long.") }
                let size = try buffer.withUnsafeBufferPointer { (p) throws(HTTPParseError) -> Int in
                    try Self.parseChunkSize(p, start, lf)
                }
                start = lf + 1
                if size > limits.maxBodyBytes - body.count { throw .payloadTooLarge }
                if size == 0 {
                    phase = .trailer
                    trailerBytes = 0
                } else {
                    if body.isEmpty { body.reserveCapacity(size) }
                    bodyRemaining = size
                    phase = .chunkData
                }
            case .chunkData:
                let take = min(bodyRemaining, buffer.count - start)
                if take == 0 { return false }
                body.append(contentsOf: buffer[start..<(start + take)])
                start += take
                bodyRemaining -= take
                if bodyRemaining == 0 { phase = .chunkDataEnd }
            case .chunkDataEnd:
                guard start < buffer.count else { return false }
                if buffer[start] == Self.lf {
                    start += 1
                } else if buffer[start] == Self.cr {
                    guard start + 1 < buffer.count else { return false }
                    guard buffer[start + 1] == Self.lf else { throw .badRequest("Chunk data not followed by CRLF.") }
                    start += 2
                } else {
                    throw .badRequest("Chunk data longer than its size.")
                }
                phase = .chunkSize
            case .trailer:
                guard let lf = indexOfLF(from: start) else {
                    if trailerBytes + buffer.count - start > limits.maxHeaderBytes + 2 { throw .headersTooLarge }
                    return false
                }
                let contentEnd = (lf > start && buffer[lf - 1] == Self.cr) ? lf - 1 : lf
                let isEmpty = contentEnd == start
                if !isEmpty {
                    _ = try buffer.withUnsafeBufferPointer { (p) throws(HTTPParseError) -> (Int, Int, Int) in
                        try Self.splitField(p, start, contentEnd)
                    }
                }
                trailerBytes += lf + 1 - start
                start = lf + 1
                if isEmpty { return true }
                if trailerBytes > limits.maxHeaderBytes { throw .headersTooLarge }
            case .head, .fixedBody:
                return true
            }
        }
    }

    /// `chunk-size [ chunk-ext ] CRLF` in `p[start..<lf]`: 1*HEXDIG, then extensions that are
    /// skipped after a check for control bytes. A size of more than 15 hex digits → 413.
    static func parseChunkSize(_ p: UnsafeBufferPointer<UInt8>, _ start: Int,
                               _ lf: Int) throws(HTTPParseError) -> Int {
        var end = lf
        if end > start && p[end - 1] == cr { end -= 1 }
        var i = start
        var size = 0
        while i < end, let digit = hexValue(p[i]) {
            if i - start >= 15 { throw .payloadTooLarge }
            size = size << 4 | digit
            i += 1
        }
        guard i > start else { throw .badRequest("Invalid chunk size.") }
        while i < end && (p[i] == sp || p[i] == htab) { i += 1 }
        if i < end {
            guard p[i] == UInt8(ascii: ";") else { throw .badRequest("Invalid chunk size.") }
            for j in i..<end where !HTTPByteClass.isFieldValue(p[j]) {
                throw .badRequest("Invalid byte in a chunk extension.")
            }
        }
        return size
    }

    @inline(__always) static func hexValue(_ b: UInt8) -> Int? {
        switch b {
        case 48...57: Int(b - 48)
        case 65...70: Int(b - 55)
        case 97...102: Int(b - 87)
        default: nil
        }
    }
}
