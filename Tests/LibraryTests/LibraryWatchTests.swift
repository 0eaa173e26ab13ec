import Foundation
@testable import Library
import Testing
import TestSupport
#if canImport(Glibc)
import Glibc
#endif

/// The inotify watch that lets hits skip a `stat`: every change made through the library's
/// directories must move the stamp before the next `stamp()` returns, reads must not, and
/// directories that appear later (created, moved in, moved within) must be watched too.
@Suite struct LibraryWatchTests {
    let dir = TemporaryDirectory("thumbd-watch")
    let outside = TemporaryDirectory("thumbd-watch-outside")
    /// The root with symlinks resolved, as `Library` gives it.
    let root: String
    let watch: LibraryWatch

    init() throws {
        dir.write("2024/a.jpg", [1, 2, 3])
        dir.write("2024/deep/b.jpg", [4, 5])
        dir.write("c.jpg", [6])
        root = try Library(root: dir.path).root
        watch = try #require(LibraryWatch(root: root))
    }

    func write(_ relative: String, _ bytes: [UInt8] = [7, 7, 7]) {
        _ = FileManager.default.createFile(atPath: root + "/" + relative, contents: Data(bytes))
    }

    /// A change, then: the stamp moved, and it stays put afterwards while nothing else happens.
    /// With `settling`, the change may make the watch walk the tree again first (no stamp
    /// meanwhile).
    func expectChange(_ what: Comment, settling: Bool = false, _ change: () -> Void) throws {
        let before = try #require(watch.stamp())
        change()
        let after = try #require(settling ? settledStamp() : watch.stamp(), what)
        #expect(after != before, what)
        #expect(watch.stamp() == after, what)
    }

    /// The first stamp `of` (the suite's watch by default) gives within 10 s (nil while the
    /// watch walks the tree again).
    func settledStamp(of other: LibraryWatch? = nil) -> UInt64? {
        let watch = other ?? watch
        let deadline = Date().addingTimeInterval(10)
        var stamp = watch.stamp()
        while stamp == nil && Date() < deadline {
            usleep(5_000)
            stamp = watch.stamp()
        }
        return stamp
    }

    @Test func anUnchangedTreeKeepsItsStampAndReadsDoNotMoveIt() throws {
        let stats = watch.statistics
        #expect(stats.active)
        #expect(stats.directories == 3)   // the root, 2024, 2024/deep
        let first = try #require(watch.stamp())
        #expect(watch.stamp() == first)
        // What a render or a header read does: open, read, stat, close.
        let bytes = FileManager.default.contents(atPath: root + "/2024/a.jpg")
        #expect(bytes == Data([1, 2, 3]))
        var st = stat()
        #expect(stat(root + "/2024/deep/b.jpg", &st) == 0)
        #expect(watch.stamp() == first)
        #expect(watch.statistics.events == 0)
    }

    @Test func everyKindOfChangeMovesTheStamp() throws {
        try expectChange("written in place") {
            let fd = open(root + "/2024/a.jpg", O_WRONLY | O_APPEND)
            _ = Glibc.write(fd, [UInt8(9)], 1)
            close(fd)
        }
        try expectChange("truncated") { _ = truncate(root + "/2024/deep/b.jpg", 1) }
        try expectChange("touched, same content") {
            var times = [timespec(tv_sec: 1_000_000_000, tv_nsec: 0), timespec(tv_sec: 1_000_000_000, tv_nsec: 0)]
            _ = utimensat(AT_FDCWD, root + "/c.jpg", &times, 0)
        }
        try expectChange("mode changed") { _ = chmod(root + "/c.jpg", 0o600) }
        try expectChange("renamed over") {
            write(".c.jpg.tmp", [8, 8])
            _ = rename(root + "/.c.jpg.tmp", root + "/c.jpg")
        }
        try expectChange("created") { write("2024/deep/new.jpg") }
        try expectChange("deleted") { _ = unlink(root + "/2024/deep/new.jpg") }
        try expectChange("symlink made") { _ = symlink(root + "/c.jpg", root + "/link.jpg") }
        try expectChange("symlink retargeted, as ln -sfn does") {
            _ = symlink(root + "/2024/a.jpg", root + "/.link.tmp")
            _ = rename(root + "/.link.tmp", root + "/link.jpg")
        }
        try expectChange("a file moved out of the library") {
            _ = rename(root + "/2024/a.jpg", outside.path + "/a.jpg")
        }
        try expectChange("a file moved in") { _ = rename(outside.path + "/a.jpg", root + "/2024/deep/a.jpg") }
        #expect(watch.statistics.events >= 11)
    }

    @Test func directoriesCreatedLaterAreWatchedToTheirDepth() throws {
        // Walked off the request path (no stamp meanwhile): `cp -r` may have filled it already.
        try expectChange("directories created", settling: true) {
            _ = mkdir(root + "/2025", 0o755)
            // Made before the watch has read the first event: found by walking the new one.
            _ = mkdir(root + "/2025/06", 0o755)
            _ = mkdir(root + "/2025/06/trip", 0o755)
        }
        #expect(watch.statistics.directories == 6)
        try expectChange("a file in the deepest new directory") { write("2025/06/trip/x.jpg") }
        try expectChange("written again") { write("2025/06/trip/x.jpg", [1]) }
    }

    @Test func directoriesMovedInOrWithinAreWatchedUnderTheirNewPaths() throws {
        try FileManager.default.createDirectory(atPath: outside.path + "/album/day1", withIntermediateDirectories: true)
        // A tree moved in may be large: walked off the request path, no stamp meanwhile.
        try expectChange("a directory tree moved in", settling: true) {
            _ = rename(outside.path + "/album", root + "/album")
        }
        try expectChange("a file in the moved-in tree") { write("album/day1/x.jpg") }
        try expectChange("a directory moved within the library", settling: true) {
            _ = rename(root + "/2024", root + "/2023")
        }
        // Its subdirectory's watch now has to know it as 2023/deep: a directory made there is
        // found under that path and watched in turn.
        try expectChange("a directory made in the moved one's subdirectory", settling: true) {
            _ = mkdir(root + "/2023/deep/new", 0o755)
        }
        try expectChange("a file in it") { write("2023/deep/new/y.jpg") }
        try expectChange("the old file, at its new path") { write("2023/deep/b.jpg", [3]) }
    }

    @Test func anOverflowedQueueWithdrawsStampsUntilTheTreeIsWalkedAgain() throws {
        let limit = Int((try? String(contentsOfFile: "/proc/sys/fs/inotify/max_queued_events", encoding: .utf8))?
            .trimmingCharacters(in: .whitespacesAndNewlines) ?? "") ?? 16384
        try #require(limit <= 200_000, "fs.inotify.max_queued_events is \(limit): too many events to overflow in a test")
        _ = try #require(watch.stamp())
        // Alternating between two files, so that the kernel cannot merge repeated events.
        for i in 0...(limit / 2 + 10) {
            _ = chmod(root + "/c.jpg", i % 2 == 0 ? 0o600 : 0o644)
            _ = chmod(root + "/2024/a.jpg", i % 2 == 0 ? 0o600 : 0o644)
        }
        // A directory made while the events were being lost: only the walk after the overflow finds it.
        _ = mkdir(root + "/late", 0o755)
        #expect(watch.stamp() == nil)
        let settled = try #require(settledStamp())
        #expect(watch.statistics.rewalks == 1)
        #expect(watch.statistics.active)
        #expect(watch.stamp() == settled)
        try expectChange("a file in the directory found by the walk") { write("late/z.jpg") }
    }

    /// `mv library library.old && mv library.new library`: what is at the root's path is walked
    /// and watched (no stamps meanwhile), and the old tree is no longer watched.
    @Test func aNewTreeAtTheRootsPathIsWatched() throws {
        let replacement = outside.path + "/new"
        try FileManager.default.createDirectory(atPath: replacement + "/2024", withIntermediateDirectories: true)
        _ = try #require(watch.stamp())
        #expect(rename(root, outside.path + "/old") == 0)
        #expect(rename(replacement, root) == 0)
        _ = try #require(settledStamp())
        #expect(watch.statistics.rewalks == 1)
        #expect(watch.statistics.directories == 2)   // the new root and its 2024, not the old tree's 3
        try expectChange("a file in the new tree") { write("2024/x.jpg") }
        try expectChange("another file in the new tree") { write("2024/y.jpg") }
        let quiet = try #require(watch.stamp())
        _ = FileManager.default.createFile(atPath: outside.path + "/old/2024/a.jpg", contents: Data([5]))
        #expect(watch.stamp() == quiet)
    }

    /// The root deleted, a request in the gap, then a new root made (a deploy with traffic in
    /// between): no stamps while there is no root, then the new one is watched.
    @Test func aRootDeletedAndMadeAgainIsWatchedAgain() throws {
        _ = try #require(watch.stamp())
        try FileManager.default.removeItem(atPath: root)
        #expect(watch.stamp() == nil)
        usleep(150_000)
        #expect(watch.stamp() == nil)   // looked for again: still not there
        #expect(!watch.statistics.active)
        try FileManager.default.createDirectory(atPath: root + "/2024", withIntermediateDirectories: true)
        _ = try #require(settledStamp())
        #expect(watch.statistics.directories == 2)
        try expectChange("a file in the new root") { write("2024/x.jpg") }
    }

    /// Directory names are bytes: one that is not UTF-8 is watched like any other.
    @Test func aDirectoryWhoseNameIsNotUTF8IsWatched() throws {
        let name: [UInt8] = Array((root + "/").utf8) + [0xFF, 0x61]
        let made = (name + [0]).withUnsafeBufferPointer { p in
            mkdir(UnsafeRawPointer(p.baseAddress!).assumingMemoryBound(to: CChar.self), 0o755)
        }
        #expect(made == 0)
        _ = try #require(settledStamp())   // reads the creation, watches the directory
        #expect(watch.statistics.directories == 4)
        try expectChange("a file made in it") {
            let fd = (name + Array("/x.jpg".utf8) + [0]).withUnsafeBufferPointer { p in
                open(UnsafeRawPointer(p.baseAddress!).assumingMemoryBound(to: CChar.self), O_CREAT | O_WRONLY, 0o644)
            }
            _ = Glibc.write(fd, [UInt8(1)], 1)
            close(fd)
        }
    }

    /// A directory tree moved out of the library is no longer watched: its changes do not move
    /// the stamp, and its watches are given back to the kernel.
    @Test func aTreeMovedOutIsNoLongerWatched() throws {
        try expectChange("a tree moved out", settling: true) { _ = rename(root + "/2024", outside.path + "/2024") }
        #expect(watch.statistics.directories == 1)
        let quiet = try #require(watch.stamp())
        _ = FileManager.default.createFile(atPath: outside.path + "/2024/deep/new.jpg", contents: Data([1]))
        #expect(watch.stamp() == quiet)
    }

    /// A directory made while a walk is under way (here, of a tree just moved in) is watched
    /// once the walks are done, whatever the order the kernel's events and the walk came in.
    @Test func aDirectoryMadeWhileATreeIsWalkedIsWatched() throws {
        for i in 0..<2000 { _ = mkdir(outside.path + "/\(i)", 0o755) }
        _ = try #require(watch.stamp())
        #expect(rename(outside.path, root + "/moved") == 0)
        #expect(watch.stamp() == nil)   // the walk of the moved tree starts
        _ = mkdir(root + "/moved/edits", 0o755)
        _ = watch.stamp()               // reads the creation, most likely while the walk runs
        _ = try #require(settledStamp())
        #expect(watch.statistics.directories == 3 + 1 + 2000 + 1)
        try expectChange("a file in the directory made meanwhile") { write("moved/edits/x.jpg") }
        _ = mkdir(outside.path, 0o755)   // for the suite's clean-up
    }

    /// A group (one per event loop) is set up with one walk, and each of its watches sees every
    /// change on its own instance.
    @Test func aGroupOfWatchesEachSeesEveryChange() throws {
        let group = try #require(LibraryWatch.group(root: root, count: 3))
        #expect(group.count == 3)
        #expect(group.allSatisfy { $0.statistics.active && $0.statistics.directories == 3 })
        let before = group.map { $0.stamp() }
        write("2024/deep/b.jpg", [9])
        for (watch, old) in zip(group, before) {
            let now = try #require(watch.stamp())
            #expect(now != old)
            #expect(watch.stamp() == now)
        }
    }

    /// One inotify instance for a group, whatever its size: each directory costs one of the
    /// user's `fs.inotify.max_user_watches`, not one per event loop (a 100,000-directory library
    /// on 2 cores took 192,000 of a user's 192,536 watches, and other programs could watch
    /// nothing more). Every watch of the group still sees every change.
    @Test(arguments: [1, 4, 16]) func aGroupWatchesEachDirectoryOnceWhateverTheNumberOfLoops(loops: Int) throws {
        // A tree of its own, beside the suite's (whose own watch holds the suite tree's directories).
        let tree = outside.path + "/library"
        let paths = [tree, tree + "/2024"] + (0..<20).map { tree + "/2024/\($0)" }
        for path in paths { try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true) }
        let group = try #require(LibraryWatch.group(root: tree, count: loops))
        #expect(group.count == loops)
        #expect(kernelWatches(on: inodes(of: paths)) == 22)
        #expect(group.allSatisfy { $0.statistics.active && $0.statistics.directories == 22 })
        let before = group.map { $0.stamp() }
        _ = FileManager.default.createFile(atPath: tree + "/2024/7/x.jpg", contents: Data([1]))
        for (watch, old) in zip(group, before) {
            let now = try #require(watch.stamp())
            #expect(now != old)
            #expect(watch.stamp() == now)
        }
    }

    /// A tree with more directories than the watch may take (in the server,
    /// `library_watch_max_share` of `fs.inotify.max_user_watches`) is not watched at all: no
    /// stamps, so users resolve their sources again on every request, and no watch held, so other
    /// programs of the same user keep theirs. A tree exactly at the limit is watched.
    @Test func aTreeOverTheLimitIsNotWatchedAndHoldsNoWatch() throws {
        let directories = inodes(of: [root, root + "/2024", root + "/2024/deep"])
        let suiteWatches = kernelWatches(on: directories)   // the suite's own watch: 3
        #expect(suiteWatches == 3)
        let over = try #require(LibraryWatch(root: root, maxWatches: 2))
        #expect(over.stamp() == nil)
        #expect(over.statistics == LibraryWatch.Statistics(active: false, directories: 0, limit: 2, overLimit: true))
        #expect(kernelWatches(on: directories) == suiteWatches)
        write("2024/x.jpg")
        #expect(over.stamp() == nil)
        #expect(over.stamp() == nil)

        let exact = try #require(LibraryWatch(root: root, maxWatches: 3))
        #expect(exact.statistics.active && !exact.statistics.overLimit)
        #expect(exact.stamp() != nil)
        #expect(kernelWatches(on: directories) == suiteWatches + 3)
    }

    /// A tree that grows past the limit later gives every watch back and stays blind (until a
    /// restart).
    @Test func aTreeThatGrowsPastTheLimitGivesItsWatchesBack() throws {
        let growing = try #require(LibraryWatch(root: root, maxWatches: 4))
        _ = try #require(growing.stamp())
        #expect(mkdir(root + "/2025", 0o755) == 0)
        _ = try #require(settledStamp(of: growing))   // 4 directories: within the limit
        #expect(growing.statistics.directories == 4)
        let all = [root, root + "/2024", root + "/2024/deep", root + "/2025", root + "/2026", root + "/2026/01"]
        #expect(mkdir(root + "/2026", 0o755) == 0)
        #expect(mkdir(root + "/2026/01", 0o755) == 0)
        let deadline = Date().addingTimeInterval(10)
        while !growing.statistics.overLimit && Date() < deadline { usleep(5_000) }
        #expect(growing.statistics == LibraryWatch.Statistics(active: false, directories: 0,
                                                              events: growing.statistics.events, limit: 4, overLimit: true))
        #expect(growing.stamp() == nil)
        #expect(kernelWatches(on: inodes(of: all)) == 3)   // the suite's own watch's, no more
        write("2026/01/x.jpg")
        #expect(growing.stamp() == nil)
    }
}
