#if canImport(Glibc)
import Glibc
#endif
import Rendering

/// The process's own figures, read from /proc (proc(5)) each time `/stats` or `/metrics` is
/// asked: `/stats` `process`, and in `/metrics` the `process_*` series as Prometheus' client
/// libraries export them (client_golang's process collector: same names, types and sources),
/// with `thumbd_threads` and libvips' memory.
struct ProcessStatistics: Sendable, Equatable {
    /// User and system CPU time, seconds: `utime` + `stime` of /proc/self/stat over `_SC_CLK_TCK`.
    var cpuSeconds = 0.0
    /// Resident set size, bytes: `rss` of /proc/self/stat (pages) × the page size.
    var residentMemoryBytes = 0
    /// Virtual memory size, bytes: `vsize` of /proc/self/stat.
    var virtualMemoryBytes = 0
    /// Open file descriptors: the entries of /proc/self/fd (the one listing it included, as the
    /// client libraries count).
    var openFDs = 0
    /// The most descriptors the process may open: the soft `RLIMIT_NOFILE` (`Int.max`: unlimited).
    var maxFDs = 0
    /// When the process started, Unix seconds: /proc/stat `btime` + `starttime` of
    /// /proc/self/stat (ticks since boot) over `_SC_CLK_TCK`.
    var startTimeSeconds = 0.0
    /// Threads: `num_threads` of /proc/self/stat.
    var threads = 0
    /// Bytes libvips holds through its tracked allocator now, and the most it has held at once
    /// (`Vips.trackedMemoryBytes`, `Vips.trackedMemoryHighwaterBytes`).
    var vipsMemoryBytes = 0, vipsMemoryHighwaterBytes = 0

    /// The figures now. One that cannot be read (no /proc) is 0.
    static func read() -> ProcessStatistics {
        var figures = ProcessStatistics()
        let ticks = Double(max(1, sysconf(Int32(_SC_CLK_TCK))))
        // proc(5): fields 3... follow the command name in parentheses, which may hold spaces and
        // parentheses itself: split after the last ')'. Field n is at n - 3.
        if let stat = procText("/proc/self/stat"), let close = stat.lastIndex(of: ")") {
            let fields = stat[stat.index(after: close)...].split(separator: " ")
            func field(_ n: Int) -> Int { fields.count > n - 3 ? Int(fields[n - 3]) ?? 0 : 0 }
            figures.cpuSeconds = Double(field(14) + field(15)) / ticks
            figures.threads = field(20)
            figures.virtualMemoryBytes = field(23)
            figures.residentMemoryBytes = field(24) * sysconf(Int32(_SC_PAGESIZE))
            if let boot = bootTime() { figures.startTimeSeconds = Double(boot) + Double(field(22)) / ticks }
        }
        figures.openFDs = openDescriptors()
        figures.maxFDs = DescriptorBudget.currentLimits()?.soft ?? 0
        figures.vipsMemoryBytes = Vips.trackedMemoryBytes
        figures.vipsMemoryHighwaterBytes = Vips.trackedMemoryHighwaterBytes
        return figures
    }

    /// /proc/stat `btime`: when the system booted, Unix seconds.
    private static func bootTime() -> Int? {
        guard let stat = procText("/proc/stat") else { return nil }
        for line in stat.split(separator: "\n") where line.hasPrefix("btime ") {
            return Int(line.dropFirst("btime ".count))
        }
        return nil
    }

    /// The entries of /proc/self/fd, `.` and `..` not counted.
    private static func openDescriptors() -> Int {
        guard let directory = opendir("/proc/self/fd") else { return 0 }
        defer { closedir(directory) }
        var count = 0
        while let entry = readdir(directory) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
            if name != "." && name != ".." { count += 1 }
        }
        return count
    }

    /// A /proc file's text: read to the end (their size says 0), at most 1 MiB.
    private static func procText(_ path: String) -> String? {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        while bytes.count < 1 << 20 {
            let n = chunk.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else { break }
            bytes += chunk[..<n]
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}
