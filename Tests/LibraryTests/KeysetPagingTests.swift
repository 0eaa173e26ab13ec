import Foundation
@testable import Library
import Rendering
import Synchronization
import Testing
import TestSupport

/// Keyset paging (docs/API.md, "Listing"): a page continues after the last item's key, so a
/// listing that changes while a client pages through it shows every photo present throughout
/// exactly once, in order; and the generation changes exactly when the listing does.
@Suite struct KeysetPagingTests {
    /// A library on disk whose photos' capture times the test sets by name (a probe reads the
    /// real header, then puts the test's time in place of the EXIF one).
    final class TimedLibrary {
        let dir = TemporaryDirectory()
        /// Capture times by file name, as EXIF writes them.
        final class Times: Sendable {
            let byName = Mutex<[String: String]>([:])
            func withLock<R>(_ body: (inout [String: String]) -> R) -> R { byName.withLock { body(&$0) } }
        }
        let times = Times()
        let index: LibraryIndex

        init() throws {
            let times = times
            let probe: LibraryIndex.Probe = { path in
                LibraryIndex.probeHeader(path).map { info in
                    var info = info
                    info.dateTimeOriginal = times.withLock { $0[String(path.description.split(separator: "/").last!)] }
                    return info
                }
            }
            index = try LibraryIndex(library: try Library(root: dir.path), databasePath: dir.path + "-index.sqlite", probe: probe)
        }

        deinit { unlink(dir.path + "-index.sqlite") }

        /// A photo named `name` taken `minute` minutes after 2020-01-01 00:00 UTC.
        func add(_ name: String, minute: Int) {
            times.withLock { $0[name] = String(format: "2020:01:01 %02d:%02d:00", minute / 60, minute % 60) }
            dir.write(name, [UInt8](Fixtures.photo("Landscape_1.jpg")))
        }

        func delete(_ name: String) { unlink(dir.path + "/" + name) }

        func rename(_ name: String, to newName: String) {
            times.withLock { $0[newName] = $0[name] }
            rename(dir.path + "/" + name, dir.path + "/" + newName)
        }

        private func rename(_ from: String, _ to: String) { _ = Glibc.rename(from, to) }

        func paths(_ order: ListingOrder) -> [String] {
            index.page(order: order, from: .offset(0), limit: 10_000).items.map(\.path.description)
        }
    }

    @Test(arguments: [ListingOrder.newest, .oldest])
    func pagingByCursorWhileTheLibraryChangesShowsEveryPhotoPresentThroughoutOnceInOrder(order: ListingOrder) throws {
        let library = try TimedLibrary()
        // 40 photos, two a minute: each minute's pair is a tie broken by path.
        for i in 0..<40 { library.add(String(format: "p%02d-%@.jpg", i / 2, i % 2 == 0 ? "a" : "b"), minute: 10 + i / 2) }
        library.index.rescan()
        var present = Set(library.paths(order))
        var seen: [String] = []
        var after: ListingKey?
        var step = 0
        while true {
            let page = library.index.page(order: order, from: after.map(ListingStart.after) ?? .offset(0), limit: 3)
            seen += page.items.map(\.path.description)
            guard let last = page.items.last, page.hasMore, step < 100 else { break }
            after = last.listingKey
            // Between pages: a photo arrives at the top and one at the bottom, one not yet shown
            // is deleted, one is renamed, and every third time the page's last item (the
            // cursor's own) is deleted.
            step += 1
            library.add("new-top-\(step).jpg", minute: 1_000 + step)
            library.add("new-bottom-\(step).jpg", minute: step % 10)
            let listed = library.paths(order)
            let ahead = listed.drop(while: { $0 != last.path.description }).dropFirst().filter { $0.hasPrefix("p") }
            if ahead.count > 4 {
                library.delete(ahead[ahead.startIndex + 1])
                library.rename(ahead[ahead.startIndex + 3], to: "renamed-\(step)-" + ahead[ahead.startIndex + 3])
            }
            if step % 3 == 0 { library.delete(last.path.description) }
            library.index.rescan()
            present.formIntersection(library.paths(order))
        }
        #expect(step > 8 && step < 100, "the pages came to an end")
        #expect(Set(seen).count == seen.count, "no photo shown twice")
        let throughout = library.paths(order).filter(present.contains)
        #expect(throughout.count >= 20)
        #expect(seen.filter(present.contains) == throughout, "every photo present throughout, once, in order")
        // Whatever else was shown came in listing order too: each page continued after the last.
        let keys = try seen.map { name in try #require(library.times.withLock { $0[name] }) + "|" + name }
        #expect(keys == (order == .oldest ? keys.sorted() : keys.sorted { a, b in
            let (x, y) = (a.split(separator: "|")[0], b.split(separator: "|")[0])
            return x != y ? x > y : a.split(separator: "|")[1] < b.split(separator: "|")[1]
        }))
    }

    /// Offsets, as a contrast: a photo arriving at the top between two pages shows the last
    /// item of the first page again at the top of the second.
    @Test func pagingByOffsetWhileAPhotoArrivesShowsOneTwice() throws {
        let library = try TimedLibrary()
        for i in 0..<6 { library.add("p\(i).jpg", minute: 10 + i) }
        library.index.rescan()
        let first = library.index.page(order: .newest, from: .offset(0), limit: 3)
        library.add("top.jpg", minute: 100)
        library.index.rescan()
        let byOffset = library.index.page(order: .newest, from: .offset(3), limit: 3)
        let byKey = library.index.page(order: .newest, from: .after(first.items.last!.listingKey), limit: 3)
        #expect(first.items.map(\.path.description) == ["p5.jpg", "p4.jpg", "p3.jpg"])
        #expect(byOffset.items.map(\.path.description) == ["p3.jpg", "p2.jpg", "p1.jpg"])
        #expect(byKey.items.map(\.path.description) == ["p2.jpg", "p1.jpg", "p0.jpg"])
        #expect(byKey.offset == 4)
        #expect(byKey.total == 7)
        #expect(!byKey.hasMore)
    }

    /// A key whose item was deleted continues from where that item stood: the next item after
    /// that sort key, in either order, with ties by path.
    @Test func aKeyWhoseItemIsGoneContinuesFromItsPlace() throws {
        let library = try TimedLibrary()
        for name in ["a.jpg", "b.jpg", "c.jpg"] { library.add(name, minute: 30) }
        library.add("early.jpg", minute: 10)
        library.add("late.jpg", minute: 50)
        library.index.rescan()
        let b = try #require(library.index.page(order: .newest, from: .offset(0), limit: 10).items.first { $0.path == "b.jpg" })
        library.delete("b.jpg")
        library.index.rescan()
        #expect(library.index.page(order: .newest, from: .after(b.listingKey), limit: 10).items.map(\.path.description)
            == ["c.jpg", "early.jpg"])
        #expect(library.index.page(order: .oldest, from: .after(b.listingKey), limit: 10).items.map(\.path.description)
            == ["c.jpg", "late.jpg"])
        // A key past either end: nothing after it.
        let past = ListingKey(takenMilliseconds: 0, path: "zzz.jpg")
        #expect(library.index.page(order: .newest, from: .after(past), limit: 10).items.isEmpty)
        #expect(library.index.page(order: .oldest, from: .after(past), limit: 10).items.count == 4)
    }

    @Test func theGenerationChangesExactlyWhenTheListingDoes() throws {
        let library = try TimedLibrary()
        library.add("a.jpg", minute: 1)
        library.add("b.jpg", minute: 2)
        library.index.rescan()
        var generation = library.index.generation
        func expectStep(_ change: Int, _ what: Comment) {
            #expect(library.index.generation == generation + change, what)
            generation = library.index.generation
        }
        library.index.rescan()
        expectStep(0, "a rescan that found nothing")
        library.dir.write("notes.txt", Array("not an image".utf8))
        library.index.rescan()
        expectStep(0, "a file that is not an image")
        library.add("c.jpg", minute: 3)
        library.index.rescan()
        expectStep(1, "added")
        library.rename("c.jpg", to: "d.jpg")
        library.index.rescan()
        expectStep(1, "renamed (one scan)")
        library.dir.write("d.jpg", [UInt8](Fixtures.photo("Landscape_6.jpg")))
        library.index.rescan()
        expectStep(1, "replaced")
        library.delete("a.jpg")
        library.index.rescan()
        expectStep(1, "deleted")
        library.index.rescan()
        expectStep(0, "nothing since")
        #expect(library.index.page(order: .newest, from: .offset(0), limit: 0).generation == generation)
    }
}
