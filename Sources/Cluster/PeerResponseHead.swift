/// A response's status line and header fields (RFC 9112 §4, §5), parsed from the bytes before
/// the empty line, and the body framing they give (RFC 9112 §6.3). For `PeerClient`.
struct PeerResponseHead {
    /// How the body that follows the head ends.
    enum Framing: Equatable {
        /// No body: a response to HEAD, or 1xx, 204, 304 (RFC 9112 §6.3 rule 1).
        case none
        /// Exactly this many bytes (`Content-Length`, rule 6); `Int.max` for a length too long
        /// to hold.
        case length(Int)
        /// Up to the end of the connection (no `Content-Length`, rule 8).
        case untilClose
    }

    var status: Int
    var reason: String
    var headers: [(name: String, value: String)]

    /// The length of the head in `bytes`, up to and including the empty line that ends it (CRLF
    /// CRLF, or bare LFs, which RFC 9112 §2.2 lets a recipient accept); nil while it has not
    /// ended.
    static func length(in bytes: [UInt8]) -> Int? {
        var i = 0
        while let lf = bytes[i...].firstIndex(of: 10) {
            if lf + 1 < bytes.count, bytes[lf + 1] == 10 { return lf + 2 }
            if lf + 2 < bytes.count, bytes[lf + 1] == 13, bytes[lf + 2] == 10 { return lf + 3 }
            i = lf + 1
        }
        return nil
    }

    /// Parses `head` (the bytes `length(in:)` measured), naming `server` in failures.
    /// - Throws: `PeerClient.Failure.malformedResponse` for a status line other than
    ///   `HTTP/1.x NNN [reason]` (RFC 9112 §4), a field line without a token name and colon or
    ///   with whitespace before the colon (§5.1), or a folded line (obs-fold, §5.2; refused).
    static func parse(_ head: ArraySlice<UInt8>, server: String) throws(PeerClient.Failure) -> PeerResponseHead {
        func malformed(_ reason: String) -> PeerClient.Failure { .malformedResponse(server: server, reason: reason) }
        var lines = head.split(separator: 10, omittingEmptySubsequences: false).map { line in
            line.last == 13 ? line.dropLast() : line
        }
        while lines.last?.isEmpty == true { lines.removeLast() }
        guard let statusLine = lines.first else { throw malformed("empty status line") }

        // status-line = HTTP-version SP status-code SP [ reason-phrase ]
        let bytes = Array(statusLine)
        let prefix = Array("HTTP/1.".utf8)
        guard bytes.count >= 12, Array(bytes[0..<7]) == prefix, isDigit(bytes[7]), bytes[8] == 32,
              bytes[9...11].allSatisfy(isDigit), bytes.count == 12 || bytes[12] == 32 else {
            throw malformed("status line \(quoted(bytes)) is not HTTP/1.x NNN [reason]")
        }
        let status = bytes[9...11].reduce(0) { $0 * 10 + Int($1 - 48) }
        guard (100...599).contains(status) else { throw malformed("status code \(status) is not 100...599 (RFC 9110 §15)") }
        let reason = bytes.count > 13 ? String(decoding: bytes[13...], as: UTF8.self) : ""

        var headers: [(name: String, value: String)] = []
        for line in lines.dropFirst() {
            if line.first == 32 || line.first == 9 { throw malformed("folded header line (obs-fold) \(quoted(Array(line)))") }
            guard let colon = line.firstIndex(of: 58), colon > line.startIndex,
                  line[..<colon].allSatisfy(isTokenCharacter) else {
                throw malformed("header line \(quoted(Array(line))) is not NAME: VALUE")
            }
            var value = line[(colon + 1)...]
            while let first = value.first, first == 32 || first == 9 { value = value.dropFirst() }
            while let last = value.last, last == 32 || last == 9 { value = value.dropLast() }
            headers.append((String(decoding: line[..<colon], as: UTF8.self), String(decoding: value, as: UTF8.self)))
        }
        return PeerResponseHead(status: status, reason: reason, headers: headers)
    }

    /// The body's framing (RFC 9112 §6.3), for a response to a HEAD request when `toHead`.
    /// - Throws: `PeerClient.Failure.malformedResponse` for any `Transfer-Encoding` (refused,
    ///   not decoded), or `Content-Length` values that are not digits or differ (rule 5).
    func framing(toHead: Bool, server: String) throws(PeerClient.Failure) -> Framing {
        if toHead || status < 200 || status == 204 || status == 304 { return .none }
        if let coding = headers.first(where: { $0.name.lowercased() == "transfer-encoding" }) {
            throw .malformedResponse(server: server, reason: "Transfer-Encoding \(coding.value) is not supported (only Content-Length framing)")
        }
        // Several fields, or a list, are allowed when every value is the same (RFC 9110 §8.6).
        let values = headers.filter { $0.name.lowercased() == "content-length" }
            .flatMap { $0.value.split(separator: ",", omittingEmptySubsequences: false) }
            .map { $0.trimmingSpaces() }
        guard let first = values.first else { return .untilClose }
        guard values.allSatisfy({ $0 == first }), !first.isEmpty, first.utf8.allSatisfy(Self.isDigit) else {
            throw .malformedResponse(server: server, reason: "Content-Length \(values.joined(separator: ", ")) is not one decimal length")
        }
        let digits = first.drop { $0 == "0" }
        return .length(digits.count > 15 ? Int.max : Int(digits) ?? 0)
    }

    private static func isDigit(_ byte: UInt8) -> Bool { byte >= 48 && byte <= 57 }

    /// tchar (RFC 9110 §5.6.2): the characters of a field name.
    private static func isTokenCharacter(_ byte: UInt8) -> Bool {
        if isDigit(byte) || (byte | 0x20 >= 97 && byte | 0x20 <= 122) { return true }
        return Array("!#$%&'*+-.^_`|~".utf8).contains(byte)
    }

    /// `bytes` quoted for an error message: at most 80 of them, control bytes as `?`.
    private static func quoted(_ bytes: [UInt8]) -> String {
        let shown = bytes.prefix(80).map { $0 < 32 || $0 == 127 ? UInt8(ascii: "?") : $0 }
        return "\"" + String(decoding: shown, as: UTF8.self) + (bytes.count > 80 ? "…\"" : "\"")
    }
}

extension Substring {
    /// Without leading and trailing spaces and tabs (OWS, RFC 9110 §5.6.3).
    fileprivate func trimmingSpaces() -> String {
        String(drop { $0 == " " || $0 == "\t" }.reversed().drop { $0 == " " || $0 == "\t" }.reversed())
    }
}
