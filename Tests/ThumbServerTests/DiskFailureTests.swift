import Foundation
import HTTP
import Rendering
import Synchronization
import Testing
import TestSupport
@testable import Thumbnails
@testable import ThumbServer

/// A disk cache that cannot write (a full or read-only file system) is not fatal: the server
/// keeps serving from memory and renders, counts `write_errors`, and leaves no partial files.
/// These mount a small tmpfs, so they need root (as CI has).
@Suite(.enabled(if: getuid() == 0, "mounts a tmpfs: needs root"), .serialized)
struct DiskFailureTests {
    /// A tmpfs of `size` mounted on a fresh directory, unmounted at the end.
    final class SmallFileSystem {
        let path = NSTemporaryDirectory() + "thumbd-tmpfs-\(UUID().uuidString)"

        init(size: String) throws {
            try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
            try Self.run("/bin/mount", ["-t", "tmpfs", "-o", "size=\(size)", "tmpfs", path])
        }

        /// A read-only bind mount of `directory` (inside this file system): the same files, no writes.
        func readOnlyView(of directory: String) throws -> String {
            try FileManager.default.createDirectory(atPath: view, withIntermediateDirectories: true)
            try Self.run("/bin/mount", ["--bind", directory, view])
            try Self.run("/bin/mount", ["-o", "remount,bind,ro", view])
            return view
        }

        private var view: String { path + "-ro" }

        /// `directory` (inside this file system) bound onto itself, remounted read-only or
        /// writable again (the tmpfs itself cannot be: the server's index keeps a file open for
        /// writing in it); unmounted at the end.
        func remount(_ directory: String, readOnly: Bool) throws {
            if bound == nil {
                try Self.run("/bin/mount", ["--bind", directory, directory])
                bound = directory
            }
            try Self.run("/bin/mount", ["-o", readOnly ? "remount,bind,ro" : "remount,bind,rw", directory])
        }

        private var bound: String?

        /// Fills what is free with a file of the test's own, `filler` (not the cache's), and
        /// returns its path.
        func fill() -> String {
            let filler = path + "/filler"
            let fd = open(filler, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
            for chunk in [65_536, 4_096] {
                let bytes = [UInt8](repeating: 0x5A, count: chunk)
                while write(fd, bytes, chunk) > 0 {}
            }
            close(fd)
            return filler
        }

        deinit {
            if let bound { try? Self.run("/bin/umount", ["-l", bound]) }
            try? Self.run("/bin/umount", ["-l", view])
            try? FileManager.default.removeItem(atPath: view)
            try? Self.run("/bin/umount", ["-l", path])
            try? FileManager.default.removeItem(atPath: path)
        }

        static func run(_ tool: String, _ arguments: [String]) throws {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: tool)
            process.arguments = arguments
            try process.run()
            process.waitUntilExit()
            guard process.terminationStatus == 0 else {
                throw TestClient.ClientError(description: "\(tool) \(arguments) exited \(process.terminationStatus)")
            }
        }
    }

    func files(under directory: String) -> [String] {
        (FileManager.default.enumerator(atPath: directory)?.compactMap { $0 as? String } ?? []).filter { name in
            var st = stat()
            return lstat(directory + "/" + name, &st) == 0 && (st.st_mode & S_IFMT) == S_IFREG
        }
    }

    @Test func aFullDiskCountsWriteErrorsAndKeepsServing() throws {
        let disk = try SmallFileSystem(size: "256k")
        let server = try ServerHarness(cacheDirectory: disk.path + "/cache")
        var statuses: [Int] = []
        for name in Paths.files(in: Paths.fixturePhotos) {
            for grid in ["1", "3"] {
                let response = try server.get("/thumbnails/\(grid)/\(encodePath(name))?format=png")
                statuses.append(response.status)
                #expect(response.image != nil)
            }
        }
        #expect(statuses.allSatisfy { $0 == 200 })
        usleep(200_000)   // disk writes follow the responses
        #expect(try server.stat("disk_cache", "write_errors") > 0)
        #expect(files(under: disk.path + "/cache/tmp").isEmpty)   // no partial file left behind
        #expect(try server.get("/thumbnails/3/Landscape_1.jpg?format=png").header("X-Cache") == "HIT-MEMORY")
        // What did reach the disk is whole: after a restart it is served, never a damaged entry.
        try server.restart()
        for name in Paths.files(in: Paths.fixturePhotos) {
            #expect(try server.get("/thumbnails/3/\(encodePath(name))?format=png").status == 200)
        }
        #expect(try server.stat("disk_cache", "corrupt") == 0)
        #expect(try server.stat("disk_cache", "hits") > 0)
    }

    /// A cache on a tiny file system: what a prefetch could not write is `not_stored`, with the
    /// reason, and exactly the items it counts `done` were kept: those still on disk are disk
    /// hits afterwards, the others were evicted (the full file system lowered the limit to what
    /// fits, issue 29 item 7).
    @Test func aPrefetchOnAFullDiskCountsWhatItCouldNotStore() throws {
        let disk = try SmallFileSystem(size: "256k")   // the library index takes about 60 KiB of it
        let library = try PrefetchTests.CopiesLibrary(count: 20)
        let server = try ServerHarness(library: library.root, cacheDirectory: disk.path + "/cache")
        let names = (0..<20).map { String(format: "copy-%04d.jpg", $0) }
        let prefetch = PrefetchStorageServerTests()
        let body = #"{"grid": "5", "paths": [\#(names.map { "\"\($0)\"" }.joined(separator: ","))]}"#
        let job = try prefetch.finalState(server, of: try prefetch.post(server, body))
        let done = job["done"] as? Int ?? -1, notStored = job["not_stored"] as? Int ?? -1
        #expect(job["state"] as? String == "done")
        #expect(done + notStored == 20)
        // A grid-5 thumbnail of this photo takes a few 4 KiB pages: what is left holds some, not 20.
        #expect(done >= 1)
        #expect(notStored >= 1)
        #expect((job["not_stored_reason"] as? String)?.hasSuffix("No space left on device") == true)
        // Every item done was written: on disk still, or evicted since (the cache held nothing else).
        let entries = try server.stat("disk_cache", "entries"), evictions = try server.stat("disk_cache", "evictions")
        #expect(entries + evictions == done)
        #expect(try server.stat("disk_cache", "write_errors") == notStored)
        #expect(files(under: disk.path + "/cache/entries").count == entries)
        var tiers: [String: Int] = [:]
        for name in names.reversed() { tiers[try server.get("/thumbnails/5/\(name)").header("X-Cache") ?? "none", default: 0] += 1 }
        #expect(tiers["HIT-DISK", default: 0] + tiers["MISS", default: 0] == 20)
        #expect(files(under: disk.path + "/cache/tmp").isEmpty)
    }

    /// The start line of a cache that cannot be written says what becomes of the thumbnails it
    /// does not hold: kept in memory, or with `memory_cache_bytes` 0 rendered at each request
    /// (it said "served from memory" with no memory tier). Found by an operator.
    @Test func aReadOnlyCacheDirectorysStartLineSaysWhatBecomesOfTheOthers() throws {
        let disk = try SmallFileSystem(size: "4m")
        // The writer is kept until the end: its deinit removes the cache directory.
        let writer = try Server(cache: disk.path + "/cache", diskLimit: 2 << 20)
        #expect(try writer.render("/thumbnails/3/Landscape_1.jpg").headers["X-Cache"] == "MISS")
        Self.stop(writer)
        let view = try disk.readOnlyView(of: disk.path + "/cache")
        let start = "cache_dir \(view) is not writable by this user: thumbnails are served from what it holds, "
        for (memory, others) in [(0, "the others are rendered again at each request (memory_cache_bytes is 0: none is kept)"),
                                 (1 << 20, "the others are rendered and kept in memory only (memory_cache_bytes), so rendered again after a restart")] {
            let server = try InProcessServer(cacheDirectory: view) { $0.memoryCacheBytes = memory }
            #expect(server.thumbd.warnings.contains(start + others + ", and disk_cache.write_errors counts each one not kept"),
                    "\(server.thumbd.warnings)")
            let response = server.respond("GET", "/thumbnails/3/Landscape_1.jpg")
            #expect(response.status == 200 && response.headers["X-Cache"] == "HIT-DISK")
            Self.stop(server)
        }
        withExtendedLifetime((writer, disk)) {}
    }

    /// Shuts `server` down and waits until it let the cache directory's lock go.
    static func stop(_ server: InProcessServer) {
        let stopped = DispatchSemaphore(value: 0)
        server.thumbd.shutdown { stopped.signal() }
        stopped.wait()
    }

    @Test func aReadOnlyCacheDirectoryServesWhatItHoldsAndKeepsServing() throws {
        let disk = try SmallFileSystem(size: "4m")
        let writer = try ServerHarness(cacheDirectory: disk.path + "/cache")
        #expect(try writer.get("/thumbnails/3/Landscape_1.jpg").header("X-Cache") == "MISS")
        usleep(200_000)
        writer.stop()
        let server = try ServerHarness(cacheDirectory: try disk.readOnlyView(of: disk.path + "/cache"))
        #expect(try server.get("/thumbnails/3/Landscape_1.jpg").header("X-Cache") == "HIT-DISK")
        for grid in ["1", "5"] {
            let response = try server.get("/thumbnails/\(grid)/Landscape_1.jpg")
            #expect(response.status == 200)
            #expect(response.header("X-Cache") == "MISS")
        }
        usleep(200_000)
        #expect(try server.stat("disk_cache", "write_errors") == 2)
        #expect(try server.get("/thumbnails/5/Landscape_1.jpg").header("X-Cache") == "HIT-MEMORY")
        // Its writes fail: a fault /healthz reports (issue 29, item 7), while serving goes on.
        let health = try server.get("/healthz")
        #expect(health.status == 503)
        #expect((health.json["disk_cache"] as? String)?.hasSuffix("its file system is read-only") == true)
    }
}

/// A full or read-only file system under a running server (issue 29, item 7): a fault that is
/// seen (`/healthz` 503 with the reason, `disk_cache.space_faults`, the lowered
/// `effective_limit_bytes`) and mended (the limit lowered to what fits, least recently used
/// entries evicted so that new renders are kept again; raised and `ok` again once space or write
/// access returns), the memory tier serving throughout. In-process, on a small tmpfs.
extension DiskFailureTests {
    /// A server in-process whose cache is `cache`, the placeholder backfill off (its SQLite
    /// writes would take the tmpfs' pages from under the test).
    final class Server: InProcessServer, @unchecked Sendable {
        /// `rescanning`: false leaves the library to the first scan (awaited) and the test's own
        /// `rescan()`s (no poll between them).
        init(cache: String, diskLimit: Int, library: String = Paths.fixturePhotos, rescanning: Bool = true) throws {
            try super.init(library: library, cacheDirectory: cache) { config in
                config.diskCacheBytes = diskLimit
                config.thumbhashBackfill = false
                if !rescanning { config.indexRescanSeconds = 86_400 }
            }
            if !rescanning { #expect(eventually { thumbd.service.index.completedScans >= 1 }) }
        }

        func json(_ target: String) throws -> [String: Any] {
            try #require(try JSONSerialization.jsonObject(with: Data(respond("GET", target).body)) as? [String: Any])
        }

        func stat(_ section: String, _ field: String) throws -> Int {
            ((try json("/stats")[section] as? [String: Any])?[field] as? NSNumber)?.intValue ?? -1
        }

        /// GETs `target` and waits until its render is stored (or not): no flight left.
        func render(_ target: String) throws -> HTTPResponse {
            let response = respond("GET", target)
            #expect(try eventually { try stat("renders", "flights") == 0 })
            return response
        }
    }

    static let photos = Paths.files(in: Paths.fixturePhotos).sorted()

    @Test func aFullDiskLowersTheLimitEvictsToKeepNewRendersAndIsMendedWhenSpaceReturns() throws {
        let disk = try SmallFileSystem(size: "4m")
        let limit = 2 << 20
        let server = try Server(cache: disk.path + "/cache", diskLimit: limit)
        // Grid 3 of every photo: kept on disk (and in memory), and each photo's placeholder in the index.
        for photo in Self.photos { #expect(try server.render("/thumbnails/3/\(encodePath(photo))").headers["X-Cache"] == "MISS") }
        #expect(try server.stat("disk_cache", "entries") == Self.photos.count)
        #expect(try server.stat("disk_cache", "write_errors") == 0)
        #expect(server.respond("GET", "/healthz").status == 200)

        let filler = disk.fill()
        let held = try server.stat("disk_cache", "bytes")
        // The first render after it cannot be written: the limit is lowered to what the tier
        // holds, less the library index's headroom (a 64th of the 4 MiB file system).
        let lowered = held - 65_536
        let first = try server.render("/thumbnails/5/\(encodePath(Self.photos[0]))")
        #expect(first.status == 200 && first.headers["X-Cache"] == "MISS")
        #expect(try server.stat("disk_cache", "write_errors") == 1)
        #expect(try server.stat("disk_cache", "space_faults") == 1)
        #expect(try server.stat("disk_cache", "effective_limit_bytes") == lowered)
        #expect(try server.stat("disk_cache", "limit_bytes") == limit)
        let health = server.respond("GET", "/healthz")
        #expect(health.status == 503)
        let body = try #require(try JSONSerialization.jsonObject(with: Data(health.body)) as? [String: Any])
        #expect(body["status"] as? String == "degraded")
        #expect((body["disk_cache"] as? String)?.contains("its file system is full") == true, "\(body)")
        #expect((body["disk_cache"] as? String)?.contains("its limit is lowered to \(lowered) of \(limit) bytes") == true, "\(body)")
        #expect(String(decoding: server.respond("GET", "/metrics").body, as: UTF8.self)
            .contains("\nthumbd_disk_cache_effective_limit_bytes \(lowered)\n"))

        // The next renders are kept: each evicts least recently used entries (grid 3's) to make room.
        let (entries, evictions) = (try server.stat("disk_cache", "entries"), try server.stat("disk_cache", "evictions"))
        for photo in Self.photos.dropFirst() {
            #expect(try server.render("/thumbnails/5/\(encodePath(photo))").headers["X-Cache"] == "MISS")
        }
        #expect(try server.stat("disk_cache", "write_errors") == 1, "no render after the first failed to be kept")
        let evicted = try server.stat("disk_cache", "evictions") - evictions
        #expect(evicted >= 1)
        #expect(try server.stat("disk_cache", "entries") == entries + (Self.photos.count - 1) - evicted)
        #expect(try server.stat("disk_cache", "bytes") <= lowered)
        // The memory tier served on: every grid 3 thumbnail is a memory hit, counted.
        let memoryHits = try server.stat("memory_cache", "hits")
        for photo in Self.photos {
            #expect(server.respond("GET", "/thumbnails/3/\(encodePath(photo))").headers["X-Cache"] == "HIT-MEMORY")
        }
        #expect(try server.stat("memory_cache", "hits") == memoryHits + Self.photos.count)

        // Space returns: the probe (`/healthz` runs one) raises the limit, and the fault is over.
        #expect(unlink(filler) == 0)
        #expect(server.respond("GET", "/healthz").status == 200)
        #expect(try server.json("/healthz")["status"] as? String == "ok")
        #expect(try server.stat("disk_cache", "effective_limit_bytes") == limit)
        let before = (try server.stat("disk_cache", "entries"), try server.stat("disk_cache", "evictions"))
        #expect(try server.render("/thumbnails/1/\(encodePath(Self.photos[0]))").headers["X-Cache"] == "MISS")
        #expect(try server.stat("disk_cache", "entries") == before.0 + 1)
        #expect(try server.stat("disk_cache", "evictions") == before.1)
        #expect(try server.stat("disk_cache", "write_errors") == 1)
        #expect(try server.stat("disk_cache", "space_faults") == 1)
        withExtendedLifetime(disk) {}
    }

    /// The library index (`index.sqlite`, its WAL) shares the file system: once it is full, the
    /// tier's lowered limit leaves the index its headroom, so that the listing's and the
    /// placeholders' writes are still taken while the tier's own writes fill what it may.
    @Test func aFullDiskLeavesTheLibraryIndexRoomToBeWritten() throws {
        let disk = try SmallFileSystem(size: "4m")
        let library = try PrefetchTests.CopiesLibrary(count: 4)
        let server = try Server(cache: disk.path + "/cache", diskLimit: 2 << 20, library: library.root, rescanning: false)
        let names = (0..<4).map { String(format: "copy-%04d.jpg", $0) }
        for name in names { #expect(try server.render("/thumbnails/3/\(name)").headers["X-Cache"] == "MISS") }
        let filler = disk.fill()
        // The tier's next writes: the first fails and lowers the limit, the others fill what it
        // lets them.
        for grid in ["5", "1"] {
            for name in names { #expect(try server.render("/thumbnails/\(grid)/\(name)").status == 200) }
        }
        #expect(try server.stat("disk_cache", "space_faults") == 1)
        #expect(try server.stat("disk_cache", "write_errors") >= 1)
        // Then the index: two photos more in the library, listed (one write), and their
        // placeholders made beside their renders (one write each).
        for n in 4..<6 {
            try FileManager.default.copyItem(atPath: library.root + "/copy-0000.jpg", toPath: library.root + String(format: "/copy-%04d.jpg", n))
        }
        server.thumbd.service.index.rescan()
        for n in 4..<6 { #expect(try server.render(String(format: "/thumbnails/3/copy-%04d.jpg", n)).status == 200) }
        #expect(try server.stat("library", "assets") == 6)
        #expect(try server.stat("library", "index_write_errors") == 0)
        #expect(try server.stat("placeholders", "write_errors") == 0)
        #expect(try server.stat("placeholders", "known") == 6)
        #expect(try server.json("/healthz")["library_index"] == nil)
        #expect(unlink(filler) == 0)
        withExtendedLifetime(disk) {}
    }

    /// An index write that fails (the file system filled by another program, before any
    /// thumbnail write could lower the tier's limit) is a fault: `/healthz` says why while it
    /// lasts, and it ends with the next write taken (`/healthz` tries one).
    @Test func anIndexThatCannotBeWrittenIsAFaultUntilItIsWrittenAgain() throws {
        let disk = try SmallFileSystem(size: "4m")
        let library = try PrefetchTests.CopiesLibrary(count: 2)
        let server = try Server(cache: disk.path + "/cache", diskLimit: 2 << 20, library: library.root, rescanning: false)
        #expect(server.respond("GET", "/healthz").status == 200)
        let filler = disk.fill()
        for n in 2..<4 {
            try FileManager.default.copyItem(atPath: library.root + "/copy-0000.jpg", toPath: library.root + String(format: "/copy-%04d.jpg", n))
            server.thumbd.service.index.rescan()
        }
        #expect(try server.stat("library", "assets") == 4)   // listed all the same, from memory
        #expect(try server.stat("library", "index_write_errors") == 2)
        for _ in 0..<2 {   // each call tries a write first
            let health = server.respond("GET", "/healthz")
            #expect(health.status == 503)
            let body = try #require(try JSONSerialization.jsonObject(with: Data(health.body)) as? [String: Any])
            #expect(body["status"] as? String == "degraded")
            #expect(body["disk_cache"] == nil, "\(body)")   // the tier wrote nothing since
            #expect(body["library_index"] as? String == "the library index \(server.cache)/index.sqlite cannot be written "
                    + "(database or disk is full): the listing is kept in memory, and a restart reads again what was not written",
                    "\(body)")
        }
        #expect(unlink(filler) == 0)
        #expect(server.respond("GET", "/healthz").status == 200)
        #expect(try server.json("/healthz")["library_index"] == nil)
        #expect(try server.stat("library", "index_write_errors") == 2)
        withExtendedLifetime(disk) {}
    }

    @Test func aCacheDirectoryTurnedReadOnlyIsAFaultUntilItIsWritableAgain() throws {
        let disk = try SmallFileSystem(size: "4m")
        let server = try Server(cache: disk.path + "/cache", diskLimit: 2 << 20)
        #expect(try server.render("/thumbnails/3/\(encodePath(Self.photos[0]))").headers["X-Cache"] == "MISS")
        #expect(try server.stat("disk_cache", "entries") == 1)

        try disk.remount(server.cache, readOnly: true)
        // The first write meets EROFS; the next is not tried; each is counted.
        #expect(try server.render("/thumbnails/5/\(encodePath(Self.photos[0]))").status == 200)
        #expect(try server.stat("disk_cache", "write_errors") == 1)
        let health = server.respond("GET", "/healthz")
        #expect(health.status == 503)
        let body = try #require(try JSONSerialization.jsonObject(with: Data(health.body)) as? [String: Any])
        #expect(body["status"] as? String == "degraded")
        #expect((body["disk_cache"] as? String)?.hasSuffix("its file system is read-only") == true, "\(body)")
        #expect(try server.render("/thumbnails/5/\(encodePath(Self.photos[1]))").status == 200)
        #expect(try server.stat("disk_cache", "write_errors") == 2)
        #expect(try server.stat("disk_cache", "space_faults") == 1)
        #expect(try server.stat("disk_cache", "entries") == 1)
        let memoryHits = try server.stat("memory_cache", "hits")
        for (grid, photo) in [("3", 0), ("5", 0), ("5", 1)] {
            #expect(server.respond("GET", "/thumbnails/\(grid)/\(encodePath(Self.photos[photo]))").headers["X-Cache"] == "HIT-MEMORY")
        }
        #expect(try server.stat("memory_cache", "hits") == memoryHits + 3)

        try disk.remount(server.cache, readOnly: false)
        #expect(server.respond("GET", "/healthz").status == 200)
        #expect(try server.render("/thumbnails/5/\(encodePath(Self.photos[2]))").headers["X-Cache"] == "MISS")
        #expect(try server.stat("disk_cache", "entries") == 2)
        #expect(try server.stat("disk_cache", "write_errors") == 2)
        #expect(try server.stat("disk_cache", "effective_limit_bytes") == 2 << 20)
        withExtendedLifetime(disk) {}
    }
}

/// A file system the kernel turns read-only after an error: ext4 with `errors=remount-ro` on a
/// loop device, its error triggered through sysfs (`trigger_fs_error`). It stays mounted
/// read-write as statvfs reads it (`emergency_ro`), while every write fails with EROFS.
extension DiskFailureTests {
    final class FailingExt4 {
        let path = NSTemporaryDirectory() + "thumbd-ext4-\(UUID().uuidString)"
        var image: String { path + ".img" }

        init() throws {
            try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
            try SmallFileSystem.run("/usr/bin/truncate", ["-s", "24M", image])
            try SmallFileSystem.run("/sbin/mkfs.ext4", ["-q", "-F", image])
            try SmallFileSystem.run("/bin/mount", ["-o", "loop,errors=remount-ro", image, path])
        }

        /// Makes the kernel meet an error on it, as a failing disk does.
        func fail() throws {
            let mounts = try String(contentsOfFile: "/proc/self/mounts", encoding: .utf8)
            var device: String?
            for line in mounts.split(separator: "\n") {
                let fields = line.split(separator: " ")
                if fields.count > 1 && String(fields[1]) == path { device = String(fields[0]) }
            }
            let source = try #require(device, "\(path) is not mounted")
            let name = source.split(separator: "/").last.map(String.init) ?? source
            try Data("1".utf8).write(to: URL(fileURLWithPath: "/sys/fs/ext4/\(name)/trigger_fs_error"))
        }

        deinit {
            try? SmallFileSystem.run("/bin/umount", ["-l", path])
            try? FileManager.default.removeItem(atPath: image)
            try? FileManager.default.removeItem(atPath: path)
        }
    }

    /// The fault lasts while no file can be made, whatever statvfs says: it does not end at the
    /// next probe, to begin again at the next write (one line each way, flapping).
    @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: "/sbin/mkfs.ext4")
                   && FileManager.default.fileExists(atPath: "/sys/fs/ext4"), "needs mkfs.ext4 and ext4's sysfs"))
    func aDiskTheKernelTurnedReadOnlyStaysAFault() throws {
        let disk = try FailingExt4()
        let server = try Server(cache: disk.path + "/cache", diskLimit: 2 << 20)
        #expect(try server.render("/thumbnails/3/\(encodePath(Self.photos[0]))").headers["X-Cache"] == "MISS")
        #expect(try server.stat("disk_cache", "entries") == 1)
        try disk.fail()
        #expect(try server.render("/thumbnails/5/\(encodePath(Self.photos[0]))").status == 200)
        #expect(try server.stat("disk_cache", "write_errors") == 1)
        for _ in 0..<3 {   // each call probes the file system first
            let health = server.respond("GET", "/healthz")
            #expect(health.status == 503, "\(String(decoding: health.body, as: UTF8.self))")
        }
        #expect(try server.render("/thumbnails/5/\(encodePath(Self.photos[1]))").status == 200)
        #expect(try server.stat("disk_cache", "space_faults") == 1)
        #expect(try server.stat("disk_cache", "entries") == 1)
        withExtendedLifetime(disk) {}
    }
}

/// The disk tier alone on a tmpfs turned read-only while it is at its limit: a write must evict
/// first, and its victims' unlinks fail with EROFS.
extension DiskFailureTests {
    func key(_ name: String) -> CacheKey {
        CacheKey(assetPath: name, source: SourceIdentity(size: 10, modifiedNanoseconds: 1),
                 spec: GridSpec.defaults[1], format: .automatic, quality: 80)
    }

    /// A thumbnail whose entry takes exactly one 4 KiB block on disk.
    func oneBlock(_ fill: UInt8) -> Thumbnail {
        Thumbnail(bytes: [UInt8](repeating: fill, count: 3_000), format: .png, width: 33, height: 44)
    }

    /// Nobody asks (no `/healthz`, no `/stats`): the probe's own timer finds the space back,
    /// raises the limit and ends the fault, then stops.
    @Test func theProbeTimerMendsAFullDiskOnItsOwn() throws {
        let disk = try SmallFileSystem(size: "256k")
        let path = disk.path + "/cache"
        let said = Mutex<[String]>([])
        let cache = try DiskCache(directory: path, limitBytes: 131_072, spaceProbeSeconds: 0.05,
                                  warn: { line in said.withLock { $0.append(line) } })
        #expect(cache.store(oneBlock(1), for: key("kept")) == .written)
        let filler = disk.fill()
        let big = Thumbnail(bytes: [UInt8](repeating: 7, count: 40_000), format: .png, width: 33, height: 44)
        guard case .failed(let why) = cache.store(big, for: key("big")) else { Issue.record("the write was made"); return }
        #expect(why.hasSuffix("No space left on device"))
        #expect(cache.statistics.effectiveLimitBytes < 131_072)
        #expect(cache.probe.withLock { $0 != nil })
        #expect(unlink(filler) == 0)
        #expect(eventually { cache.statistics.fault == nil })
        #expect(cache.statistics.effectiveLimitBytes == 131_072)
        #expect(eventually { cache.probe.withLock { $0 == nil } })
        #expect(said.withLock { $0.count } == 2)
        #expect(cache.store(big, for: key("big")) == .written)
    }

    /// The victims are still there, whole: they are entries again (not evicted, not counted
    /// for good as files that could not be deleted), the fault is the file system's, and once
    /// it is writable again the limit holds as before, the index and the files agreeing.
    @Test func aCacheAtItsLimitTurnedReadOnlyKeepsTheEntriesItCouldNotEvict() throws {
        let disk = try SmallFileSystem(size: "1m")
        let path = disk.path + "/cache"
        let cache = try DiskCache(directory: path, limitBytes: 16_384, warn: { _ in })
        for n in 0..<4 { #expect(cache.store(oneBlock(UInt8(n)), for: key("e\(n)")) == .written) }
        #expect(cache.statistics.bytes == 16_384)

        try disk.remount(path, readOnly: true)
        #expect(cache.store(oneBlock(9), for: key("new"))
            == .failed("cannot delete evicted entries in the disk cache \(path): its file system is read-only"))
        var statistics = cache.statistics
        #expect(statistics.entries == 4 && statistics.bytes == 16_384)
        #expect(statistics.evictions == 0)
        #expect(statistics.writeErrors == 1)
        #expect(statistics.spaceFaults == 1)
        #expect(statistics.fault?.hasSuffix("its file system is read-only") == true)
        #expect(cache.read(key("e0"))?.bytes == oneBlock(0).bytes)   // the first victim, served still
        // The next write is not tried.
        #expect(cache.store(oneBlock(9), for: key("new")) == .failed(try #require(statistics.fault)))
        #expect(cache.statistics.writeErrors == 2)

        try disk.remount(path, readOnly: false)
        #expect(cache.checkSpace() == nil)
        #expect(cache.store(oneBlock(9), for: key("new")) == .written)
        statistics = cache.statistics
        #expect(statistics.entries == 4 && statistics.bytes == 16_384)
        #expect(statistics.evictions == 1)
        #expect(files(under: path + "/entries").count == 4)
        #expect(statistics.fault == nil)
    }
}
