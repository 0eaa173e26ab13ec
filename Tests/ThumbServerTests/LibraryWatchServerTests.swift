import Foundation
import HTTP
import Testing
import TestSupport
@testable import ThumbServer
#if canImport(Glibc)
import Glibc
#endif

/// The server's library watch and the user's inotify watches (`fs.inotify.max_user_watches`,
/// shared by all of the user's programs): one watch per directory whatever the number of event
/// loops, and none at all past `library_watch_max_share`, with hits still right.
@Suite struct LibraryWatchServerTests {
    typealias Library = SourceChangeTests.Library

    /// 16 event loops over 12 directories hold 12 watches (they held 8 x 12, one inotify
    /// instance per loop up to 8: on a 16-core host 12,000 directories took 192,000 watches).
    @Test func sixteenEventLoopsWatchEachDirectoryOnce() throws {
        let albums = (0..<10).map { "2024/\($0)" }
        let lib = try Library(directories: albums, eventLoops: 16)
        let paths = [lib.root, lib.root + "/2024"] + albums.map { lib.root + "/" + $0 }
        #expect(lib.service.resolvedKeys.count == 16)
        #expect(kernelWatches(on: inodes(of: paths)) == 12)
        let stats = lib.service.statsJSON()
        #expect(stats.contains("\"instances\":1,\"active\":true,\"directories\":12,"))

        // Each loop's lane sees a replacement on its next request.
        try lib.copy(Library.photoA, to: lib.root + "/2024/3/p.jpg")
        var first: [HTTPResponse] = []
        for loop in 0..<16 {
            _ = lib.get("/thumbnails/3/2024/3/p.jpg", loop: loop)
            first.append(lib.get("/thumbnails/3/2024/3/p.jpg", loop: loop))
            #expect(first[loop].headers["X-Cache"] == "HIT-MEMORY")
        }
        #expect(lib.service.resolvedKeys.reduce(0) { $0 + $1.sourceCheckCount } == 0)
        try lib.copy(Library.photoB, to: lib.root + "/2024/3/.p.tmp")
        #expect(rename(lib.root + "/2024/3/.p.tmp", lib.root + "/2024/3/p.jpg") == 0)
        for loop in 0..<16 {
            let replaced = lib.get("/thumbnails/3/2024/3/p.jpg", loop: loop)
            #expect(replaced.status == 200)
            #expect(replaced.headers["ETag"] != first[loop].headers["ETag"])
        }
    }

    /// A library with more directories than `library_watch_max_share` of the user's watches
    /// allows (0 here: any library) holds no watch; `/stats` says so, every hit resolves its
    /// URL again, and a replaced file is served from the next request on.
    @Test func aLibraryOverItsShareOfTheUsersWatchesIsNotWatched() throws {
        let lib = try Library(directories: ["2024"], watchShare: 0)
        #expect(kernelWatches(on: inodes(of: [lib.root, lib.root + "/2024"])) == 0)
        let stats = lib.service.statsJSON()
        #expect(stats.contains("\"enabled\":true,\"instances\":1,\"active\":false,\"directories\":0,\"limit\":0,\"over_limit\":true"))

        try lib.copy(Library.photoA, to: lib.root + "/2024/p.jpg")
        let first = lib.get("/thumbnails/3/2024/p.jpg")
        #expect(first.status == 200)
        for _ in 0..<5 {
            let hit = lib.get("/thumbnails/3/2024/p.jpg")
            #expect(hit.headers["X-Cache"] == "HIT-MEMORY" && hit.headers["ETag"] == first.headers["ETag"])
        }
        #expect(lib.service.resolvedKeys.reduce(0) { $0 + $1.sourceCheckCount } == 5)
        try lib.copy(Library.photoB, to: lib.root + "/2024/.p.tmp")
        #expect(rename(lib.root + "/2024/.p.tmp", lib.root + "/2024/p.jpg") == 0)
        let replaced = lib.get("/thumbnails/3/2024/p.jpg")
        #expect(replaced.status == 200 && replaced.headers["ETag"] != first.headers["ETag"])
    }
}
