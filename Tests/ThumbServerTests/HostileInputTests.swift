import Foundation
import Testing
import TestSupport
@testable import ThumbServer

/// Bombs and slow clients (hostile-input issue): each answered quickly, memory stays flat, and
/// everyone else keeps being served.
@Suite(.serialized) struct HostileInputTests {
    /// Resident memory of this process (where the server runs), bytes.
    func residentBytes() -> Int {
        let status = (try? String(contentsOfFile: "/proc/self/status", encoding: .utf8)) ?? ""
        let line = status.split(separator: "\n").first { $0.hasPrefix("VmRSS:") } ?? ""
        return (Int(line.split(separator: " ").dropFirst().first ?? "") ?? 0) * 1024
    }

    @Test func generatedBombsAreAnsweredFastWithFlatMemory() throws {
        let root = NSTemporaryDirectory() + "thumbd-bombs-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: root) }
        _ = FileManager.default.createFile(atPath: root + "/png-30000x30000.png", contents: Data(Bombs.png))
        _ = FileManager.default.createFile(atPath: root + "/jpeg-65000x65000.jpg", contents: Data(Bombs.jpeg))
        _ = FileManager.default.createFile(atPath: root + "/gif-5000-frames.gif", contents: Data(Bombs.gif(frames: 5000)))
        #expect(VipsHeader.field("width", root + "/png-30000x30000.png") == "30000")   // the headers really say so
        #expect(VipsHeader.field("height", root + "/jpeg-65000x65000.jpg") == "65000")
        let server = try ServerHarness(library: root)
        _ = try server.get("/healthz")
        let before = residentBytes()
        for (name, expected) in [("png-30000x30000.png", 422), ("jpeg-65000x65000.jpg", 422)] {
            for grid in ["1", "3", "5"] {
                let started = Date()
                let response = try server.get("/thumbnails/\(grid)/\(name)")
                #expect(response.status == expected, "\(name): \(response.text)")
                #expect(response.json["error"] as? String == "source_too_large")
                #expect(Date().timeIntervalSince(started) < 2)
            }
        }
        let started = Date()
        let gif = try server.get("/thumbnails/3/gif-5000-frames.gif")
        #expect(Date().timeIntervalSince(started) < 2)
        #expect(gif.status == 200)   // its first frame, as a still
        #expect(gif.image == ImageHeader(format: "png", width: 1, height: 1))
        let growth = residentBytes() - before
        // AddressSanitizer's quarantine keeps freed memory resident, so the bound holds only without it.
        if dlsym(nil, "__asan_init") == nil {
            #expect(growth < 50 << 20, "resident memory grew by \(growth >> 20) MB")
        }
        #expect(try server.get("/healthz").status == 200)
    }

    @Test func fiveHundredTricklingClientsDoNotDelayOthers() throws {
        let server = try ServerHarness()
        _ = try server.get("/thumbnails/3/Landscape_1.jpg")   // a hot entry
        var sockets: [Int32] = []
        defer { sockets.forEach { close($0) } }
        for _ in 0..<500 {
            let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_port = server.port.bigEndian
            address.sin_addr.s_addr = inet_addr("127.0.0.1")
            let connected = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
            }
            #expect(connected == 0)
            sockets.append(fd)
        }
        let header = Array("GET /healthz HTTP/1.1\r\nHost: x\r\nX-Slow: ".utf8)
        var worst = 0.0
        for round in 0..<20 {   // two seconds of one byte per client every 100 ms
            for fd in sockets { _ = send(fd, [header[min(round, header.count - 1)]], 1, Int32(MSG_NOSIGNAL)) }
            let started = Date()
            let hit = try server.get("/thumbnails/3/Landscape_1.jpg")
            #expect(hit.header("X-Cache") == "HIT-MEMORY")
            worst = max(worst, Date().timeIntervalSince(started))
            usleep(100_000)
        }
        #expect(worst < 1, "a normal request took \(worst) s among 500 trickling clients")
        #expect(try server.stat("connections", "open") >= 500)
    }
}
