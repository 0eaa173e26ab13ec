import CLinux
import Foundation
import Rendering
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// Reading one entry file: from the page cache only, or waiting for the disk.
extension DiskCache {
    /// Reads and checks the entry open at `fd`: head and payload in one `preadv2`, the payload
    /// straight into the thumbnail's own array. `.some(nil)` for a file that is not an intact
    /// entry; nil when `waiting` is false and the bytes are not all in the page cache.
    /// A good entry's mtime is stamped with now (the LRU order after a restart) when it is more
    /// than `stampInterval` ns old, so steady hits on one entry do not write its inode each time.
    static func readEntry(_ fd: Int32, key: String, waiting: Bool, stampInterval: Int64) -> Thumbnail?? {
        var st = stat()
        guard fstat(fd, &st) == 0, (st.st_mode & S_IFMT) == S_IFREG else { return .some(nil) }
        let size = Int(st.st_size)
        let headSize = DiskEntry.headSize(key: key)
        guard size > headSize else { return .some(nil) }
        let head = UnsafeMutableRawBufferPointer.allocate(byteCount: headSize, alignment: 8)
        defer { head.deallocate() }
        var blocked = false
        let payload = [UInt8](unsafeUninitializedCapacity: size - headSize) { body, count in
            var done = 0
            while done < size {
                let n: Int
                if done == 0 {
                    n = clinux_read_two(fd, head.baseAddress, headSize, body.baseAddress, size - headSize, waiting ? 0 : 1)
                } else if waiting {
                    n = done < headSize
                        ? pread(fd, head.baseAddress! + done, headSize - done, off_t(done))
                        : pread(fd, body.baseAddress! + (done - headSize), size - done, off_t(done))
                } else {
                    blocked = true   // a partial page-cache read: the rest is on disk
                    break
                }
                if n < 0 && errno == EINTR { continue }
                // EAGAIN: not all in the page cache; EOPNOTSUPP: a file system without
                // RWF_NOWAIT (tmpfs). Either way the blocking read decides.
                if n < 0 && !waiting { blocked = true; break }
                if n <= 0 { break }
                done += n
            }
            count = done == size ? size - headSize : 0
        }
        if blocked { return nil }
        guard payload.count == size - headSize,
              let thumbnail = DiskEntry.decode(head: UnsafeRawBufferPointer(head), payload: payload, key: key)
        else { return .some(nil) }
        if timespec.now(CLOCK_REALTIME).nanoseconds - st.st_mtim.nanoseconds >= stampInterval { futimens(fd, nil) }
        return .some(thumbnail)
    }
}
