#if canImport(Glibc)
import Glibc
#endif

/// thumbd's lines on stdout and stderr: written with write(2), never fatal. A log that cannot
/// be written (a pipe whose reader went away, as journald's stream after journald restarts; a
/// full disk under a redirected stderr) loses the line and the server goes on: Foundation's
/// `FileHandle.write` ended the process there (SIGILL on EPIPE and ENOSPC), so that a reload or
/// a stop after journald restarted killed it.
public enum Console {
    /// Where a line goes.
    public enum Stream: Int32, Sendable {
        case standardOutput = 1, standardError = 2
    }

    /// Writes `text` to `stream` whole (partial writes and EINTR are continued); on any other
    /// error the rest is dropped.
    public static func write(_ text: String, to stream: Stream) {
        var text = text
        text.withUTF8 { bytes in
            var offset = 0
            while offset < bytes.count {
                let n = Glibc.write(stream.rawValue, bytes.baseAddress! + offset, bytes.count - offset)
                if n > 0 {
                    offset += n
                } else if n < 0 && errno == EINTR {
                    continue
                } else {
                    return
                }
            }
        }
    }

    /// One line on stderr, `thumbd: ` first: every warning of the server's modules.
    public static func warn(_ message: String) {
        write("thumbd: " + message + "\n", to: .standardError)
    }
}
