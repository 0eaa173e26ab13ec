import Dispatch
#if canImport(Glibc)
import Glibc
#endif
import Foundation
@testable import Library
import Locking
import Rendering
import Synchronization
import Testing
import TestSupport
@testable import Thumbnails

/// `PreviewPlaceholders` off the scan's path: a scan hands the images it lists over and returns,
/// so the listing is whole while previews are still being read; their placeholders arrive after,
/// as one more generation of the listing.
@Suite struct PreviewPlaceholdersTests {
    final class Library_ {
        let root = NSTemporaryDirectory() + "thumbd-preview-placeholders-\(UUID().uuidString)"
        init(_ names: [String]) throws {
            try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
            for name in names { try Fixtures.photo(name).write(to: URL(fileURLWithPath: root + "/" + name)) }
        }
        deinit {
            try? FileManager.default.removeItem(atPath: root)
            try? FileManager.default.removeItem(atPath: root + "-index.sqlite")
        }
    }

    static func read(_ path: DiskPath, _ side: Int, _ expected: SourceIdentity) throws(RenderError) -> EmbeddedPreview {
        try Renderer().embeddedPreview(file: path, side: side, expected: expected)
    }

    /// An index of `photos` (opened anew: from the database an earlier one left), its
    /// placeholders, and previews read by `read` on a one-worker scheduler, stopped with it.
    final class Maker {
        let index: LibraryIndex, placeholders: Placeholders, scheduler = RenderScheduler(workers: 1), previews: PreviewPlaceholders

        init(_ photos: Library_, read: @escaping PreviewPlaceholders.Read = PreviewPlaceholdersTests.read) throws {
            index = try LibraryIndex(library: try Library(root: photos.root), databasePath: photos.root + "-index.sqlite")
            placeholders = Placeholders(store: index)
            previews = PreviewPlaceholders(index: index, placeholders: placeholders, scheduler: scheduler, read: read)
        }

        deinit { scheduler.stop() }
    }

    @Test func theScanDoesNotWaitForPreviews() throws {
        let photos = try Library_(["galaxy-s-orientation6-gps-vga.jpg"])
        // Each read waits for the test (10 s at most, so a scan that waited for it would end,
        // and be seen to have waited, rather than hang).
        let gate = DispatchSemaphore(value: 0)
        let maker = try Maker(photos) { path, side, expected throws(RenderError) in
            _ = gate.wait(timeout: .now() + 10)
            return try Self.read(path, side, expected)
        }
        let (index, placeholders, previews) = (maker.index, maker.placeholders, maker.previews)
        previews.start()
        index.rescan()
        #expect(index.isComplete)
        #expect(previews.isBusy)
        let record = try #require(index.listing(order: .newest, offset: 0, limit: 10).items.first)
        #expect(index.thumbhash(of: record) == nil)
        let generation = index.generation

        gate.signal()
        previews.waitUntilIdle()
        #expect(!previews.isBusy)
        #expect(index.thumbhash(of: record)?.isEmpty == false)
        #expect(placeholders.statistics.fromPreviews == 1)
        // The placeholder is published as one generation (at once here, else 50 ms after it).
        index.publishArrivedPlaceholders()
        #expect(index.generation == generation + 1)
    }

    /// Previews are read on the render scheduler's preview lane: on its workers, newest photo
    /// first (what a grid shows first); a batch's first screens (`firstScreens`) before the
    /// client misses waiting, the rest after them.
    @Test func previewsAreReadOnThePreviewLaneNewestFirstTheFirstScreensBeforeClientMisses() throws {
        // Taken in 2011, 2001 and 2000, then 60 more names of the last (one `taken`: by path).
        // The second's preview is 160x120 in a 311x450 photo (edited after it was taken), so it
        // is not trusted; the others have none but the first. Each is looked at.
        let photos = try Library_(["sony-cybershot-small-orientation6.jpg", "kodak-dc210-1998-vga.jpg", "galaxy-s-orientation6-gps-vga.jpg"])
        for n in 0..<60 { #expect(link(photos.root + "/kodak-dc210-1998-vga.jpg", photos.root + "/kodak-\(n).jpg") == 0) }
        let ran = Mutex<[(name: String, role: ThreadRole)]>([])
        let maker = try Maker(photos) { path, side, expected throws(RenderError) in
            ran.withLock { $0.append((String(decoding: path.bytes.split(separator: UInt8(ascii: "/")).last!, as: UTF8.self), ThreadRole.current)) }
            return try Self.read(path, side, expected)
        }
        let (index, placeholders, scheduler, previews) = (maker.index, maker.placeholders, maker.scheduler, maker.previews)
        // The one worker is held by a client miss while the scan hands its photos over; another
        // miss waits.
        let gate = DispatchSemaphore(value: 0), running = DispatchSemaphore(value: 0)
        scheduler.enqueue(.foreground) {
            running.signal()
            _ = gate.wait(timeout: .now() + 600)
        }
        running.wait()
        previews.start()
        index.rescan()
        scheduler.enqueue(.foreground) { ran.withLock { $0.append(("miss", ThreadRole.current)) } }
        gate.signal()
        previews.waitUntilIdle()
        let newestFirst = index.listing(order: .newest, offset: 0, limit: 100).items.map { String(decoding: $0.path.bytes, as: UTF8.self) }
        #expect(newestFirst.count == 63)
        #expect(Array(newestFirst.prefix(3)) == ["galaxy-s-orientation6-gps-vga.jpg", "sony-cybershot-small-orientation6.jpg", "kodak-0.jpg"])
        #expect(ran.withLock { $0.map(\.name) } == Array(newestFirst.prefix(PreviewPlaceholders.firstScreens)) + ["miss"]
                + Array(newestFirst.dropFirst(PreviewPlaceholders.firstScreens)))
        #expect(ran.withLock { $0.allSatisfy { $0.role == .renderWorker } })
        #expect(placeholders.statistics.fromPreviews == 1)
        #expect(placeholders.statistics.previewsMismatched == 1)
    }

    /// A photo that comes below the listing's first screens (an old one copied in) is read after
    /// the client misses waiting, though it is the newest of its batch.
    @Test func aPhotoBelowTheFirstScreensWaitsForClientMisses() throws {
        // One taken in 2011, 60 in 2001 (whose previews are not trusted, and each looked at).
        let photos = try Library_(["galaxy-s-orientation6-gps-vga.jpg", "sony-cybershot-small-orientation6.jpg"])
        for n in 0..<59 { #expect(link(photos.root + "/sony-cybershot-small-orientation6.jpg", photos.root + "/sony-\(n).jpg") == 0) }
        let ran = Mutex<[String]>([])
        let maker = try Maker(photos) { path, side, expected throws(RenderError) in
            ran.withLock { $0.append(String(decoding: path.bytes.split(separator: UInt8(ascii: "/")).last!, as: UTF8.self)) }
            return try Self.read(path, side, expected)
        }
        maker.previews.start()
        maker.index.rescan()
        maker.previews.waitUntilIdle()
        #expect(ran.withLock { $0.count } == 61)
        // A photo of 2000 arrives while a client miss holds the one worker and another waits.
        let gate = DispatchSemaphore(value: 0), running = DispatchSemaphore(value: 0)
        maker.scheduler.enqueue(.foreground) {
            running.signal()
            _ = gate.wait(timeout: .now() + 600)
        }
        running.wait()
        try Fixtures.photo("kodak-dc210-1998-vga.jpg").write(to: URL(fileURLWithPath: photos.root + "/kodak.jpg"))
        maker.index.rescan()
        maker.scheduler.enqueue(.foreground) { ran.withLock { $0.append("miss") } }
        gate.signal()
        maker.previews.waitUntilIdle()
        #expect(ran.withLock { Array($0.dropFirst(61)) } == ["miss", "kodak.jpg"])
    }

    /// Stopped (the server shutting down), it writes nothing more to the index.
    @Test func stoppedItMakesNoMore() throws {
        let photos = try Library_(["galaxy-s-orientation6-gps-vga.jpg"])
        let maker = try Maker(photos)
        let (index, placeholders, previews) = (maker.index, maker.placeholders, maker.previews)
        previews.start()
        previews.stop()
        index.rescan()
        previews.waitUntilIdle()
        #expect(placeholders.statistics.fromPreviews == 0)
        #expect(index.thumbhashCounts.known == 0)
    }

    /// An index from an earlier run, whose photos have no placeholder: `start` reads their previews.
    @Test func startLooksAtWhatIsListedAlready() throws {
        let photos = try Library_(["galaxy-s-orientation6-gps-vga.jpg", "sony-cybershot-small-orientation6.jpg"])
        do {
            let index = try LibraryIndex(library: try Library(root: photos.root), databasePath: photos.root + "-index.sqlite")
            index.rescan()
        }
        let maker = try Maker(photos)
        let (index, placeholders, previews) = (maker.index, maker.placeholders, maker.previews)
        previews.start()
        previews.waitUntilIdle()
        #expect(placeholders.statistics.fromPreviews == 1)
        #expect(placeholders.statistics.previewsMismatched == 1)
        #expect(index.thumbhashCounts.known == 1)
    }
}
