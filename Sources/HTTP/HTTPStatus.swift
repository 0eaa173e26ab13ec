/// Standard reason phrases (RFC 9110 §15, RFC 6585) and the status lines built from them.
enum HTTPStatus {
    /// nginx's 499 "client closed request": never sent, only reported in an exchange record for
    /// a request whose client went away before its response (`HTTPClientAbort`).
    static let clientClosedRequest = 499

    /// The reason phrase for `status`, or an empty string for an unregistered code (the
    /// reason phrase is optional, RFC 9112 §4).
    static func reasonPhrase(_ status: Int) -> String {
        switch status {
        case 100: "Continue"
        case 101: "Switching Protocols"
        case 103: "Early Hints"
        case 200: "OK"
        case 201: "Created"
        case 202: "Accepted"
        case 203: "Non-Authoritative Information"
        case 204: "No Content"
        case 205: "Reset Content"
        case 206: "Partial Content"
        case 300: "Multiple Choices"
        case 301: "Moved Permanently"
        case 302: "Found"
        case 303: "See Other"
        case 304: "Not Modified"
        case 307: "Temporary Redirect"
        case 308: "Permanent Redirect"
        case 400: "Bad Request"
        case 401: "Unauthorized"
        case 403: "Forbidden"
        case 404: "Not Found"
        case 405: "Method Not Allowed"
        case 406: "Not Acceptable"
        case 408: "Request Timeout"
        case 409: "Conflict"
        case 410: "Gone"
        case 411: "Length Required"
        case 412: "Precondition Failed"
        case 413: "Content Too Large"
        case 414: "URI Too Long"
        case 415: "Unsupported Media Type"
        case 416: "Range Not Satisfiable"
        case 417: "Expectation Failed"
        case 421: "Misdirected Request"
        case 422: "Unprocessable Content"
        case 426: "Upgrade Required"
        case 428: "Precondition Required"
        case 429: "Too Many Requests"
        case 431: "Request Header Fields Too Large"
        case 500: "Internal Server Error"
        case 501: "Not Implemented"
        case 502: "Bad Gateway"
        case 503: "Service Unavailable"
        case 504: "Gateway Timeout"
        case 505: "HTTP Version Not Supported"
        default: ""
        }
    }

    /// `HTTP/1.1 <status> <reason>\r\n` for every status 100...599, built once.
    /// The server always answers as HTTP/1.1 (RFC 9110 §6.2).
    static let statusLines: [[UInt8]] = (0..<600).map { code in
        Array("HTTP/1.1 \(code) \(reasonPhrase(code))\r\n".utf8)
    }

    /// Whether a response with this status never has content (RFC 9110 §6.4.1).
    @inline(__always) static func hasNoContent(_ status: Int) -> Bool {
        status < 200 || status == 204 || status == 304
    }
}
