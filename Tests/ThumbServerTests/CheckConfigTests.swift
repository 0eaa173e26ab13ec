import Foundation
import Testing
import TestSupport
import Thumbnails
@testable import ThumbServer

/// `--check-config` tries the cache directory and the access log as a start would use them, so
/// that what it accepts a start can use (found by an operator: a cache under /proc, a cache of
/// someone's files, a log file that is a directory or under /proc were all "valid").
@Suite struct CheckConfigTests {
    /// The sentence `--check-config` refuses `arguments` with; nil when it says valid.
    func refusal(_ arguments: [String]) -> String? {
        do {
            _ = try ConfigLoader.load(arguments: ["--check-config", "--library", Paths.fixturePhotos] + arguments, environment: [:])
            return nil
        } catch {
            return error.description
        }
    }

    /// A cache directory under /proc cannot be made (mkdir answers ENOENT to root, EACCES to
    /// others), as a start finds; nothing is left there.
    @Test func aCacheDirectoryUnderProcIsRefused() {
        let cache = "/proc/thumbd-check-\(UUID().uuidString)"
        let sentence = refusal(["--cache-dir", cache])
        #expect(sentence == "cache_dir \(cache) cannot be used: cannot create the cache directory \(cache): "
                + String(cString: strerror(getuid() == 0 ? ENOENT : EACCES)))
        #expect(!FileManager.default.fileExists(atPath: cache))
    }

    /// A directory holding a file thumbd did not write is refused with the start's own sentence
    /// (`CacheDirectory.claim`'s), naming the file, and is left exactly as it was.
    @Test func aCacheDirectoryHoldingFilesThumbdDidNotWriteIsRefusedAsAStartRefusesIt() throws {
        let directory = TemporaryDirectory("thumbd-foreign")
        directory.write("notes.txt", Array("mine\n".utf8))
        let sentence = try #require(refusal(["--cache-dir", directory.path]))
        #expect(sentence == "cache_dir \(directory.path) cannot be used: the cache directory \(directory.path) holds files "
                + "thumbd did not create (notes.txt); thumbd uses only a new or empty directory, or one it tagged with "
                + "CACHEDIR.TAG, so that it never deletes files of yours: choose another cache_dir")
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path) == ["notes.txt"])
        #expect(FileManager.default.contents(atPath: directory.path + "/notes.txt") == Data("mine\n".utf8))
        // The start refuses it with the same words.
        #expect(throws: CacheDirectory.Refusal.self) { try CacheDirectory.claim(directory.path) }
        do {
            try CacheDirectory.claim(directory.path)
        } catch {
            #expect("cache_dir \(directory.path) cannot be used: \(error)" == sentence)
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path) == ["notes.txt"])
    }

    /// A cache a start would make (three levels missing), an empty directory and a cache thumbd
    /// tagged are valid, and the check leaves each as it found it: the missing ones missing, no
    /// `tmp/` in the empty one, nothing in the tagged one's `tmp/`.
    @Test func aUsableCacheIsValidAndLeftAsItWas() throws {
        let parent = TemporaryDirectory("thumbd-check")
        #expect(refusal(["--cache-dir", parent.path + "/a/b/cache"]) == nil)
        #expect(try FileManager.default.contentsOfDirectory(atPath: parent.path) == [])
        let empty = parent.path + "/empty"
        try FileManager.default.createDirectory(atPath: empty, withIntermediateDirectories: false)
        #expect(refusal(["--cache-dir", empty]) == nil)
        #expect(try FileManager.default.contentsOfDirectory(atPath: empty) == [])
        let tagged = parent.path + "/tagged"
        try CacheDirectory.claim(tagged)
        #expect(refusal(["--cache-dir", tagged]) == nil)
        #expect(try FileManager.default.contentsOfDirectory(atPath: tagged + "/tmp") == [])
        #expect(try FileManager.default.contentsOfDirectory(atPath: tagged).sorted() == ["CACHEDIR.TAG", "entries", "tmp"])
    }

    /// An access log file that is a directory, or under /proc, cannot be opened as a start opens
    /// it; a missing one in a directory that exists is valid, and not left made.
    @Test func anAccessLogFileThatCannotBeOpenedIsRefused() throws {
        let directory = TemporaryDirectory("thumbd-log")
        let cache = ["--cache-dir", directory.path + "/cache"]
        #expect(refusal(cache + ["--access-log-file", directory.path])
                == "access_log_file \(directory.path) cannot be opened for appending: Is a directory")
        let underProc = "/proc/thumbd-check-\(UUID().uuidString).log"
        #expect(refusal(cache + ["--access-log-file", underProc])
                == "access_log_file \(underProc) cannot be opened for appending: "
                + String(cString: strerror(getuid() == 0 ? ENOENT : EACCES)))
        #expect(refusal(cache + ["--access-log-file", directory.path + "/access.log"]) == nil)
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path) == [])
        directory.write("kept.log", Array("a line\n".utf8))
        #expect(refusal(cache + ["--access-log-file", directory.path + "/kept.log"]) == nil)
        #expect(FileManager.default.contents(atPath: directory.path + "/kept.log") == Data("a line\n".utf8))
    }
}
