extension String {
    /// Decodes a NUL-terminated (or full) fixed-size C `char` array, as Swift imports it (a
    /// tuple), from its raw bytes. Invalid UTF-8 is repaired.
    init(cBytes raw: UnsafeRawBufferPointer) {
        let bytes = raw.prefix(while: { $0 != 0 })
        self = String(decoding: bytes, as: UTF8.self)
    }
}
