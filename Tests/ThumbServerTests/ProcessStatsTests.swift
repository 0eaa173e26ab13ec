import Foundation
import Testing
@testable import Rendering
@testable import ThumbServer
#if canImport(Glibc)
import Glibc
#endif

/// `/stats` `process` and the `process_*` series of `/metrics`: the kernel's figures for this
/// process (the servers of these tests run in it), each checked against /proc or the C library
/// read here another way.
@Suite struct ProcessStatsTests {
    /// A /proc file's text, read here with Foundation (the server reads it with read(2)).
    static func proc(_ path: String) -> String {
        (try? String(contentsOfFile: path, encoding: .utf8)) ?? ""
    }

    /// The value of `key:` in /proc/self/status (its first number).
    static func status(_ key: String) -> Int? {
        for line in proc("/proc/self/status").split(separator: "\n") where line.hasPrefix(key + ":") {
            return Int(line.dropFirst(key.count + 1).split(whereSeparator: { $0 == " " || $0 == "\t" }).first ?? "")
        }
        return nil
    }

    static var pageSize: Int { sysconf(Int32(_SC_PAGESIZE)) }

    /// Threads (/proc/self/status `Threads`), descriptors (/proc/self/fd, listed by
    /// FileManager) and virtual memory (/proc/self/statm `size`, pages): the figures that change
    /// when another test starts a thread or opens a file.
    static func moving() -> [Int] {
        let fds = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd").count) ?? -1
        let statm = proc("/proc/self/statm").split(separator: " ").compactMap { Int($0) }
        return [status("Threads") ?? -1, fds, (statm.first ?? -1) * pageSize]
    }

    @Test func theProcessFiguresAreTheKernels() throws {
        // Threads, descriptors and address space: equal, from a reading between two equal ones
        // of the test's (other tests in this process start threads and open files meanwhile, and
        // may open and close one between two equal readings: a window that disagrees is tried
        // again; a reading that is wrong disagrees in every window).
        var matched = false, disagreed: [[Int]] = []
        for _ in 0..<200 where !matched {
            let before = Self.moving()
            let figures = ProcessStatistics.read()
            let after = Self.moving()
            guard before == after else { continue }
            let read = [figures.threads, figures.openFDs, figures.virtualMemoryBytes]
            if read == before { matched = true } else { disagreed.append(read + before) }
        }
        #expect(matched, "no reading equal to the kernel's between two equal ones; (read, kernel's): \(disagreed.prefix(5))")

        var usage = rusage()
        getrusage(__rusage_who_t(RUSAGE_SELF.rawValue), &usage)
        func seconds(_ t: timeval) -> Double { Double(t.tv_sec) + Double(t.tv_usec) / 1e6 }
        let cpuBefore = seconds(usage.ru_utime) + seconds(usage.ru_stime)
        let rssBefore = (Self.status("VmRSS") ?? 0) * 1024
        let highwaterBefore = Vips.trackedMemoryHighwaterBytes
        let figures = ProcessStatistics.read()
        getrusage(__rusage_who_t(RUSAGE_SELF.rawValue), &usage)
        let cpuAfter = seconds(usage.ru_utime) + seconds(usage.ru_stime)
        let rssAfter = (Self.status("VmRSS") ?? 0) * 1024
        // CPU time: getrusage(2) counts in µs what /proc/self/stat counts in ticks (10 ms).
        #expect(figures.cpuSeconds > 0)
        #expect(figures.cpuSeconds >= cpuBefore - 0.05 && figures.cpuSeconds <= cpuAfter + 0.05,
                "\(figures.cpuSeconds) s, getrusage \(cpuBefore)...\(cpuAfter) s")
        // Resident memory: within 16 MiB of /proc/self/status VmRSS (the other tests allocate).
        #expect(figures.residentMemoryBytes > 0)
        #expect(abs(figures.residentMemoryBytes - (rssBefore + rssAfter) / 2) <= 16 << 20,
                "\(figures.residentMemoryBytes) bytes, VmRSS \(rssBefore)...\(rssAfter)")
        // The soft open-file limit, as /proc/self/limits says it.
        let limits = try #require(Self.proc("/proc/self/limits").split(separator: "\n").first { $0.hasPrefix("Max open files") })
        let soft = limits.dropFirst("Max open files".count).split(separator: " ").first
        #expect(soft == "unlimited" ? figures.maxFDs == Int.max : figures.maxFDs == Int(soft ?? ""))
        // Start time: now less the process's age, from /proc/uptime (seconds since boot, not
        // /proc/stat's btime) and /proc/self/stat's starttime (ticks since boot).
        let uptime = try #require(Double(Self.proc("/proc/uptime").split(separator: " ").first ?? ""))
        let stat = Self.proc("/proc/self/stat")
        let fields = stat[stat.index(after: try #require(stat.lastIndex(of: ")")))...].split(separator: " ")
        let started = Double(try #require(Int(fields[19]))) / Double(sysconf(Int32(_SC_CLK_TCK)))
        let expected = Date().timeIntervalSince1970 - (uptime - started)
        #expect(abs(figures.startTimeSeconds - expected) < 1.5, "\(figures.startTimeSeconds) vs \(expected)")
        // libvips' high-water mark only rises; what it holds now is at most that.
        #expect(figures.vipsMemoryHighwaterBytes >= highwaterBefore && figures.vipsMemoryHighwaterBytes <= Vips.trackedMemoryHighwaterBytes)
        #expect(figures.vipsMemoryBytes >= 0 && figures.vipsMemoryBytes <= figures.vipsMemoryHighwaterBytes)
    }

    /// A server's `/stats` `process` and `/metrics` `process_*`: the same figures, after a render
    /// (so libvips has held pixels), under the names Prometheus' client libraries use; and
    /// promtool (where installed) finds nothing to lint in the whole `/metrics`.
    @Test func statsAndMetricsCarryTheProcessFigures() throws {
        let server = try ServerHarness()
        #expect(try server.get("/thumbnails/5/Landscape_1.jpg").status == 200)
        let process = try #require(try server.stats()["process"] as? [String: Any])
        #expect(process.keys.sorted() == ["cpu_seconds", "max_fds", "open_fds", "resident_memory_bytes", "start_time_seconds",
                                          "threads", "vips_memory_bytes", "vips_memory_highwater_bytes", "virtual_memory_bytes"])
        let maxFDs = try #require(JSONValue.integer(process["max_fds"]))
        #expect(maxFDs == DescriptorBudget.currentLimits()?.soft)
        #expect(try #require(JSONValue.integer(process["vips_memory_highwater_bytes"])) > 0)
        #expect(try #require(JSONValue.number(process["cpu_seconds"])) > 0)
        #expect(try #require(JSONValue.integer(process["threads"])) > 1)
        let started = try #require(JSONValue.number(process["start_time_seconds"]))
        #expect(abs(started - ProcessStatistics.read().startTimeSeconds) < 0.01)

        let metrics = try server.get("/metrics").text
        for (name, type) in [("process_cpu_seconds_total", "counter"), ("process_resident_memory_bytes", "gauge"),
                             ("process_virtual_memory_bytes", "gauge"), ("process_open_fds", "gauge"),
                             ("process_max_fds", "gauge"), ("process_start_time_seconds", "gauge"), ("thumbd_threads", "gauge"),
                             ("thumbd_vips_memory_bytes", "gauge"), ("thumbd_vips_memory_highwater_bytes", "gauge")] {
            #expect(metrics.contains("\n# TYPE \(name) \(type)\n\(name) "), "\(name)")
        }
        #expect(metrics.contains("\nprocess_max_fds \(maxFDs)\n"))
        if StatsSchemaTests.promtool != nil {
            let (status, output) = try StatsSchemaTests.promtoolCheck(metrics)
            #expect(status == 0 && output.isEmpty, "\(output)")
        }
    }
}
