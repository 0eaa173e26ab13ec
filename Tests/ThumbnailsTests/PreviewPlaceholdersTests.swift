import CLinux
import Dispatch
import Foundation
import Library
import Rendering
import Synchronization
import Testing
import TestSupport
@testable import Thumbnails

/// `PreviewPlaceholders` off the scan's path: a scan hands the images it lists over and returns,
/// so the listing is whole while previews are still being read; their placeholders arrive after,
/// and the listing's generation does not change for them.
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

    @Test func theScanDoesNotWaitForPreviews() throws {
        let photos = try Library_(["galaxy-s-orientation6-gps-vga.jpg"])
        let index = try LibraryIndex(library: try Library(root: photos.root), databasePath: photos.root + "-index.sqlite")
        let placeholders = Placeholders(store: index)
        // Each read waits for the test (10 s at most, so a scan that waited for it would end,
        // and be seen to have waited, rather than hang).
        let gate = DispatchSemaphore(value: 0)
        let previews = PreviewPlaceholders(index: index, placeholders: placeholders, threads: 1) { path, side, expected throws(RenderError) in
            _ = gate.wait(timeout: .now() + 10)
            return try Self.read(path, side, expected)
        }
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
        #expect(index.generation == generation)
    }

    /// Previews are read at a lower CPU priority than the rest of the process (the renders):
    /// each read sees its thread's nice value 10 above the process's, and the thread the test
    /// runs on (not a reader's) keeps its own.
    @Test func previewsAreReadAtALowerCPUPriority() throws {
        let photos = try Library_(["galaxy-s-orientation6-gps-vga.jpg", "sony-cybershot-small-orientation6.jpg"])
        let index = try LibraryIndex(library: try Library(root: photos.root), databasePath: photos.root + "-index.sqlite")
        let placeholders = Placeholders(store: index)
        let seen = Mutex<[Int32]>([])
        let previews = PreviewPlaceholders(index: index, placeholders: placeholders, threads: 2) { path, side, expected throws(RenderError) in
            let nice = clinux_thread_nice()
            seen.withLock { $0.append(nice) }
            return try Self.read(path, side, expected)
        }
        let before = clinux_thread_nice(), process = clinux_process_nice()
        previews.start()
        index.rescan()
        previews.waitUntilIdle()
        let reader = min(19, process + PreviewPlaceholders.niceness)
        #expect(seen.withLock { $0 } == [reader, reader])
        #expect(clinux_thread_nice() == before)
    }

    /// Stopped (the server shutting down), it writes nothing more to the index.
    @Test func stoppedItMakesNoMore() throws {
        let photos = try Library_(["galaxy-s-orientation6-gps-vga.jpg"])
        let index = try LibraryIndex(library: try Library(root: photos.root), databasePath: photos.root + "-index.sqlite")
        let placeholders = Placeholders(store: index)
        let previews = PreviewPlaceholders(index: index, placeholders: placeholders, read: Self.read)
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
        let index = try LibraryIndex(library: try Library(root: photos.root), databasePath: photos.root + "-index.sqlite")
        let placeholders = Placeholders(store: index)
        let previews = PreviewPlaceholders(index: index, placeholders: placeholders, read: Self.read)
        previews.start()
        previews.waitUntilIdle()
        #expect(placeholders.statistics.fromPreviews == 1)
        #expect(placeholders.statistics.previewsMismatched == 1)
        #expect(index.thumbhashCounts.known == 1)
    }
}
