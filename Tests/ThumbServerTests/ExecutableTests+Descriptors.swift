import Foundation
import Testing
import TestSupport

/// thumbd at its open-file limit (issue 13, item 4): run under `prlimit`, as a small container
/// or a systemd unit with `LimitNOFILE=` runs it.
extension ExecutableTests {
    /// At `--nofile=256` with the memory tier off, the kept-open disk entries once filled the
    /// descriptor table by themselves, and idle clients took the rest: every miss then got 500.
    /// Now connections and kept-open entries are capped below the limit (clients over the cap
    /// wait in the listen backlog), and a request that still finds no descriptor (the limit
    /// lowered under the server's feet with `prlimit --pid`) gets 503 `out_of_descriptors` with
    /// `Retry-After`, is counted, and loses nothing: the disk entry it could not open is a disk
    /// hit once descriptors are back.
    @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/prlimit"), "needs prlimit (util-linux)"))
    func atTheOpenFileLimitRequestsGet200Or503NeverA500() throws {
        let root = TemporaryDirectory("thumbd-nofile")
        let library = root.path + "/library", photos = 280
        try FileManager.default.createDirectory(atPath: library, withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: Paths.fixturePhotos + "/sony-cybershot-small-orientation6.jpg",
                                         toPath: library + "/p1.jpg")
        for i in 2...photos { #expect(link(library + "/p1.jpg", library + "/p\(i).jpg") == 0) }
        let server = try launch(["/usr/bin/prlimit", "--nofile=256:256"], library: library, cache: root.path + "/cache",
                                extra: ["--memory-cache-bytes", "0", "--render-workers", "2"])
        let pid = server.process.processIdentifier
        defer { server.process.terminate(); server.process.waitUntilExit() }
        let client = try KeepAliveClient(port: server.port)

        // The budget (README, "Descriptors"), worked out here for this machine's event loops.
        let reserve = min(64 + 4 * (2 + ProcessInfo.processInfo.activeProcessorCount), 128)
        let connections = (256 - reserve) - (256 - reserve) / 4, openEntries = (256 - reserve) / 4
        let budget = try client.request("/stats").json["descriptors"] as? [String: Int]
        #expect(budget == ["limit": 256, "reserve": reserve, "max_connections": connections,
                           "max_open_disk_entries": openEntries, "max_memory_files": 0, "shortages": 0])

        // Every thumbnail rendered, then read from disk twice (kept open after the first
        // check); p1 only rendered, so that its entry is never held open.
        var outcomes: [String: Int] = [:]
        for pass in 0..<3 {
            for i in (pass == 0 ? 1 : 2)...photos {
                let response = try client.request("/thumbnails/5/p\(i).jpg")
                outcomes["\(pass) \(response.status) \(response.header("X-Cache") ?? "-")", default: 0] += 1
            }
        }
        #expect(outcomes == ["0 200 MISS": photos, "1 200 HIT-DISK": photos - 1, "2 200 HIT-DISK": photos - 1])

        // More clients than the cap: those over it wait in the listen backlog; a miss on an
        // open connection still finds the descriptors it needs.
        var idle: [Int32] = []
        defer { idle.forEach { close($0) } }
        for _ in 0..<300 { idle.append(try LoopbackSocket.connect(port: server.port)) }
        usleep(500_000)
        outcomes = [:]
        for i in 1...20 {
            let response = try client.request("/thumbnails/3/p\(i).jpg")
            outcomes["\(response.status) \(response.header("X-Cache") ?? "-")", default: 0] += 1
        }
        #expect(outcomes == ["200 MISS": 20])
        #expect(try client.request("/stats").json["connections"] as? [String: Int] == ["open": connections, "total": connections, "event_loop_wait_errors": 0])
        idle.forEach { close($0) }
        idle = []
        usleep(300_000)
        #expect(try TestClient.get(port: server.port, "/healthz").status == 200)   // accepting again

        // No descriptor free at all: the soft limit lowered below what the server holds.
        #expect(Self.setOpenFileLimit(of: pid, soft: 3, hard: 256))
        for target in ["/thumbnails/5/p1.jpg", "/thumbnails/1/p1.jpg"] {   // a disk entry to open; a render
            let response = try client.request(target)
            #expect(response.status == 503, "\(target)")
            #expect(response.json["error"] as? String == "out_of_descriptors", "\(target)")
            #expect(response.header("Retry-After") == "1", "\(target)")
        }
        let shortages = (try client.request("/stats").json["descriptors"] as? [String: Int])?["shortages"]
        #expect(shortages == 2)
        #expect(try client.request("/metrics").text.contains("\nthumbd_descriptor_shortages_total 2\n"))
        #expect(Self.setOpenFileLimit(of: pid, soft: 256, hard: 256))
        let entry = try client.request("/thumbnails/5/p1.jpg")
        #expect(entry.status == 200 && entry.header("X-Cache") == "HIT-DISK")   // still indexed, not rendered again
        let render = try client.request("/thumbnails/1/p1.jpg")
        #expect(render.status == 200 && render.header("X-Cache") == "MISS")
    }

    /// Sets another process's `RLIMIT_NOFILE` with `prlimit --pid` (util-linux). True when it took.
    /// Spawned and reaped by hand: Foundation's `Process` reaps its children with a blocking
    /// wait on each it started, so `waitUntilExit` of a second child hangs while the server runs.
    static func setOpenFileLimit(of pid: pid_t, soft: Int, hard: Int) -> Bool {
        let arguments = ["/usr/bin/prlimit", "--pid", "\(pid)", "--nofile=\(soft):\(hard)"]
        var argv: [UnsafeMutablePointer<CChar>?] = arguments.map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        var child: pid_t = 0
        guard posix_spawn(&child, arguments[0], nil, nil, &argv, environ) == 0 else { return false }
        var status: Int32 = 0
        while waitpid(child, &status, 0) < 0 && errno == EINTR {}
        return status == 0
    }
}
