import Foundation
import Testing
import TestSupport
@testable import Thumbnails

/// Undoing a claim when a start fails after it (issue 29, item 8): what the claim made goes,
/// nothing else.
@Suite struct CacheDirectoryUndoTests {
    @Test func unclaimRemovesWhatTheClaimMadeUpToItsTopmostMissingDirectory() throws {
        let root = TemporaryDirectory("thumbd-unclaim")
        let cache = root.path + "/a/b/cache"
        #expect(CacheDirectory.topmostMissing(cache) == root.path + "/a")
        try CacheDirectory.claim(cache)
        #expect(CacheDirectory.topmostMissing(cache) == nil)
        _ = FileManager.default.createFile(atPath: cache + "/" + CacheDirectory.lockName, contents: Data("1\n".utf8))
        _ = FileManager.default.createFile(atPath: cache + "/index.sqlite", contents: Data())
        CacheDirectory.unclaim(cache, upTo: root.path + "/a")
        #expect(try FileManager.default.contentsOfDirectory(atPath: root.path).isEmpty)
    }

    @Test func unclaimKeepsWhatItDidNotMakeAndTheDirectoriesAboveIt() throws {
        let root = TemporaryDirectory("thumbd-unclaim")
        let cache = root.path + "/a/cache"
        try CacheDirectory.claim(cache)
        _ = FileManager.default.createFile(atPath: cache + "/tmp/notes.txt", contents: Data("mine".utf8))
        _ = FileManager.default.createFile(atPath: root.path + "/a/other.txt", contents: Data("mine".utf8))
        CacheDirectory.unclaim(cache, upTo: root.path + "/a")
        #expect(FileManager.default.fileExists(atPath: cache + "/tmp/notes.txt"))
        #expect(FileManager.default.fileExists(atPath: root.path + "/a/other.txt"))
        #expect(!FileManager.default.fileExists(atPath: cache + "/" + CacheDirectory.tagName))
        #expect(!FileManager.default.fileExists(atPath: cache + "/entries"))
    }
}
