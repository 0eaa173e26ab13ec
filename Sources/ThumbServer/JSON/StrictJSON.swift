import Foundation

/// JSON read by RFC 8259 and nothing more lenient: the one home of the rules that request bodies
/// (`POST /prefetch`, docs/API.md "Prefetch") and the config file (README, "Configuration")
/// share. Foundation's parsers on Linux accept a trailing comma (`[1,]`, `{"a": 1,}`) and
/// duplicate keys (`JSONDecoder` keeps the first, `JSONSerialization` the last), which a typo or
/// a merge leaves behind and which then mean something else in silence. `syntaxError(in:)`
/// finds those, comments (JSON has none) and any other syntax error, with its position, before
/// Foundation reads the values: it checks the text's shape only and builds no values.
enum StrictJSON {
    /// Where a text stops being JSON, and why.
    struct SyntaxError: Error, Equatable, CustomStringConvertible {
        /// Bytes from the start of the text (0-based, a byte order mark included).
        var offset: Int
        /// 1-based.
        var line: Int
        /// 1-based, in characters (UTF-8 sequences) from the start of the line.
        var column: Int
        /// What is wrong there, e.g. `a trailing comma before '}'`.
        var problem: String

        var description: String { "line \(line), column \(column) (byte \(offset)): \(problem)" }
    }

    /// The first place `text` is not strict JSON (RFC 8259 §2-§7: one value, no trailing commas,
    /// no comments, no control characters in strings), or a key repeated within one object
    /// (keys compared after their escapes are decoded, as code points: `"a"` and `"\u0061"` are
    /// one key); nil when there is none. UTF-8, with or without a byte order mark; UTF-16 and
    /// UTF-32 (which Foundation also reads) are checked in their UTF-8 form.
    static func syntaxError(in text: [UInt8]) -> SyntaxError? {
        var bytes = text
        if let transcoded = utf8(ofWide: text) { bytes = transcoded }
        var scanner = Scanner(bytes: bytes)
        return scanner.firstError()
    }

    /// `text` in UTF-8 when it is UTF-16 or UTF-32 (by its byte order mark, or the NULs of its
    /// first two bytes, RFC 4627 §3); nil when it is UTF-8 already.
    private static func utf8(ofWide text: [UInt8]) -> [UInt8]? {
        guard text.count >= 2 else { return nil }
        let encoding: String.Encoding
        switch (text[0], text[1], text.count >= 4 ? text[2] : 1, text.count >= 4 ? text[3] : 1) {
        case (0, 0, _, _): encoding = .utf32BigEndian
        case (0xFF, 0xFE, 0, 0), (_, 0, 0, 0): encoding = .utf32LittleEndian
        case (0xFE, 0xFF, _, _), (0, _, _, _): encoding = .utf16BigEndian
        case (0xFF, 0xFE, _, _), (_, 0, _, _): encoding = .utf16LittleEndian
        default: return nil
        }
        return String(data: Data(text), encoding: encoding).map { Array($0.utf8) }
    }

    /// A walk over the text's tokens with a stack of open containers; values are skipped, keys
    /// remembered per object.
    private struct Scanner {
        let bytes: [UInt8]
        var i = 0

        init(bytes: [UInt8]) {
            self.bytes = bytes
            if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { i = 3 }
        }

        /// What may come next.
        private enum Expect { case value, valueOrEnd, key, keyOrEnd, colon, commaOrEnd, end }

        mutating func firstError() -> SyntaxError? {
            var open: [Set<[UInt8]>?] = []   // per open container: an object's keys, nil for an array
            var expect = Expect.value
            var lastComma: Int?   // where the latest comma stands: a trailing one is named there
            while true {
                skipWhitespace()
                guard i < bytes.count else {
                    if expect == .end { return nil }
                    return error(open.isEmpty && expect == .value ? "there is no JSON value" : "the text ends early")
                }
                let byte = bytes[i]
                if byte == UInt8(ascii: "/") { return error("JSON has no comments (// or /* */)") }
                switch expect {
                case .value, .valueOrEnd:
                    if expect == .valueOrEnd && byte == UInt8(ascii: "]") {
                        open.removeLast()
                        i += 1
                        expect = open.isEmpty ? .end : .commaOrEnd
                    } else if byte == UInt8(ascii: "{") {
                        open.append([])
                        i += 1
                        expect = .keyOrEnd
                    } else if byte == UInt8(ascii: "[") {
                        open.append(nil)
                        i += 1
                        expect = .valueOrEnd
                    } else if byte == UInt8(ascii: "]") || byte == UInt8(ascii: "}") {
                        guard let comma = lastComma, bytes[(comma + 1)..<i].allSatisfy(Self.isWhitespace) else {
                            return error("expected a value")
                        }
                        i = comma
                        return error("a trailing comma before '\(Character(Unicode.Scalar(byte)))'")
                    } else {
                        if let problem = skipScalar() { return error(problem) }
                        expect = open.isEmpty ? .end : .commaOrEnd
                    }
                case .key, .keyOrEnd:
                    if byte == UInt8(ascii: "}") {
                        if expect == .key, let comma = lastComma {
                            i = comma
                            return error("a trailing comma before '}'")
                        }
                        open.removeLast()
                        i += 1
                        expect = open.isEmpty ? .end : .commaOrEnd
                        continue
                    }
                    guard byte == UInt8(ascii: "\"") else { return error("expected a key (a string in double quotes)") }
                    let start = i
                    if let problem = skipString() { return error(problem) }
                    let quoted = Array(bytes[start..<i])
                    guard open[open.count - 1]!.insert(Self.decodedKey(quoted)).inserted else {
                        i = start
                        return error("the key \(String(decoding: quoted, as: UTF8.self)) appears twice in one object")
                    }
                    expect = .colon
                case .colon:
                    guard byte == UInt8(ascii: ":") else { return error("expected ':' after the key") }
                    i += 1
                    expect = .value
                case .commaOrEnd:
                    let isObject = open[open.count - 1] != nil
                    if byte == UInt8(ascii: ",") {
                        lastComma = i
                        i += 1
                        expect = isObject ? .key : .value
                    } else if byte == UInt8(ascii: isObject ? "}" : "]") {
                        open.removeLast()
                        i += 1
                        expect = open.isEmpty ? .end : .commaOrEnd
                    } else {
                        return error(isObject ? "expected ',' or '}'" : "expected ',' or ']'")
                    }
                case .end:
                    return error("expected the end of the text after the JSON value")
                }
            }
        }

        private static func isWhitespace(_ byte: UInt8) -> Bool {
            byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D
        }

        private mutating func skipWhitespace() {
            while i < bytes.count && Self.isWhitespace(bytes[i]) { i += 1 }
        }

        /// Skips a string, number or literal at `i`; the problem when there is none there.
        private mutating func skipScalar() -> String? {
            let byte = bytes[i]
            if byte == UInt8(ascii: "\"") { return skipString() }
            if byte == UInt8(ascii: "-") || (0x30...0x39).contains(byte) { return skipNumber() }
            for literal in ["true", "false", "null"] where bytes[i...].starts(with: literal.utf8) {
                i += literal.utf8.count
                return nil
            }
            return "expected a value"
        }

        /// Skips `"…"` (RFC 8259 §7): escapes checked, no control characters.
        private mutating func skipString() -> String? {
            i += 1
            while i < bytes.count {
                switch bytes[i] {
                case UInt8(ascii: "\""):
                    i += 1
                    return nil
                case UInt8(ascii: "\\"):
                    guard i + 1 < bytes.count else { return "the text ends early" }
                    let escape = bytes[i + 1]
                    if escape == UInt8(ascii: "u") {
                        guard i + 6 <= bytes.count, bytes[(i + 2)..<(i + 6)].allSatisfy({ $0 < 0x80 && Character(Unicode.Scalar($0)).isHexDigit }) else {
                            return "\\u needs four hex digits"
                        }
                        i += 6
                    } else {
                        guard "\"\\/bfnrt".utf8.contains(escape) else { return "an unknown escape in a string" }
                        i += 2
                    }
                case 0..<0x20:
                    return "a control character in a string (write it escaped, e.g. \\n)"
                default:
                    i += 1
                }
            }
            return "the text ends early, in a string"
        }

        /// Skips `-? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?` (RFC 8259 §6).
        private mutating func skipNumber() -> String? {
            func digits() -> Int {
                let start = i
                while i < bytes.count && (0x30...0x39).contains(bytes[i]) { i += 1 }
                return i - start
            }
            if bytes[i] == UInt8(ascii: "-") { i += 1 }
            let first = i
            guard digits() > 0 else { return "a number needs a digit after '-'" }
            if bytes[first] == UInt8(ascii: "0") && i - first > 1 { i = first; return "a number with a leading zero" }
            if i < bytes.count && bytes[i] == UInt8(ascii: ".") {
                i += 1
                guard digits() > 0 else { return "a number needs a digit after '.'" }
            }
            if i < bytes.count && (bytes[i] | 0x20) == UInt8(ascii: "e") {
                i += 1
                if i < bytes.count && (bytes[i] == UInt8(ascii: "+") || bytes[i] == UInt8(ascii: "-")) { i += 1 }
                guard digits() > 0 else { return "a number needs a digit in its exponent" }
            }
            return nil
        }

        /// A key's code points as UTF-8 (`quoted`: the string with its quotes, as in the text).
        private static func decodedKey(_ quoted: [UInt8]) -> [UInt8] {
            guard quoted.contains(UInt8(ascii: "\\")),
                  let text = try? JSONDecoder().decode(String.self, from: Data(quoted)) else { return Array(quoted.dropFirst().dropLast()) }
            return Array(text.unicodeScalars.flatMap { String($0).utf8 })
        }

        private func error(_ problem: String) -> SyntaxError {
            let lineStart = bytes[..<i].lastIndex(of: 0x0A).map { $0 + 1 } ?? 0
            let line = bytes[..<i].count(where: { $0 == 0x0A }) + 1
            let column = bytes[lineStart..<i].count(where: { $0 & 0xC0 != 0x80 }) + 1
            return SyntaxError(offset: i, line: line, column: column, problem: problem)
        }
    }
}
