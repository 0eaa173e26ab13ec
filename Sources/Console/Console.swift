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

    /// One line on stderr, `thumbd: ` first: every warning of the server's modules. Under
    /// systemd it goes to the journal at warning priority (`warningPrefix`), so that
    /// `journalctl -u thumbd -p warning` shows the warnings alone (docs/deploying.md).
    public static func warn(_ message: String) {
        write(warningPrefix + "thumbd: " + message + "\n", to: .standardError)
    }

    /// What a warning line starts with on this process's stderr, read once: `journalPrefix` of
    /// `JOURNAL_STREAM` and stderr's device and inode.
    static let warningPrefix: String = {
        var st = stat()
        guard fstat(Stream.standardError.rawValue, &st) == 0 else { return "" }
        return journalPrefix(journalStream: getenv("JOURNAL_STREAM").map { String(cString: $0) },
                             device: UInt64(st.st_dev), inode: UInt64(st.st_ino))
    }()

    /// `<4>`, sd-daemon(3)'s `SD_WARNING`, which journald reads as a line's priority, when
    /// stderr is the journal's stream: systemd.exec(5) sets `JOURNAL_STREAM` to its device and
    /// inode (`DEV:INODE`, decimal) for a service whose stderr goes to the journal; a child
    /// whose stderr was redirected since (to a file, a pipe) keeps the variable and is told
    /// apart by the numbers. "" otherwise: on a terminal or in a file the line is as it was.
    static func journalPrefix(journalStream: String?, device: UInt64, inode: UInt64) -> String {
        guard let parts = journalStream?.split(separator: ":", omittingEmptySubsequences: false), parts.count == 2,
              let streamDevice = UInt64(parts[0]), let streamInode = UInt64(parts[1]) else { return "" }
        return streamDevice == device && streamInode == inode ? "<4>" : ""
    }
}
