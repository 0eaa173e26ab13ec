import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// The inotify watches this process holds on the directories with these inode numbers, across
/// all of its inotify instances, as the kernel lists them (`/proc/self/fdinfo/<fd>` of each
/// inotify descriptor: one `inotify wd:` line per watch, its inode in hex). Other tests' watches
/// running meanwhile are on other directories, so they do not count.
public func kernelWatches(on inodes: Set<UInt64>) -> Int {
    let fm = FileManager.default
    var count = 0
    for fd in (try? fm.contentsOfDirectory(atPath: "/proc/self/fd")) ?? [] {
        guard (try? fm.destinationOfSymbolicLink(atPath: "/proc/self/fd/" + fd)) == "anon_inode:inotify",
              let info = try? String(contentsOfFile: "/proc/self/fdinfo/" + fd, encoding: .utf8) else { continue }
        for line in info.split(separator: "\n") where line.hasPrefix("inotify wd:") {
            guard let field = line.split(separator: " ").first(where: { $0.hasPrefix("ino:") }),
                  let inode = UInt64(field.dropFirst(4), radix: 16) else { continue }
            if inodes.contains(inode) { count += 1 }
        }
    }
    return count
}

/// The inode numbers of these paths (`lstat`).
public func inodes(of paths: [String]) -> Set<UInt64> {
    Set(paths.compactMap { path in
        var st = stat()
        return lstat(path, &st) == 0 ? UInt64(st.st_ino) : nil
    })
}
