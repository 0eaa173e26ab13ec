import Foundation
import Testing
import TestSupport

/// SIGHUP and SIGUSR1 sent to the built `thumbd` (issue 29, items 5 and 6): a reload puts a new
/// client key in force and a config that does not load is refused while the server goes on; a
/// log moved away and SIGUSR1 send the next lines to a new file, none lost.
extension ExecutableTests {
    @Test func sighupReloadsTheKeysAndSigusr1ReopensTheAccessLog() throws {
        let dir = TemporaryDirectory("thumbd-signals")
        let file = dir.path + "/thumbd.json", log = dir.path + "/access.log", errors = dir.path + "/stderr"
        func config(_ key: String) -> [UInt8] {
            // `printf %s alice-phone-key | sha256sum`, `printf %s carol-key | sha256sum`.
            let digest = ["alice": "805df7cb96e8ea7f3c00ce18aa1488dca42d944ccf36cfff6d660df011b5e297",
                          "carol": "368c3387fc9b5ce6ab156ad952031f52bc9154e89a727020cd314f8910a21823"][key]!
            return Array(#"{"access_log": "combined", "access_log_file": "\#(log)", "client_keys": [{"id": "\#(key)", "sha256": "\#(digest)"}]}"#.utf8)
        }
        dir.write("thumbd.json", config("alice"))
        #expect(FileManager.default.createFile(atPath: errors, contents: nil))
        let server = try launch(library: Paths.fixturePhotos, cache: dir.path + "/cache", extra: ["--config", file],
                                standardError: try #require(FileHandle(forWritingAtPath: errors)))
        let pid = server.process.processIdentifier
        defer { server.process.terminate(); server.process.waitUntilExit() }
        func status(_ key: String) -> Int? {
            try? TestClient.get(port: server.port, "/assets", headers: ["Authorization": "Bearer \(key)"]).status
        }
        func text(_ path: String) -> String { (try? String(contentsOfFile: path, encoding: .utf8)) ?? "" }

        // 503 until the library's first scan is in.
        #expect(eventually(within: 30) { status("alice-phone-key") == 200 })
        #expect(eventually(within: 10) { text(log).contains(#""GET /assets HTTP/1.1" 200 "#) })

        // logrotate: move the file, then SIGUSR1.
        try FileManager.default.moveItem(atPath: log, toPath: log + ".1")
        kill(pid, SIGUSR1)
        var sent = 0, answered = 0
        let reopened = eventually(within: 10) {
            sent += 1
            // Each request told apart by its User-Agent (combined logs it): /healthz reads no query.
            if (try? TestClient.get(port: server.port, "/healthz", headers: ["User-Agent": "reopen-\(sent)"]).status) == 200 {
                answered += 1
            }
            return text(log).contains("\"reopen-")
        }
        #expect(reopened && answered == sent)
        // Every request is in one file or the other, once: none lost across the reopen. A line is
        // written after its response is sent: the last one may come a moment after its answer.
        func reopenLines() -> [Substring] { (text(log + ".1") + text(log)).split(separator: "\n").filter { $0.contains("\"reopen-") } }
        #expect(eventually(within: 10) { reopenLines().count >= sent })
        #expect(reopenLines().count == sent, "\(reopenLines())")
        #expect(text(log + ".1").contains(#""GET /assets HTTP/1.1" 200 "#))
        #expect(!text(log).contains("/assets"))

        // A new client key: the old one is refused, the new one answered.
        dir.write("thumbd.json", config("carol"))
        kill(pid, SIGHUP)
        #expect(eventually(within: 10) { status("alice-phone-key") == 401 })
        #expect(status("carol-key") == 200)
        #expect(text(errors).contains("thumbd: reload: in force for the next request: client_keys\n"))

        // A config that no longer parses: said, and the running one kept.
        dir.write("thumbd.json", Array(#"{"client_keys": ["#.utf8))
        kill(pid, SIGHUP)
        #expect(eventually(within: 10) { text(errors).contains("is not valid JSON") })
        #expect(text(errors).contains("; the running configuration is kept\n"))
        #expect(status("carol-key") == 200)
        #expect(server.process.isRunning)
    }
}
