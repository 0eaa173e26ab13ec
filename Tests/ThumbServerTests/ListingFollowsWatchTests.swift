import Foundation
import TestSupport
@testable import ThumbServer
#if canImport(Glibc)
import Glibc
#endif

import Testing

/// The listing follows the library watch: with the whole-tree rescan 10 minutes apart, a photo
/// copied in, replaced, renamed or deleted, and a folder copied in or moved, show in `/assets`
/// (waited for up to 5 s each, so a loaded machine does not fail it: how fast is the scroll and
/// index benchmarks' business; 50 ms after the event here), and the headers read are only those
/// of the files that changed.
@Suite struct ListingFollowsWatchTests {
    func listed(_ server: ServerHarness) throws -> [String] {
        let json = try server.get("/assets?sort=oldest&limit=1000").json
        return ((json["items"] as? [[String: Any]]) ?? []).compactMap { $0["path"] as? String }.sorted()
    }

    @Test func changesAreListedWithoutRescans() throws {
        let library = TemporaryDirectory("thumbd-follow")
        let photo = [UInt8](Fixtures.photo("Landscape_1.jpg")), other = [UInt8](Fixtures.photo("Landscape_6.jpg"))
        library.write("2024/a.jpg", photo)
        library.write("2024/b.jpg", photo)
        let server = try ServerHarness(library: library.path) { config in
            config.indexRescanSeconds = 600
            config.indexSweepSeconds = 0
            config.libraryWatch = true
        }
        server.waitForInitialScan()
        #expect(try listed(server) == ["2024/a.jpg", "2024/b.jpg"])
        let index = server.thumbd.service.index
        let reads = index.headerReads

        library.write("2024/new.jpg", photo)                                    // copied in
        #expect(try eventually(within: 5) { try listed(server).contains("2024/new.jpg") })
        library.write("2024/.b.tmp", other)                                     // replaced by a rename over it
        #expect(rename(library.path + "/2024/.b.tmp", library.path + "/2024/b.jpg") == 0)
        #expect(try eventually(within: 5) {
            let items = (try server.get("/assets?sort=oldest&limit=10").json["items"] as? [[String: Any]]) ?? []
            return items.first { $0["path"] as? String == "2024/b.jpg" }?["bytes"] as? Int == other.count
        })
        #expect(rename(library.path + "/2024/a.jpg", library.path + "/2024/renamed.jpg") == 0)
        #expect(try eventually(within: 5) { try listed(server) == ["2024/b.jpg", "2024/new.jpg", "2024/renamed.jpg"] })
        #expect(unlink(library.path + "/2024/new.jpg") == 0)                     // deleted
        #expect(try eventually(within: 5) { try listed(server) == ["2024/b.jpg", "2024/renamed.jpg"] })

        // A folder of 20 photos made elsewhere and moved in, then one copied in file by file.
        let outside = TemporaryDirectory("thumbd-follow-outside")
        for i in 0..<20 { outside.write("album/\(i).jpg", photo) }
        #expect(rename(outside.path + "/album", library.path + "/album") == 0)
        #expect(try eventually(within: 5) { try listed(server).filter { $0.hasPrefix("album/") }.count == 20 })
        #expect(mkdir(library.path + "/copied", 0o755) == 0)
        for i in 0..<20 { library.write("copied/\(i).jpg", photo) }
        #expect(try eventually(within: 5) { try listed(server).filter { $0.hasPrefix("copied/") }.count == 20 })
        #expect(rename(library.path + "/album", library.path + "/2024/album") == 0)   // moved within
        #expect(try eventually(within: 5) {
            let paths = try listed(server)
            return paths.filter { $0.hasPrefix("2024/album/") }.count == 20 && !paths.contains { $0.hasPrefix("album/") }
        })
        #expect(index.completedScans == 1)   // no whole rescan: only the first
        // Read: new.jpg, b.jpg, renamed.jpg, 20 moved in, 20 copied (some perhaps twice, as
        // they were written), 20 moved within (a new path each); never the unchanged ones again.
        #expect(index.headerReads - reads >= 63)
        #expect(index.headerReads - reads <= 90)
    }
}
