import HTTP

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

    /// How the `If-None-Match` field values match `etag` (quoted, weak or strong: compared
    /// without the `W/` on either side). A listed ETag outranks `*`.
    static func noneMatch(_ fieldValues: [String], etag: String) -> NoneMatch {
        var etag = etag.hasPrefix("W/") ? String(etag.dropFirst(2)) : etag
        etag.makeContiguousUTF8()
        return etag.utf8.withContiguousStorageIfAvailable { etag in
            var result = NoneMatch.none
            for var value in fieldValues {
                value.makeContiguousUTF8()
                let matched = value.utf8.withContiguousStorageIfAvailable { list -> Bool in
                    for var tag in HTTPFieldList.members(list) {
                        if tag.count == 1 && tag[0] == UInt8(ascii: "*") { result = .any; continue }
                        if tag.count >= 2 && tag[0] == UInt8(ascii: "W") && tag[1] == UInt8(ascii: "/") {
                            tag = UnsafeBufferPointer(rebasing: tag[2...])
                        }
                        if tag.elementsEqual(etag) { return true }
                    }
                    return false
                } ?? false
                if matched { return .tag }
            }
            return result
        } ?? .none
    }
}
