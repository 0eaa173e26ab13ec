import Foundation
import Library
import Testing
import TestSupport
@testable import ThumbServer

/// thumbd run as an unprivileged user (user nobody through `setpriv`, so the tests need root, as
/// CI has) over a library with a directory it may not read: root passes every permission check,
/// so only another user meets EACCES.
@Suite(.enabled(if: getuid() == 0, "drops to user nobody: needs root"), .serialized)
struct UnprivilegedWatchTests {
    /// A library (`open/a.jpg`, `locked/b.jpg` in a directory only root may enter, `late.jpg`
    /// that only root may read) and a cache, both usable by user nobody; removed at the end.
    final class Tree {
        let root = NSTemporaryDirectory() + "thumbd-unprivileged-\(UUID().uuidString)"
        var library: String { root + "/library" }

        init() throws {
            let fm = FileManager.default
            for directory in ["/library/open", "/library/locked", "/cache"] {
                try fm.createDirectory(atPath: root + directory, withIntermediateDirectories: true)
            }
            let photo = Paths.fixturePhotos + "/kodak-dc210-1998-vga.jpg"
            for name in ["open/a.jpg", "locked/b.jpg", "late.jpg"] { try fm.copyItem(atPath: photo, toPath: library + "/" + name) }
            for path in [root, library, root + "/cache"] { chmod(path, 0o777) }
            chmod(library + "/open", 0o755)
            chmod(library + "/locked", 0o700)   // root's: nobody can neither watch nor list it
            chmod(library + "/late.jpg", 0o000)
        }

        deinit { try? FileManager.default.removeItem(atPath: root) }
    }

    /// A thumbd started as user nobody, its port, and where its stderr goes.
    struct Server {
        let process: Process
        let port: UInt16
        let errors: String

        /// What it has written on stderr so far.
        var stderr: String { (try? String(contentsOfFile: errors, encoding: .utf8)) ?? "" }

        func stats(_ path: String...) throws -> Any? {
            var value: Any? = try TestClient.get(port: port, "/stats").json
            for key in path { value = (value as? [String: Any])?[key] }
            return value
        }

        func listed() throws -> [String] {
            let items = try TestClient.get(port: port, "/assets?sort=oldest").json["items"] as? [[String: Any]] ?? []
            return items.compactMap { $0["path"] as? String }.sorted()
        }

    }

    func launch(_ tree: Tree, rescanSeconds: Double) throws -> Server {
        let errors = tree.root + "/stderr.txt"
        try #require(FileManager.default.createFile(atPath: errors, contents: nil))
        let launched = try ExecutableTests().launch(
            ["/usr/bin/setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"],
            library: tree.library, cache: tree.root + "/cache", extra: ["--index-rescan-seconds", String(rescanSeconds)],
            standardError: try #require(FileHandle(forWritingAtPath: errors)))
        return Server(process: launched.process, port: launched.port, errors: errors)
    }

    /// The start-up warning blamed the inotify limits (max_user_watches) when the directory's
    /// permissions were the cause; and after a `chmod` that lets the server read the directory,
    /// the watch stayed blind (every memoised URL resolved again in full) until some other
    /// directory event. The chmod is now seen (IN_ATTRIB in its parent): with rescans an hour
    /// apart, nothing else could have tried again.
    @Test func aDirectoryTheServerMayNotReadIsBlamedOnItsPermissionsAndWatchedAfterAChmod() throws {
        let tree = try Tree()
        let server = try launch(tree, rescanSeconds: 3600)
        defer { server.process.terminate(); server.process.waitUntilExit() }
        let warning: [String] = server.stderr.split(separator: "\n").map(String.init).filter { $0.contains("library_watch") }
        let expected: String = "thumbd: library_watch: inotify cannot watch 1 directory of \(tree.library) (\(tree.library)/locked: "
            + "permission denied (EACCES): the server's user may not read it); memoised URLs will be resolved "
            + "again on every request until it can, and each is tried again when its permissions change and "
            + "every 3600 s (index_rescan_seconds)"
        #expect(warning == [expected])
        #expect(!server.stderr.contains("max_user_watches"))
        #expect(try server.stats("library", "watch", "active") as? Bool == false)
        #expect(try server.stats("library", "watch", "directories") as? Int == 2)   // the root and open/
        // A file under the directory it may not search: 403, as for a file it may not read
        // (it answered 404 "no such asset", though the file may well be there).
        let below = try TestClient.get(port: server.port, "/thumbnails/3/locked/b.jpg")
        #expect(below.status == 403)
        #expect(below.json["error"] as? String == "forbidden")
        chmod(tree.library + "/locked", 0o755)
        #expect(try eventually { try server.stats("library", "watch", "active") as? Bool == true })
        #expect(try server.stats("library", "watch", "directories") as? Int == 3)
        #expect(try server.stats("library", "watch", "rewalks") as? Int == 0)   // that one directory, not the tree
    }

    /// A directory that becomes readable with no event in a watched directory (here a readable
    /// directory bind-mounted over it; also watches another program gives back) is tried again
    /// at each rescan. The unreadable file beside it answers 403 and, once readable, is listed at
    /// the next rescan (the failed header read is not remembered).
    @Test func aDirectoryThatBecomesReadableUnseenIsTriedAgainAtEachRescan() throws {
        let tree = try Tree()
        let readable = tree.root + "/readable"
        try FileManager.default.createDirectory(atPath: readable + "/sub", withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: Paths.fixturePhotos + "/kodak-dc210-1998-vga.jpg", toPath: readable + "/sub/c.jpg")
        chmod(readable, 0o755)
        chmod(readable + "/sub", 0o755)
        let server = try launch(tree, rescanSeconds: 1)
        defer { server.process.terminate(); server.process.waitUntilExit() }
        #expect(try eventually { try server.listed() == ["open/a.jpg"] })
        #expect(try TestClient.get(port: server.port, "/thumbnails/3/late.jpg").status == 403)
        #expect(try server.stats("library", "watch", "active") as? Bool == false)
        try Self.bindMount(readable, over: tree.library + "/locked")
        defer { umount2(tree.library + "/locked", Int32(MNT_DETACH)) }
        #expect(try eventually { try server.stats("library", "watch", "active") as? Bool == true })
        #expect(try server.stats("library", "watch", "directories") as? Int == 4)   // root, open, locked, locked/sub
        chmod(tree.library + "/late.jpg", 0o644)
        #expect(try eventually { try server.listed() == ["late.jpg", "locked/sub/c.jpg", "open/a.jpg"] })
        #expect(try TestClient.get(port: server.port, "/thumbnails/3/late.jpg").status == 200)
    }

    /// A photo made unreadable after its placeholder was made: its thumbnail answers 403, and its
    /// placeholder leaves the listing with it (the listing went on showing a picture of what the
    /// server now refuses to show), at its publication: a change the feed tells (an open page
    /// went on showing it).
    @Test func aPhotoMadeUnreadableLosesItsPlaceholderWithItsThumbnail() throws {
        let tree = try Tree()
        let server = try launch(tree, rescanSeconds: 3600)
        defer { server.process.terminate(); server.process.waitUntilExit() }
        func placeholder() throws -> String? {
            let items = try TestClient.get(port: server.port, "/assets?sort=oldest").json["items"] as? [[String: Any]] ?? []
            return items.first { $0["path"] as? String == "open/a.jpg" }?["thumbhash"] as? String
        }
        #expect(try eventually { try server.listed() == ["open/a.jpg"] })
        #expect(try TestClient.get(port: server.port, "/thumbnails/3/open/a.jpg").status == 200)
        #expect(try eventually { try placeholder() != nil })
        let generation = try #require(try TestClient.get(port: server.port, "/assets").json["generation"] as? Int)
        chmod(tree.library + "/open/a.jpg", 0o000)
        #expect(try TestClient.get(port: server.port, "/thumbnails/1/open/a.jpg").status == 403)   // not cached: read
        // The long-poll is answered by the publication: the item changed, its placeholder gone.
        let changes = try TestClient.get(port: server.port, "/assets/changes?since=\(generation)&wait=30").json
        let changed = try #require((changes["changed"] as? [[String: Any]])?.first?["item"] as? [String: Any])
        #expect(changed["path"] as? String == "open/a.jpg" && changed["thumbhash"] is NSNull)
        #expect((changes["generation"] as? Int ?? 0) > generation)
        #expect(try placeholder() == nil)
        #expect(try server.listed() == ["open/a.jpg"])   // still listed: the file is there
        chmod(tree.library + "/open/a.jpg", 0o644)
        #expect(try TestClient.get(port: server.port, "/thumbnails/5/open/a.jpg").status == 200)
        #expect(try eventually { try placeholder() != nil })   // made again by the render that read it
    }

    /// Bind-mounts `directory` over `target` with mount(2) itself: a `Process` running mount(8)
    /// beside the running server never returned (Foundation's child-process monitor was found
    /// in a blocking wait4 for the server, and mount was left a zombie).
    static func bindMount(_ directory: String, over target: String) throws {
        try #require(mount(directory, target, nil, UInt(MS_BIND), nil) == 0, "mount --bind: errno \(errno)")
    }
}

/// The start-up warning for directories the watch could not watch names each one's real cause,
/// by `errno` (it blamed the inotify limits whatever the cause was).
@Suite struct WatchWarningTests {
    @Test func eachUnwatchedDirectoryIsNamedWithItsCause() {
        let unwatched = [LibraryWatch.UnwatchedDirectory(path: "/p/a", error: EACCES),
                         LibraryWatch.UnwatchedDirectory(path: "/p/b", error: ENOSPC),
                         LibraryWatch.UnwatchedDirectory(path: "/p/c", error: EMFILE),
                         LibraryWatch.UnwatchedDirectory(path: "/p/d", error: EIO)]
        #expect(Thumbd.unwatchedWarning(unwatched, root: "/p", retrySeconds: 2.5)
                == "library_watch: inotify cannot watch 4 directories of /p (/p/a: permission denied (EACCES): the server's "
                + "user may not read it; /p/b: the user's inotify watches are used up (ENOSPC): fs.inotify.max_user_watches, "
                + "shared by all of the user's programs; /p/c: too many open files (EMFILE): fs.inotify.max_user_instances, "
                + "or this process's open-file limit; and 1 more); memoised URLs will be resolved again on every request "
                + "until it can, and each is tried again when its permissions change and every 2.5 s (index_rescan_seconds)")
        #expect(LibraryWatch.cause(of: EPERM) == "operation not permitted (EPERM): the server's user may not read it")
        #expect(LibraryWatch.cause(of: EROFS) == "Read-only file system (errno \(EROFS))")
        #expect(LibraryWatch.SetupError(call: "inotify_init1", error: EMFILE).description
                == "inotify_init1 failed: too many open files (EMFILE): fs.inotify.max_user_instances, or this process's open-file limit")
    }
}
