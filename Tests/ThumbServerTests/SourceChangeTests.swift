import Foundation
import HTTP
import Testing
import TestSupport
@testable import ThumbServer
#if canImport(Glibc)
import Glibc
#endif

/// Sources that change between a request's resolution and its render: the render (held back
/// before it opens the source, by a `GatedRenderer`) must notice, store nothing under the old key, and never
/// read a file that a symlink has put on the way since (found by fresh-eyes sessions).
@Suite struct SourceChangeTests {
    /// A library of its own and a service with one render worker, driven in-process.
    final class Library {
        let root = NSTemporaryDirectory() + "thumbd-change-\(UUID().uuidString)"
        let outside = NSTemporaryDirectory() + "thumbd-outside-\(UUID().uuidString)"
        let service: ThumbService
        /// Open but for `get(_:changingBeforeTheRender:)`.
        let renderer = GatedRenderer()
        static let photoA = Paths.fixturePhotos + "/Landscape_1.jpg"
        static let photoB = Paths.fixturePhotos + "/galaxy-s-orientation6-gps-vga.jpg"
        let fm = FileManager.default

        /// - Parameters:
        ///   - watched: `library_watch`. The cache directory is beside the root (thumbd refuses
        ///     one inside the library).
        ///   - directories: made under the root (paths relative to it) before the server is built.
        ///   - eventLoops: the server's event loops (one per core by default).
        ///   - watchShare: `library_watch_max_share` (0.5 by default).
        init(watched: Bool = true, directories: [String] = [], eventLoops: Int? = nil,
             watchShare: Double = 0.5) throws {
            for dir in [root, outside] { try fm.createDirectory(atPath: dir, withIntermediateDirectories: true) }
            for dir in directories { try fm.createDirectory(atPath: root + "/" + dir, withIntermediateDirectories: true) }
            var config = Config()
            config.library = root
            config.cacheDirectory = outside + "/cache"
            config.libraryWatch = watched
            config.libraryWatchMaxShare = watchShare
            config.renderWorkers = 1
            renderer.open()
            service = try Thumbd(config: config, process: ProcessSetup.prepare(), eventLoops: eventLoops, renderer: renderer).startedInProcess.service
        }

        deinit {
            service.pipeline.stop()
            try? fm.removeItem(atPath: root)
            try? fm.removeItem(atPath: outside)
        }

        func copy(_ photo: String, to path: String) throws { try fm.copyItem(atPath: photo, toPath: path) }

        /// Points `name` (under the root) at `target` the way `ln -sfn` does: a new link renamed over.
        func link(_ name: String, to target: String) throws {
            try fm.createSymbolicLink(atPath: root + "/.tmp-link", withDestinationPath: target)
            #expect(rename(root + "/.tmp-link", root + "/" + name) == 0)
        }

        /// GETs `target` as event loop `loop` read it (its lane's memo and watch).
        func get(_ target: String, loop: Int = 0) -> HTTPResponse {
            let done = DispatchSemaphore(value: 0)
            let box = LockedArray<HTTPResponse>()
            var request = HTTPRequest(method: "GET", target: target)
            request.loopIndex = loop
            service.respond(to: request) { box.append($0.withFileRead); done.signal() }
            done.wait()
            return box.values[0]
        }

        /// GETs `target` with its render held before it opens the source, so the request is
        /// resolved and its render started; runs `change`, then lets the render go and returns
        /// the response.
        func get(_ target: String, changingBeforeTheRender change: () throws -> Void) rethrows -> HTTPResponse {
            renderer.shut()
            let started = renderer.started.count
            let box = LockedArray<HTTPResponse>()
            let answered = DispatchSemaphore(value: 0)
            service.respond(to: HTTPRequest(method: "GET", target: target)) { box.append($0.withFileRead); answered.signal() }
            #expect(renderer.waitForStarts(started + 1))
            try change()
            renderer.open()
            answered.wait()
            return box.values[0]
        }
    }

    /// The new file's thumbnail for the request, and the old version, put back with its old
    /// size and mtime, gets its own thumbnail again (it used to get the other file's, from
    /// memory and then from disk for good).
    @Test func aSourceReplacedBeforeItsRenderIsNotStoredUnderTheOldKey() throws {
        let lib = try Library()
        try lib.copy(Library.photoA, to: lib.root + "/p.jpg")
        #expect(link(lib.root + "/p.jpg", lib.root + "/.a-kept") == 0)   // A's inode, size and mtime
        try lib.copy(Library.photoA, to: lib.root + "/a.jpg")
        try lib.copy(Library.photoB, to: lib.root + "/b.jpg")
        let thumbA = lib.get("/thumbnails/3/a.jpg").body, thumbB = lib.get("/thumbnails/3/b.jpg").body
        let distinct = !thumbA.isEmpty && !thumbB.isEmpty && thumbA != thumbB   // (not in #expect:
        #expect(distinct)                                                       // it would print every byte)

        let swapped = try lib.get("/thumbnails/3/p.jpg") {
            try lib.copy(Library.photoB, to: lib.root + "/.new")
            #expect(rename(lib.root + "/.new", lib.root + "/p.jpg") == 0)
        }
        #expect(swapped.status == 200)
        let swappedIsB = swapped.body == thumbB
        #expect(swappedIsB)

        #expect(rename(lib.root + "/.a-kept", lib.root + "/p.jpg") == 0)   // A back, same identity
        let back = lib.get("/thumbnails/3/p.jpg")
        #expect(back.status == 200)
        let backIsA = back.body == thumbA
        #expect(backIsA)
        #expect(back.headers["ETag"] != swapped.headers["ETag"])
        #expect(lib.service.pipeline.statistics.renders.failed == 1)   // the render under A's key
    }

    /// A directory swapped for a symlink to outside the root, holding a file of the same size and
    /// mtime, between resolution and render: 404, and the outside file is never opened.
    @Test func aDirectorySwappedForALinkToOutsideIsNeverRead() throws {
        let lib = try Library()
        try lib.fm.createDirectory(atPath: lib.root + "/album", withIntermediateDirectories: false)
        try lib.fm.createDirectory(atPath: lib.outside + "/album", withIntermediateDirectories: false)
        try lib.copy(Library.photoA, to: lib.root + "/album/p.jpg")
        try lib.copy(Library.photoA, to: lib.outside + "/album/p.jpg")
        // The outside copy: same bytes, so the same size; the same mtime, to the nanosecond.
        var st = stat()
        #expect(stat(lib.root + "/album/p.jpg", &st) == 0)
        var times = [st.st_atim, st.st_mtim]
        #expect(utimensat(AT_FDCWD, lib.outside + "/album/p.jpg", &times, 0) == 0)

        let response = try lib.get("/thumbnails/3/album/p.jpg") {
            #expect(rename(lib.root + "/album", lib.root + "/album.old") == 0)
            try lib.link("album", to: lib.outside + "/album")
        }
        #expect(response.status == 404)
        #expect(lib.get("/thumbnails/3/album/p.jpg").status == 404)
        let snapshot = lib.service.pipeline.statistics.renders
        #expect(snapshot.total == 1 && snapshot.failed == 1)   // refused at open: nothing rendered or stored

        // With the inside file's thumbnail cached and memoised, the same swap is seen by the memo.
        try lib.fm.removeItem(atPath: lib.root + "/album")
        #expect(rename(lib.root + "/album.old", lib.root + "/album") == 0)
        #expect(lib.get("/thumbnails/3/album/p.jpg").status == 200)
        #expect(lib.get("/thumbnails/3/album/p.jpg").headers["X-Cache"] == "HIT-MEMORY")
        #expect(rename(lib.root + "/album", lib.root + "/album.old") == 0)
        try lib.link("album", to: lib.outside + "/album")
        #expect(lib.get("/thumbnails/3/album/p.jpg").status == 404)
    }

    /// `current -> v1` switched to `v2` and `v1` deleted while a render of `current` waits: the
    /// request starts over from the path and gets v2, not a 404.
    @Test func aSwitchedLinkWhoseOldTargetIsDeletedIsRenderedFromTheNewOne() throws {
        let lib = try Library()
        try lib.copy(Library.photoA, to: lib.root + "/v1.jpg")
        try lib.copy(Library.photoB, to: lib.root + "/v2.jpg")
        try lib.copy(Library.photoB, to: lib.root + "/b.jpg")
        let thumbB = lib.get("/thumbnails/3/b.jpg").body
        try lib.link("current.jpg", to: "v1.jpg")
        let response = try lib.get("/thumbnails/3/current.jpg") {
            try lib.link("current.jpg", to: "v2.jpg")
            try lib.fm.removeItem(atPath: lib.root + "/v1.jpg")
        }
        #expect(response.status == 200)
        let isB = response.body == thumbB
        #expect(isB)
    }

    /// Hits of a memoised URL trust the library watch instead of a `stat` of the source (the
    /// point of `LibraryWatch`); unwatched, every hit `stat`s it. Either way a file replaced as
    /// `mv` does is served from the very next request.
    @Test(arguments: [true, false]) func hitsTrustTheWatchAndAReplacementIsSeenAtOnce(watched: Bool) throws {
        let lib = try Library(watched: watched)
        try lib.copy(Library.photoA, to: lib.root + "/p.jpg")
        let first = lib.get("/thumbnails/3/p.jpg")
        #expect(first.status == 200 && first.headers["X-Cache"] == "MISS")
        for _ in 0..<20 {
            let hit = lib.get("/thumbnails/3/p.jpg")
            #expect(hit.headers["X-Cache"] == "HIT-MEMORY" && hit.headers["ETag"] == first.headers["ETag"])
        }
        let checks = lib.service.resolvedKeys.reduce(0) { $0 + $1.sourceCheckCount }
        #expect(checks == (watched ? 0 : 20))
        #expect(lib.service.statsJSON().contains("\"watch\":{\"enabled\":\(watched),\"instances\":"))

        try lib.copy(Library.photoB, to: lib.root + "/.p.tmp")
        #expect(rename(lib.root + "/.p.tmp", lib.root + "/p.jpg") == 0)
        let replaced = lib.get("/thumbnails/3/p.jpg")
        #expect(replaced.status == 200 && replaced.headers["X-Cache"] == "MISS")
        #expect(replaced.headers["ETag"] != first.headers["ETag"])
    }

    /// After a change the watch reports, a memoised URL is resolved again in full, not just
    /// `stat`ed: the same file moved out with its directory and linked back from outside the
    /// root is a 404 at once, and a second spelling of the name added (NFC beside NFD) is what
    /// the NFC URL serves from the next request on (found by a fresh-eyes session).
    @Test func aChangedLibraryResolvesMemoisedURLsAgainInFull() throws {
        let lib = try Library()
        try lib.fm.createDirectory(atPath: lib.root + "/album", withIntermediateDirectories: false)
        try lib.copy(Library.photoA, to: lib.root + "/album/p.jpg")
        #expect(lib.get("/thumbnails/3/album/p.jpg").status == 200)
        #expect(lib.get("/thumbnails/3/album/p.jpg").headers["X-Cache"] == "HIT-MEMORY")
        #expect(rename(lib.root + "/album", lib.outside + "/album") == 0)
        #expect(symlink(lib.outside + "/album", lib.root + "/album") == 0)
        #expect(lib.get("/thumbnails/3/album/p.jpg").status == 404)

        let nfd = "café.jpg".decomposedStringWithCanonicalMapping, nfc = "café.jpg".precomposedStringWithCanonicalMapping
        try lib.copy(Library.photoA, to: lib.root + "/" + nfd)
        let url = "/thumbnails/3/caf%C3%A9.jpg"   // NFC, percent-encoded
        let first = lib.get(url)
        #expect(first.status == 200)
        #expect(lib.get(url).headers["X-Cache"] == "HIT-MEMORY")
        try lib.copy(Library.photoB, to: lib.root + "/" + nfc)
        let second = lib.get(url)
        #expect(second.status == 200)
        #expect(second.headers["ETag"] != first.headers["ETag"])
    }

    /// A URL that reaches its file through a link outside the library (`via.jpg -> O/pick.jpg
    /// -> a.jpg`), where nothing is watched: the outside link retargeted (to `b.jpg`) is seen on
    /// the next request, as without the watch (found by a fresh-eyes session).
    @Test(arguments: [true, false]) func aLinkOutsideTheLibraryRetargetedIsSeenAtOnce(watched: Bool) throws {
        let lib = try Library(watched: watched)
        try lib.copy(Library.photoA, to: lib.root + "/a.jpg")
        try lib.copy(Library.photoB, to: lib.root + "/b.jpg")
        #expect(symlink(lib.root + "/a.jpg", lib.outside + "/pick.jpg") == 0)
        #expect(symlink(lib.outside + "/pick.jpg", lib.root + "/via.jpg") == 0)
        let a = lib.get("/thumbnails/3/a.jpg").body, b = lib.get("/thumbnails/3/b.jpg").body
        #expect(!a.isEmpty && !b.isEmpty && a != b)
        let first = lib.get("/thumbnails/3/via.jpg")
        let firstIsA = first.body == a   // (not in #expect: it would print every byte)
        #expect(firstIsA)
        #expect(lib.get("/thumbnails/3/via.jpg").headers["X-Cache"] == "HIT-MEMORY")
        #expect(unlink(lib.outside + "/pick.jpg") == 0)
        #expect(symlink(lib.root + "/b.jpg", lib.outside + "/pick.jpg") == 0)
        let retargeted = lib.get("/thumbnails/3/via.jpg")
        let retargetedIsB = retargeted.body == b
        #expect(retargetedIsB)
        #expect(retargeted.headers["ETag"] != first.headers["ETag"])
    }

    /// A memoised URL through a symlink, whose target is moved outside the root and the link
    /// pointed after it: 404 on the next request, watch or not (found by a fresh-eyes session).
    @Test(arguments: [true, false]) func aLinkedFileMovedOutsideIsNotServed(watched: Bool) throws {
        let lib = try Library(watched: watched)
        try lib.copy(Library.photoA, to: lib.root + "/real.jpg")
        #expect(symlink("real.jpg", lib.root + "/pic.jpg") == 0)
        #expect(lib.get("/thumbnails/3/pic.jpg").status == 200)
        #expect(lib.get("/thumbnails/3/pic.jpg").headers["X-Cache"] == "HIT-MEMORY")
        #expect(rename(lib.root + "/real.jpg", lib.outside + "/real.jpg") == 0)
        try lib.link("pic.jpg", to: lib.outside + "/real.jpg")
        #expect(lib.get("/thumbnails/3/pic.jpg").status == 404)
    }
}

extension Thumbd {
    /// This server with `startServing()` done (no socket), for a test that keeps only its service.
    var startedInProcess: Thumbd {
        startServing()
        return self
    }
}
