import Foundation
import Testing
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

        deinit {
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
    /// reason, and exactly the items it counts `done` are disk hits afterwards.
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
        var tiers: [String: Int] = [:]
        for name in names { tiers[try server.get("/thumbnails/5/\(name)").header("X-Cache") ?? "none", default: 0] += 1 }
        #expect(tiers == ["HIT-DISK": done, "MISS": notStored])
        #expect(files(under: disk.path + "/cache/tmp").isEmpty)
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
        #expect(try server.get("/healthz").status == 200)
    }
}
