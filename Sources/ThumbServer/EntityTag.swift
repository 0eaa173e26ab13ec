/// `If-None-Match` evaluation (RFC 9110 §13.1.2): weak comparison, so `W/"x"` matches `"x"`;
/// a list matches when any member does; `*` matches any current representation.
enum EntityTag {
    /// Whether any of the `If-None-Match` field values matches `etag` (quoted, strong).
    static func noneMatchHits(_ fieldValues: [String], etag: String) -> Bool {
        for value in fieldValues {
            for member in value.split(separator: ",") {
                var tag = member.trimmingWhitespace()
                if tag == "*" { return true }
                if tag.hasPrefix("W/") { tag = tag.dropFirst(2) }
                if tag == etag { return true }
            }
        }
        return false
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
