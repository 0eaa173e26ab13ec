/// An ordered list of header fields with case-insensitive lookup by name (RFC 9110 §5.1).
/// Names keep the spelling they were given; values are kept as sent, without surrounding
/// whitespace.
///
/// A parsed request's headers stay as the bytes received (`HTTPReceivedFields`) until a field
/// is asked for: a browser sends half a dozen fields with every image request (`User-Agent`,
/// `Accept-Language`, …) that nothing reads, and making a `String` of each cost more than the
/// rest of the parse.
public struct HTTPHeaders: Sendable, Sequence {
    /// Fields given as strings (by responders and tests, or taken out of `received` on a change).
    private var given: [(name: String, value: String)] = []
    /// Fields as received, when these headers came from the parser and have not been changed.
    private var received: HTTPReceivedFields?
    /// The fields as serialized by `prepared()`; any change drops it.
    private(set) var wire: HTTPHeaderWire?

    public init() {}
    public init(_ fields: [(String, String)]) { given = fields.map { (name: $0.0, value: $0.1) } }

    /// The parser's headers: `received` as they came.
    init(received: HTTPReceivedFields) { self.received = received }

    /// Every field, in order (made into strings now when they were received as bytes).
    public var fields: [(name: String, value: String)] { received?.allFields() ?? given }

    /// These fields with their serialized form attached, for headers sent unchanged on many
    /// responses (a cached thumbnail's `Content-Type`, `ETag`, …): the server then copies the
    /// bytes instead of checking and writing each field again. Fields are checked and dropped as
    /// on any response (see `HTTPResponseSerializer.writeHead`). A copy that is changed
    /// afterwards loses the serialized form and is written field by field.
    public func prepared() -> HTTPHeaders {
        var copy = self
        var bytes: [UInt8] = []
        HTTPResponseSerializer.appendFields(&bytes, fields)
        copy.wire = HTTPHeaderWire(bytes: bytes)
        return copy
    }

    /// Before a change: received fields become strings, and the serialized form goes.
    private mutating func willChange() {
        if let received {
            given = received.allFields()
            self.received = nil
        }
        wire = nil
    }

    /// Appends a field, keeping any earlier field of the same name.
    public mutating func add(_ name: String, _ value: String) {
        willChange()
        given.append((name: name, value: value))
    }

    /// Replaces every field of this name with one field.
    public mutating func set(_ name: String, _ value: String) {
        remove(name)
        given.append((name: name, value: value))
    }

    /// Reserves room for `count` fields, so a caller that knows the count appends without
    /// regrowing the array (responders on their hot path).
    public mutating func reserveCapacity(_ count: Int) {
        willChange()
        given.reserveCapacity(count)
    }

    /// Removes every field of this name.
    public mutating func remove(_ name: String) {
        willChange()
        given.removeAll { Self.namesEqual($0.name, name) }
    }

    /// The first value of the field with this name, or nil.
    public subscript(name: String) -> String? {
        if let received { return received.values(name, first: true).first }
        return given.first { Self.namesEqual($0.name, name) }?.value
    }

    /// Every value of the fields with this name, in order.
    public func values(_ name: String) -> [String] {
        if let received { return received.values(name, first: false) }
        return given.filter { Self.namesEqual($0.name, name) }.map(\.value)
    }

    public func contains(_ name: String) -> Bool {
        if let received { return received.contains(name) }
        return given.contains { Self.namesEqual($0.name, name) }
    }

    /// Whether some field named `name` has a value for which `test` holds, judged on the value's
    /// UTF-8 bytes without making strings (the server's own reads, such as `Connection`).
    func containsValue(named name: StaticString, where test: (UnsafeBufferPointer<UInt8>) -> Bool) -> Bool {
        if let received { return received.containsValue(named: name, where: test) }
        for field in given where Self.namesEqual(field.name, name.description) {
            var value = field.value
            value.makeContiguousUTF8()
            if value.utf8.withContiguousStorageIfAvailable(test) == true { return true }
        }
        return false
    }

    public func makeIterator() -> IndexingIterator<[(name: String, value: String)]> { fields.makeIterator() }

    /// ASCII case-insensitive comparison of field names (field names are ASCII tokens).
    @inlinable
    public static func namesEqual(_ a: String, _ b: String) -> Bool {
        let ua = a.utf8, ub = b.utf8
        guard ua.count == ub.count else { return false }
        for (x, y) in zip(ua, ub) where x != y {
            let lx = (x >= 65 && x <= 90) ? x | 0x20 : x
            let ly = (y >= 65 && y <= 90) ? y | 0x20 : y
            if lx != ly { return false }
        }
        return true
    }
}

/// A request's header section as received: one copy of its bytes and where each field's name
/// and value lie in them (already checked by the parser: names are tokens, values hold no
/// CR, LF or NUL and have no surrounding whitespace). Immutable.
final class HTTPReceivedFields: Sendable {
    /// Offsets into `bytes`: `name` and `value` as half-open ranges.
    struct Span: Sendable {
        let nameStart: Int32, nameEnd: Int32, valueStart: Int32, valueEnd: Int32
    }

    let bytes: [UInt8]
    let spans: [Span]

    init(bytes: [UInt8], spans: [Span]) {
        self.bytes = bytes
        self.spans = spans
    }

    /// Every field as strings, in order.
    func allFields() -> [(name: String, value: String)] {
        bytes.withUnsafeBufferPointer { b in
            spans.map { (name: Self.string(b, $0.nameStart, $0.nameEnd), value: Self.string(b, $0.valueStart, $0.valueEnd)) }
        }
    }

    /// The values of the fields named `name` (ASCII case-insensitive), in order; with `first`,
    /// at most the first.
    func values(_ name: String, first: Bool) -> [String] {
        withBytes(of: name) { b, wanted in
            var found: [String] = []
            for span in spans where Self.nameMatches(b, span, wanted) {
                found.append(Self.string(b, span.valueStart, span.valueEnd))
                if first { break }
            }
            return found
        }
    }

    func contains(_ name: String) -> Bool {
        withBytes(of: name) { b, wanted in spans.contains { Self.nameMatches(b, $0, wanted) } }
    }

    /// `body` over the received bytes and `name`'s UTF-8 bytes.
    private func withBytes<R>(of name: String, _ body: (UnsafeBufferPointer<UInt8>, UnsafeBufferPointer<UInt8>) -> R) -> R {
        var name = name
        name.makeContiguousUTF8()
        return name.utf8.withContiguousStorageIfAvailable { wanted in
            bytes.withUnsafeBufferPointer { body($0, wanted) }
        }!
    }

    func containsValue(named name: StaticString, where test: (UnsafeBufferPointer<UInt8>) -> Bool) -> Bool {
        let wanted = UnsafeBufferPointer(start: name.utf8Start, count: name.utf8CodeUnitCount)
        return bytes.withUnsafeBufferPointer { b in
            spans.contains { span in
                Self.nameMatches(b, span, wanted)
                    && test(UnsafeBufferPointer(rebasing: b[Int(span.valueStart)..<Int(span.valueEnd)]))
            }
        }
    }

    private static func nameMatches(_ b: UnsafeBufferPointer<UInt8>, _ span: Span, _ wanted: UnsafeBufferPointer<UInt8>) -> Bool {
        let start = Int(span.nameStart)
        guard Int(span.nameEnd) - start == wanted.count else { return false }
        for k in 0..<wanted.count where HTTPByteClass.lowercase(b[start + k]) != HTTPByteClass.lowercase(wanted[k]) {
            return false
        }
        return true
    }

    /// Bytes ≥ 0x80 that are not UTF-8 become U+FFFD, as `String(decoding:)` does.
    private static func string(_ b: UnsafeBufferPointer<UInt8>, _ start: Int32, _ end: Int32) -> String {
        String(decoding: UnsafeBufferPointer(rebasing: b[Int(start)..<Int(end)]), as: UTF8.self)
    }
}

/// The serialized header lines (`name: value` CRLF each) of prepared `HTTPHeaders`.
final class HTTPHeaderWire: Sendable {
    let bytes: [UInt8]
    init(bytes: [UInt8]) { self.bytes = bytes }
}
