/// `If-None-Match` evaluation (RFC 9110 §13.1.2): weak comparison, so `W/"x"` matches `"x"`;
/// a list matches when any member does; `*` matches any current representation.
enum EntityTag {
    /// What an `If-None-Match` said about a representation.
    enum NoneMatch {
        /// No field, or no member matches: answer normally.
        case none
        /// A member is this ETag: 304, the client holds the current representation.
        case tag
        /// `*`: 304 only if a current representation exists, i.e. when the answer would be a
        /// 200; an error status is sent as it is (RFC 9110 §13.2.1).
        case any
    }

    /// How the `If-None-Match` field values match `etag` (quoted, strong). A listed ETag
    /// outranks `*`.
    static func noneMatch(_ fieldValues: [String], etag: String) -> NoneMatch {
        var result = NoneMatch.none
        for value in fieldValues {
            for member in value.split(separator: ",") {
                var tag = member.trimmingWhitespace()
                if tag == "*" { result = .any; continue }
                if tag.hasPrefix("W/") { tag = tag.dropFirst(2) }
                if tag == etag { return .tag }
            }
        }
        return result
    }
}

extension StringProtocol {
    /// The text without leading and trailing spaces and tabs (HTTP's OWS).
    func trimmingWhitespace() -> SubSequence {
        var s = self[...]
        while let c = s.first, c == " " || c == "\t" { s = s.dropFirst() }
        while let c = s.last, c == " " || c == "\t" { s = s.dropLast() }
        return s
    }
}
