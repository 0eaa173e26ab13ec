/// An ordered list of header fields with case-insensitive lookup by name (RFC 9110 §5.1).
/// Names keep the spelling they were given; values are kept as sent, without surrounding
/// whitespace.
///
/// A parsed request's headers stay as the bytes received (`HTTPReceivedFields`) until a field
/// is asked for: a browser sends half a dozen fields with every image request (`User-Agent`,
/// `Accept-Language`, …) that nothing reads, and making a `String` of each cost more than the
/// rest of the parse.
public struct HTTPHeaders: Sendable, Sequence {
    /// Where the fields are. One reference whichever the case, so a copy of a response's or a
    /// request's headers costs one retain.
    private enum Storage: Sendable {
        /// Given as strings (by responders and tests, or taken out of the others on a change).
        case given([(name: String, value: String)])
        /// As received, when these headers came from the parser and have not been changed.
        case received(HTTPReceivedFields)
        /// Given, and serialized once by `prepared()`.
        case prepared(HTTPHeaderWire)
    }

    private var storage: Storage

    public init() { storage = .given([]) }
    public init(_ fields: [(String, String)]) { storage = .given(fields.map { (name: $0.0, value: $0.1) }) }

    /// The parser's headers: `received` as they came.
    init(received: HTTPReceivedFields) { storage = .received(received) }

    /// The serialized fields, when these headers were `prepared()` and not changed since.
    var wire: HTTPHeaderWire? {
        if case .prepared(let wire) = storage { return wire }
        return nil
    }

    /// Every field, in order (made into strings now when they were received as bytes).
    public var fields: [(name: String, value: String)] {
        switch storage {
        case .given(let fields): return fields
        case .received(let received): return received.allFields()
        case .prepared(let wire): return wire.fields
        }
    }

    /// These fields with their serialized form attached, for headers sent unchanged on many
    /// responses (a cached thumbnail's `Content-Type`, `ETag`, …): the server then copies the
    /// bytes instead of checking and writing each field again. Fields are checked and dropped as
    /// on any response (see `HTTPResponseSerializer.writeHead`). A copy that is changed
    /// afterwards loses the serialized form and is written field by field.
    public func prepared() -> HTTPHeaders {
        let fields = self.fields
        var bytes: [UInt8] = []
        HTTPResponseSerializer.appendFields(&bytes, fields)
        var copy = HTTPHeaders()
        copy.storage = .prepared(HTTPHeaderWire(fields: fields, bytes: bytes))
        return copy
    }

    /// Changes the fields as strings (received and prepared ones become given ones first).
    private mutating func change(_ body: (inout [(name: String, value: String)]) -> Void) {
        var fields: [(name: String, value: String)]
        switch storage {
        case .given(let given): fields = given
        case .received(let received): fields = received.allFields()
        case .prepared(let wire): fields = wire.fields
        }
        storage = .given([])   // so `fields` is the only reference and changes in place
        body(&fields)
        storage = .given(fields)
    }

    /// Appends a field, keeping any earlier field of the same name.
    public mutating func add(_ name: String, _ value: String) {
        change { $0.append((name: name, value: value)) }
    }

    /// Replaces every field of this name with one field.
    public mutating func set(_ name: String, _ value: String) {
        change { fields in
            fields.removeAll { Self.namesEqual($0.name, name) }
            fields.append((name: name, value: value))
        }
    }

    /// Reserves room for `count` fields, so a caller that knows the count appends without
    /// regrowing the array (responders on their hot path).
    public mutating func reserveCapacity(_ count: Int) {
        change { $0.reserveCapacity(count) }
    }

    /// Removes every field of this name.
    public mutating func remove(_ name: String) {
        change { $0.removeAll { Self.namesEqual($0.name, name) } }
    }

    /// The first value of the field with this name, or nil.
    public subscript(name: String) -> String? {
        if case .received(let received) = storage { return received.values(name, first: true).first }
        return fields.first { Self.namesEqual($0.name, name) }?.value
    }

    /// Every value of the fields with this name, in order.
    public func values(_ name: String) -> [String] {
        if case .received(let received) = storage { return received.values(name, first: false) }
        return fields.filter { Self.namesEqual($0.name, name) }.map(\.value)
    }

    public func contains(_ name: String) -> Bool {
        if case .received(let received) = storage { return received.contains(name) }
        return fields.contains { Self.namesEqual($0.name, name) }
    }

    /// Whether some field named `name` has a value for which `test` holds, judged on the value's
    /// UTF-8 bytes without making strings (the server's own reads, such as `Connection`).
    func containsValue(named name: StaticString, where test: (UnsafeBufferPointer<UInt8>) -> Bool) -> Bool {
        if case .received(let received) = storage { return received.containsValue(named: name, where: test) }
        for field in fields where Self.namesEqual(field.name, name.description) {
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

/// A request's header section as received, in one array (one allocation per request): the
/// section's bytes, then where each field's name and value lie in them (four `Int32` offsets per
/// field, half-open ranges), then the section's length and the field count (`Int32` each).
/// Names are tokens, and values hold no CR, LF or NUL and have no surrounding whitespace
/// (checked by the parser). Immutable.
struct HTTPReceivedFields: Sendable {
    /// Offsets into the section: `name` and `value` as half-open ranges.
    struct Span: Sendable {
        let nameStart: Int32, nameEnd: Int32, valueStart: Int32, valueEnd: Int32
    }

    private let storage: [UInt8]

    /// Builds the array: the section first, then each field's span as the parser finds it.
    struct Builder {
        private var storage: [UInt8] = []
        private var count: Int32 = 0
        private let sectionLength: Int32

        /// Copies `section`; room for `fieldCount` spans.
        init(section: UnsafeBufferPointer<UInt8>, fieldCount: Int) {
            storage.reserveCapacity(section.count + fieldCount * 16 + 8)
            storage.append(contentsOf: section)
            sectionLength = Int32(section.count)
        }

        mutating func append(_ span: Span) {
            Self.append(span.nameStart, to: &storage)
            Self.append(span.nameEnd, to: &storage)
            Self.append(span.valueStart, to: &storage)
            Self.append(span.valueEnd, to: &storage)
            count += 1
        }

        var isEmpty: Bool { count == 0 }

        consuming func finish() -> HTTPReceivedFields {
            Self.append(sectionLength, to: &storage)
            Self.append(count, to: &storage)
            return HTTPReceivedFields(storage: storage)
        }

        private static func append(_ value: Int32, to storage: inout [UInt8]) {
            withUnsafeBytes(of: value.littleEndian) { storage.append(contentsOf: $0) }
        }
    }

    private init(storage: [UInt8]) { self.storage = storage }

    /// `body` over the section's bytes and the spans.
    private func withSection<R>(_ body: (UnsafeBufferPointer<UInt8>, Spans) -> R) -> R {
        storage.withUnsafeBufferPointer { all in
            let raw = UnsafeRawBufferPointer(all)
            let count = Int(Int32(littleEndian: raw.loadUnaligned(fromByteOffset: all.count - 4, as: Int32.self)))
            let length = Int(Int32(littleEndian: raw.loadUnaligned(fromByteOffset: all.count - 8, as: Int32.self)))
            return body(UnsafeBufferPointer(rebasing: all[0..<length]),
                        Spans(raw: UnsafeRawBufferPointer(rebasing: raw[length..<(length + count * 16)]), count: count))
        }
    }

    /// The spans stored after the section.
    private struct Spans: RandomAccessCollection {
        let raw: UnsafeRawBufferPointer
        let count: Int
        var startIndex: Int { 0 }
        var endIndex: Int { count }
        subscript(i: Int) -> Span {
            func at(_ k: Int) -> Int32 { Int32(littleEndian: raw.loadUnaligned(fromByteOffset: i * 16 + k * 4, as: Int32.self)) }
            return Span(nameStart: at(0), nameEnd: at(1), valueStart: at(2), valueEnd: at(3))
        }
    }

    /// Every field as strings, in order.
    func allFields() -> [(name: String, value: String)] {
        withSection { b, spans in
            spans.map { (name: Self.string(b, $0.nameStart, $0.nameEnd), value: Self.string(b, $0.valueStart, $0.valueEnd)) }
        }
    }

    /// The values of the fields named `name` (ASCII case-insensitive), in order; with `first`,
    /// at most the first.
    func values(_ name: String, first: Bool) -> [String] {
        withBytes(of: name) { b, spans, wanted in
            var found: [String] = []
            for span in spans where Self.nameMatches(b, span, wanted) {
                found.append(Self.string(b, span.valueStart, span.valueEnd))
                if first { break }
            }
            return found
        }
    }

    func contains(_ name: String) -> Bool {
        withBytes(of: name) { b, spans, wanted in spans.contains { Self.nameMatches(b, $0, wanted) } }
    }

    /// `body` over the section, the spans and `name`'s UTF-8 bytes.
    private func withBytes<R>(of name: String,
                              _ body: (UnsafeBufferPointer<UInt8>, Spans, UnsafeBufferPointer<UInt8>) -> R) -> R {
        var name = name
        name.makeContiguousUTF8()
        return name.utf8.withContiguousStorageIfAvailable { wanted in
            withSection { body($0, $1, wanted) }
        }!
    }

    func containsValue(named name: StaticString, where test: (UnsafeBufferPointer<UInt8>) -> Bool) -> Bool {
        let wanted = UnsafeBufferPointer(start: name.utf8Start, count: name.utf8CodeUnitCount)
        return withSection { b, spans in
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

/// Prepared `HTTPHeaders`: the fields and their serialized lines (`name: value` CRLF each).
final class HTTPHeaderWire: Sendable {
    let fields: [(name: String, value: String)]
    let bytes: [UInt8]
    init(fields: [(name: String, value: String)], bytes: [UInt8]) {
        self.fields = fields
        self.bytes = bytes
    }
}
