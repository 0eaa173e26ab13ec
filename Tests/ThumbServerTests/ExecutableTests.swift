import Foundation
import Testing
import TestSupport

/// The `thumbd` executable as a user runs it: flags, config errors, signals, restart.
@Suite struct ExecutableTests {
    static let binary: String = {
        for configuration in ["debug", "release"] {
            let path = Paths.packageRoot + "/.build/\(configuration)/thumbd"
            if FileManager.default.isExecutableFile(atPath: path) { return path }
        }
        return Paths.packageRoot + "/.build/debug/thumbd"
    }()

    struct Run {
        var status: Int32
        var output: String
        var error: String
    }

    /// Runs thumbd to completion: it must exit by itself, and is sent SIGTERM after
    /// `timeoutSeconds` (a server that started when it should have refused stops the test, not CI).
    func run(_ arguments: [String], environment: [String: String] = [:], timeoutSeconds: Double = 60) throws -> Run {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: Self.binary)
        process.arguments = arguments
        process.currentDirectoryURL = URL(fileURLWithPath: NSTemporaryDirectory())
        process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        let out = Pipe(), err = Pipe()
        process.standardOutput = out
        process.standardError = err
        try process.run()
        DispatchQueue.global().asyncAfter(deadline: .now() + timeoutSeconds) { [process] in
            if process.isRunning { process.terminate() }
        }
        let output = out.fileHandleForReading.readDataToEndOfFile()
        let error = err.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return Run(status: process.terminationStatus, output: String(decoding: output, as: UTF8.self),
                   error: String(decoding: error, as: UTF8.self))
    }

    @Test func helpListsEveryOptionWithItsDefault() throws {
        let help = try run(["--help"])
        #expect(help.status == 0)
        for flag in ["--library", "--port", "--host", "--cache-dir", "--config", "--memory-cache-bytes",
                     "--disk-cache-bytes", "--quality", "--render-workers", "--access-log"] {
            #expect(help.output.contains(flag), "--help does not mention \(flag)")
        }
        #expect(help.output.contains("default 8080"))
        #expect(help.output.contains("default 268435456"))
        #expect(help.output.contains("THUMBD_PORT"))
    }

    /// `thumbd sign` prints a signed URL that the server's check accepts, with its expiry rounded
    /// up to `signed_url_bucket_seconds`, and refuses with exit status 2 what it cannot sign.
    @Test func signPrintsASignedURL() throws {
        let secret = String(repeating: "4f2a", count: 16)
        let signed = try run(["sign", "--key-id", "2026-12", "--grid", "3", "--path", "cameras/nikon-d40.jpg",
                              "--expires-in", "1h", "--base-url", "https://thumbs.example.com"],
                             environment: ["THUMBD_SIGNING_KEYS": "2026-12:" + secret])
        #expect(signed.status == 0, "\(signed.error)")
        let url = signed.output.trimmingCharacters(in: .newlines)
        #expect(url.hasPrefix("https://thumbs.example.com/thumbnails/3/cameras/nikon-d40.jpg?exp="))
        let exp = try #require(Int(url.components(separatedBy: "?exp=")[1].prefix { $0.isNumber }))
        let now = Int(Date().timeIntervalSince1970)
        #expect(exp % 3600 == 0 && exp >= now + 3600 && exp <= now + 7200 + 5)
        let python = try URLSigningTests.signatureByPython(grid: "3", path: "cameras/nikon-d40.jpg", expires: exp, secretHex: secret)
        #expect(url.hasSuffix("&kid=2026-12&sig=" + python))
        let unsigned = try run(["sign", "--grid", "3", "--path", "a.jpg"])
        #expect(unsigned.status == 2 && unsigned.error.contains("signing_keys"))
    }

    @Test func badStartUpsStopWithOneSentenceNamingTheCulprit() throws {
        let noLibrary = try run([])
        #expect(noLibrary.status == 2)
        #expect(noLibrary.error.contains("--library"))
        let missing = try run(["--library", "/definitely/not/here"])
        #expect(missing.status == 2)
        #expect(missing.error.contains("/definitely/not/here"))
        let badPort = try run(["--library", Paths.fixturePhotos, "--port", "70000"])
        #expect(badPort.status == 2)
        #expect(badPort.error.contains("--port"))
        let badEnv = try run(["--library", Paths.fixturePhotos], environment: ["THUMBD_QUALITY": "high"])
        #expect(badEnv.status == 2)
        #expect(badEnv.error.contains("THUMBD_QUALITY"))
        let typoEnv = try run(["--library", Paths.fixturePhotos], environment: ["THUMBD_QUALTY": "40"])
        #expect(typoEnv.status == 2)
        #expect(typoEnv.error.contains("THUMBD_QUALTY"))
        #expect(typoEnv.error.split(separator: "\n").count == 1)
        let config = NSTemporaryDirectory() + "thumbd-bad-\(UUID().uuidString).json"
        try Data(#"{"port": 8080, "colour": "blue"}"#.utf8).write(to: URL(fileURLWithPath: config))
        defer { try? FileManager.default.removeItem(atPath: config) }
        let badKey = try run(["--config", config, "--library", Paths.fixturePhotos])
        #expect(badKey.status == 2)
        #expect(badKey.error.contains("colour"))
        #expect(badKey.error.split(separator: "\n").count == 1)
    }

    /// The mistake that once cost a user photos: the library given as the cache directory (and a
    /// cache inside it, or around it). Refused with one sentence; every photo stays as it was.
    @Test func aCacheDirectoryThatOverlapsTheLibraryIsRefusedAndDeletesNothing() throws {
        let dl = NSTemporaryDirectory() + "thumbd-dl-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: dl) }
        let photos = ["tmp/holiday.jpg": "Landscape_1.jpg", "entries/00/wedding.jpg": "kodak-dc210-1998-vga.jpg",
                      "entries/family.jpg": "Landscape_6.jpg"]
        for (path, fixture) in photos {
            try FileManager.default.createDirectory(atPath: dl + "/" + (path as NSString).deletingLastPathComponent,
                                                    withIntermediateDirectories: true)
            try FileManager.default.copyItem(atPath: Paths.fixturePhotos + "/" + fixture, toPath: dl + "/" + path)
        }
        for (cache, says) in [(dl, "is the library itself"), (dl + "/entries", "is inside the library"),
                              (dl + "/.thumbd-cache", "is inside the library"),
                              ((dl as NSString).deletingLastPathComponent, "contains the library")] {
            let refused = try run(["--library", dl, "--cache-dir", cache, "--port", "0"], timeoutSeconds: 10)
            #expect(refused.status == 2)
            #expect(refused.error.contains(says), "\(refused.error)")
            #expect(refused.error.split(separator: "\n").count == 1)
        }
        for (path, fixture) in photos {
            #expect(FileManager.default.contents(atPath: dl + "/" + path)
                    == FileManager.default.contents(atPath: Paths.fixturePhotos + "/" + fixture))
        }
        #expect(!FileManager.default.fileExists(atPath: dl + "/.thumbd-cache"))
    }

    @Test func servesAndStopsCleanlyOnSIGTERM() throws {
        let cache = NSTemporaryDirectory() + "thumbd-exe-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: cache) }
        let server = try launch(library: Paths.fixturePhotos, cache: cache)
        let response = try TestClient.get(port: server.port, "/thumbnails/3/Landscape_1.jpg")
        #expect(response.status == 200)
        #expect(response.image == ImageHeader(format: "jpeg", width: 393, height: 393))
        kill(server.process.processIdentifier, SIGTERM)
        server.process.waitUntilExit()
        #expect(server.process.terminationReason == .exit)
        #expect(server.process.terminationStatus == 0)
    }

    /// A running thumbd, its port, its stdout and what it printed so far (the first line).
    struct Launched {
        let process: Process
        let port: UInt16
        let output: Pipe
        let firstLine: String
    }

    /// Starts thumbd on port 0 (optionally through `wrapper`, e.g. `setpriv …`, `prlimit …`) and
    /// reads the bound port from its first line: "... on http://127.0.0.1:PORT/ ...". Its stderr
    /// goes to `standardError` (nowhere by default).
    func launch(_ wrapper: [String] = [], library: String, cache: String, extra: [String] = [],
                standardError: FileHandle = .nullDevice) throws -> Launched {
        let process = Process()
        let arguments = ["--library", library, "--port", "0", "--cache-dir", cache] + extra
        // Foundation's Process lets the child inherit every descriptor the test process has open
        // (other tests' sockets, hundreds at times); a small python3 step closes them first, so
        // the server starts as it would from a shell (and an fd limit means what it says).
        process.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
        process.arguments = ["-c", "import os, sys; os.closerange(3, 1 << 16); os.execv(sys.argv[1], sys.argv[1:])"]
            + (wrapper.isEmpty ? [Self.binary] : wrapper + [Self.binary]) + arguments
        process.currentDirectoryURL = URL(fileURLWithPath: NSTemporaryDirectory())
        let out = Pipe()
        process.standardOutput = out
        process.standardError = standardError
        try process.run()
        var line = ""
        while !line.contains("\n") {
            let data = out.fileHandleForReading.availableData
            if data.isEmpty { break }
            line += String(decoding: data, as: UTF8.self)
        }
        let afterHost = line.components(separatedBy: "127.0.0.1:").dropFirst().first ?? ""
        let port = try #require(UInt16(afterHost.prefix { $0.isNumber }), "no port in \(line)")
        return Launched(process: process, port: port, output: out, firstLine: line)
    }

    @Test(.enabled(if: getuid() == 0, "drops to user nobody: needs root"))
    func anUnreadableSourceIs403Never404AndNotCached() throws {
        let root = NSTemporaryDirectory() + "thumbd-perm-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: root + "/library", withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: root + "/cache", withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: root) }
        for path in [root, root + "/library", root + "/cache"] { chmod(path, 0o777) }
        try FileManager.default.copyItem(atPath: Paths.fixturePhotos + "/Landscape_1.jpg", toPath: root + "/library/locked.jpg")
        try FileManager.default.copyItem(atPath: Paths.fixturePhotos + "/Landscape_1.jpg", toPath: root + "/library/open.jpg")
        chmod(root + "/library/locked.jpg", 0o000)
        chmod(root + "/library/open.jpg", 0o644)
        let server = try launch(["/usr/bin/setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"],
                                library: root + "/library", cache: root + "/cache")
        let port = server.port
        defer { server.process.terminate(); server.process.waitUntilExit() }
        for _ in 0..<2 {
            let locked = try TestClient.get(port: port, "/thumbnails/3/locked.jpg")
            #expect(locked.status == 403)   // the user's permissions, not a fault of the server (500)
            #expect(locked.json["error"] as? String == "forbidden")
            #expect(locked.header("ETag") == nil)
        }
        #expect(try TestClient.get(port: port, "/thumbnails/3/open.jpg").status == 200)
        // Refused when its URL is resolved, before a render is tried (so before anything of it
        // could be cached): the one render is open.jpg's.
        let renders = try TestClient.get(port: port, "/stats").json["renders"] as? [String: Any]
        #expect(renders?["total"] as? Int == 1 && renders?["failed"] as? Int == 0)
    }

    /// A photo whose thumbnail is cached, then made unreadable (`chmod 000`, e.g. to hide it),
    /// answers 403 as an uncached one does, not its cached thumbnail (the watch reports the
    /// change, and the URL is resolved again).
    @Test(.enabled(if: getuid() == 0, "drops to user nobody: needs root"))
    func aPhotoMadeUnreadableIs403EvenWithItsThumbnailCached() throws {
        let root = NSTemporaryDirectory() + "thumbd-perm-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: root + "/library", withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: root + "/cache", withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: root) }
        for path in [root, root + "/library", root + "/cache"] { chmod(path, 0o777) }
        try FileManager.default.copyItem(atPath: Paths.fixturePhotos + "/Landscape_1.jpg", toPath: root + "/library/private.jpg")
        chmod(root + "/library/private.jpg", 0o644)
        let server = try launch(["/usr/bin/setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"],
                                library: root + "/library", cache: root + "/cache")
        defer { server.process.terminate(); server.process.waitUntilExit() }
        for _ in 0..<2 { #expect(try TestClient.get(port: server.port, "/thumbnails/3/private.jpg").status == 200) }
        chmod(root + "/library/private.jpg", 0o000)
        let refused = eventually(within: 5) {
            (try? TestClient.get(port: server.port, "/thumbnails/3/private.jpg").status) == 403
        }
        #expect(refused, "the cached thumbnail of an unreadable photo is still served")
        let again = try TestClient.get(port: server.port, "/thumbnails/3/private.jpg")
        #expect(again.status == 403 && again.json["error"] as? String == "forbidden")
        chmod(root + "/library/private.jpg", 0o644)   // readable again: served again
        #expect(eventually(within: 5) { (try? TestClient.get(port: server.port, "/thumbnails/3/private.jpg").status) == 200 })
    }

    /// A placeholder made from the whole picture (an ImageMagick load, decoded whole for every
    /// render) released no image twice: with GLib's criticals fatal, a `g_object_unref` of an
    /// image already freed (an sRGB image put in two slots of one context) ended the process.
    @Test func aWholePicturePlaceholderReleasesEachImageOnce() throws {
        let library = NSTemporaryDirectory() + "thumbd-exe-lib-\(UUID().uuidString)"
        let cache = NSTemporaryDirectory() + "thumbd-exe-\(UUID().uuidString)"
        defer { [library, cache].forEach { try? FileManager.default.removeItem(atPath: $0) } }
        try FileManager.default.createDirectory(atPath: library, withIntermediateDirectories: true)
        let formats = (Fixtures.photos as NSString).deletingLastPathComponent + "/formats"
        for n in 0..<3 {   // three sources: three placeholders made whole
            try FileManager.default.copyItem(atPath: formats + "/bmp-24bit-64x48.bmp", toPath: library + "/b\(n).bmp")
        }
        let server = try launch(["/usr/bin/env", "G_DEBUG=fatal-criticals"], library: library, cache: cache,
                                extra: ["--thumbhash-backfill", "false"])
        defer { kill(server.process.processIdentifier, SIGKILL); server.process.waitUntilExit() }
        // Listed first: a render asks for a placeholder only for a source the index knows.
        #expect(eventually(within: 10) { ((try? TestClient.get(port: server.port, "/assets"))?.json["total"] as? Int) == 3 })
        for n in 0..<3 {   // the 64x48 source's centre square, not enlarged
            let response = try TestClient.get(port: server.port, "/thumbnails/3/b\(n).bmp")
            #expect(response.status == 200 && response.image == ImageHeader(format: "jpeg", width: 48, height: 48))
        }
        // Each render's placeholder, kept just after its answer.
        var listing: [String: Any] = [:]
        #expect(eventually(within: 10) {
            listing = (try? TestClient.get(port: server.port, "/assets"))?.json ?? [:]
            let items = listing["items"] as? [[String: Any]]
            return items?.count == 3 && items?.allSatisfy { $0["thumbhash"] is String } == true
        }, "\(listing)")
        #expect(server.process.isRunning)
    }

    /// A log line that cannot be written is lost, not fatal: with stdout and stderr pipes whose
    /// readers went away (as journald's streams after journald restarts), a reload (which logs
    /// to stderr) and a stop (which logs "stopping" to stdout) go on, and it exits 0.
    @Test func aLogThatCannotBeWrittenDoesNotStopTheServer() throws {
        let cache = NSTemporaryDirectory() + "thumbd-exe-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: cache) }
        let errors = Pipe()
        let server = try launch(library: Paths.fixturePhotos, cache: cache, standardError: errors.fileHandleForWriting)
        defer { if server.process.isRunning { kill(server.process.processIdentifier, SIGKILL) } }
        try errors.fileHandleForWriting.close()   // the server's copy stays open
        try errors.fileHandleForReading.close()
        try server.output.fileHandleForReading.close()
        kill(server.process.processIdentifier, SIGHUP)
        #expect(eventually(within: 5) { (try? TestClient.get(port: server.port, "/healthz").status) == 200 })
        usleep(300_000)   // the reload's line has been written (and lost) by now
        #expect(server.process.isRunning)
        #expect(try TestClient.get(port: server.port, "/thumbnails/3/Landscape_1.jpg").status == 200)
        kill(server.process.processIdentifier, SIGTERM)
        server.process.waitUntilExit()
        #expect(server.process.terminationReason == .exit && server.process.terminationStatus == 0,
                "ended by \(server.process.terminationReason == .exit ? "exit" : "signal") \(server.process.terminationStatus)")
    }

    @Test func theAccessLogWritesOneLinePerRequest() throws {
        let cache = NSTemporaryDirectory() + "thumbd-log-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: cache) }
        let server = try launch(library: Paths.fixturePhotos, cache: cache, extra: ["--access-log"])
        _ = try TestClient.get(port: server.port, "/thumbnails/5/Landscape_1.jpg")
        _ = try TestClient.get(port: server.port, "/thumbnails/5/Landscape_1.jpg")
        _ = try TestClient.get(port: server.port, "/nope")
        _ = try? TestClient.exchange(port: server.port, Array("BAD\r\n\r\n".utf8))   // no method, no target
        usleep(200_000)
        kill(server.process.processIdentifier, SIGTERM)
        let text = server.firstLine + String(decoding: server.output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        server.process.waitUntilExit()
        let lines = text.split(separator: "\n").filter { $0.contains(" GET ") }
        #expect(lines.count == 3)
        #expect(lines.first?.contains("GET /thumbnails/5/Landscape_1.jpg 200 ") == true)
        #expect(lines.first?.contains(" MISS ") == true)
        #expect(lines.dropFirst().first?.contains(" HIT-MEMORY ") == true)
        #expect(lines.last?.contains("GET /nope 404 ") == true)
        #expect(lines.allSatisfy { $0.hasSuffix("ms") })
        #expect(text.split(separator: "\n").contains { $0.contains("Z - - 400 ") })
    }

    @Test func runningOutOfFileDescriptorsIsNotACrash() throws {
        let cache = NSTemporaryDirectory() + "thumbd-fd-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: cache) }
        let server = try launch(["/usr/bin/prlimit", "--nofile=48:48"], library: Paths.fixturePhotos, cache: cache)
        let (process, port) = (server.process, server.port)
        defer { process.terminate(); process.waitUntilExit() }
        var sockets: [Int32] = []
        for _ in 0..<100 {   // twice what the server may hold open
            let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_port = port.bigEndian
            address.sin_addr.s_addr = inet_addr("127.0.0.1")
            _ = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
            }
            sockets.append(fd)
        }
        usleep(300_000)
        sockets.forEach { close($0) }
        usleep(300_000)
        // This flood once landed while `dispatchMain()` was creating the main queue's eventfd,
        // and libdispatch trapped (SIGILL) in about 2 runs of 5; the server now accepts only
        // after that point (Launcher).
        #expect(process.isRunning)
        let health = try TestClient.get(port: port, "/healthz")
        #expect(health.status == 200)
        #expect(try TestClient.get(port: port, "/thumbnails/5/Landscape_1.jpg").status == 200)
    }
}
