/// Writes a response head (status line and header section, RFC 9112 §4–5) into a reusable byte
/// buffer. The body is never copied: the connection hands head and body to `writev` separately.
enum HTTPResponseSerializer {
    /// What the server says about the connection after this response.
    enum ConnectionDirective {
        /// Nothing: HTTP/1.1 persistent connection (RFC 9112 §9.3).
        case none
        /// `Connection: close`: the server closes after this response.
        case close
        /// `Connection: keep-alive`: an HTTP/1.0 client asked to keep the connection.
        case keepAlive
    }

    /// Replaces `head`'s contents (keeping its capacity) with the head of `response`:
    /// the status line (status outside 100...599 is sent as 500), the responder's headers
    /// minus the ones the server owns (`Content-Length`, `Date`, `Connection`,
    /// `Transfer-Encoding`) and minus any with bytes that could split the response (CR, LF,
    /// NUL, a non-token name), then `Content-Length` (except for 1xx, 204 and 304), `Date`,
    /// and the `Connection` directive.
    static func writeHead(into head: inout [UInt8], response: HTTPResponse,
                          connection: ConnectionDirective, dateLine: [UInt8]) {
        head.removeAll(keepingCapacity: true)
        head.reserveCapacity(256)
        let status = (100...599).contains(response.status) ? response.status : 500
        head.append(contentsOf: HTTPStatus.statusLines[status])
        if let wire = response.headers.wire {
            head.append(contentsOf: wire.bytes)
        } else {
            appendFields(&head, response.headers.fields)
        }
        if !HTTPStatus.hasNoContent(status) {
            head.append(contentsOf: "Content-Length: ".utf8)
            appendDecimal(&head, response.contentLength)
            head.append(0x0D)
            head.append(0x0A)
        }
        head.append(contentsOf: dateLine)
        switch connection {
        case .none: break
        case .close: head.append(contentsOf: "Connection: close\r\n".utf8)
        case .keepAlive: head.append(contentsOf: "Connection: keep-alive\r\n".utf8)
        }
        head.append(0x0D)
        head.append(0x0A)
    }

    /// Appends each field that is not server-owned, as `appendField` does.
    static func appendFields(_ head: inout [UInt8], _ fields: [(name: String, value: String)]) {
        for field in fields where !isServerOwned(field.name) {
            appendField(&head, name: field.name, value: field.value)
        }
    }

    /// Appends `name: value` CRLF, unless the name is not a token or the value holds a byte
    /// that could split the response (CR, LF, NUL): then nothing. Works on the strings' UTF-8
    /// storage directly (one scan and one copy each), as this runs for every header of every
    /// response.
    @inline(__always)
    static func appendField(_ head: inout [UInt8], name: String, value: String) {
        var name = name, value = value
        name.makeContiguousUTF8()
        value.makeContiguousUTF8()
        name.utf8.withContiguousStorageIfAvailable { n in
            value.utf8.withContiguousStorageIfAvailable { v in
                guard !n.isEmpty else { return }
                for b in n where !HTTPByteClass.isToken(b) { return }
                for b in v where b == 0x0D || b == 0x0A || b == 0 { return }
                head.append(contentsOf: n)
                head.append(UInt8(ascii: ":"))
                head.append(UInt8(ascii: " "))
                head.append(contentsOf: v)
                head.append(0x0D)
                head.append(0x0A)
            }
        }
    }

    /// `Content-Length`, `Date`, `Connection`, `Transfer-Encoding`, any case.
    @inline(__always)
    static func isServerOwned(_ n: String) -> Bool {
        switch n.utf8.count {
        case 4: return HTTPHeaders.namesEqual(n, "Date")
        case 10: return HTTPHeaders.namesEqual(n, "Connection")
        case 14: return HTTPHeaders.namesEqual(n, "Content-Length")
        case 17: return HTTPHeaders.namesEqual(n, "Transfer-Encoding")
        default: return false
        }
    }

    /// Appends the decimal digits of a non-negative `n`.
    static func appendDecimal(_ out: inout [UInt8], _ n: Int) {
        if n < 10 {
            out.append(UInt8(48 + max(n, 0)))
            return
        }
        var digits: (UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8,
                     UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8) =
            (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        var count = 0
        var v = n
        withUnsafeMutableBytes(of: &digits) { d in
            while v > 0 {
                d[count] = UInt8(48 + v % 10)
                v /= 10
                count += 1
            }
            for k in stride(from: count - 1, through: 0, by: -1) { out.append(d[k]) }
        }
    }
}
