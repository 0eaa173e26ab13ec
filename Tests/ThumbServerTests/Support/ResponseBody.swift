import HTTP
#if canImport(Glibc)
import Glibc
#endif

extension HTTPResponse {
    /// This response with the bytes of its file part (a hit sent with `sendfile`) read into
    /// `body`, as a client would receive them: for in-process tests, which have no socket.
    var withFileRead: HTTPResponse {
        guard let file else { return self }
        var bytes = [UInt8](repeating: 0, count: file.count)
        let n = bytes.withUnsafeMutableBytes { pread(file.fd, $0.baseAddress, file.count, off_t(file.offset)) }
        precondition(n == file.count, "short read of a response's file part")
        return HTTPResponse(status: status, headers: headers, body: body + bytes)
    }
}
