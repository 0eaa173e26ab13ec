import Foundation
@testable import Library
import Rendering
import Testing
import TestSupport

/// The listing's two orders (docs/API.md, "Listing"): `taken` as an instant, whatever UTC offset
/// it was recorded in, ties by path ascending (byte order) in both.
@Suite struct ListingOrderTests {
    /// Photos whose EXIF times name one instant, 2024-05-01T12:30:00Z, in five offsets.
    static let sameInstant: [(name: String, time: String, offset: String?)] = [
        ("z.jpg", "2024:05:01 21:30:00", "+09:00"),
        ("a.jpg", "2024:05:01 12:30:00", nil),
        ("m.jpg", "2024:05:01 07:30:00", "-05:00"),
        ("c.jpg", "2024:05:01 18:00:00", "+05:30"),
        ("q.jpg", "2024:05:01 12:30:00", "+00:00"),
    ]

    func record(_ path: String, _ time: String, _ offset: String?) throws -> AssetRecord {
        AssetRecord(path: DiskPath(path), bytes: 1, modifiedNanoseconds: 0, width: 1, height: 1,
                    taken: try #require(CaptureDate(exifDateTime: time, offset: offset)))
    }

    @Test func oneInstantInTwoOffsetsIsTiedAndBrokenByPath() throws {
        let z = try record("z.jpg", "2024:05:01 21:30:00", "+09:00")
        let a = try record("a.jpg", "2024:05:01 12:30:00", nil)
        #expect(z.taken.epochMilliseconds == a.taken.epochMilliseconds)
        #expect(z.taken.offsetMinutes == 540 && a.taken.offsetMinutes == 0)
        #expect(AssetRecord.newestFirst(a, z))
        #expect(!AssetRecord.newestFirst(z, a))
        #expect(AssetRecord.oldestFirst(a, z))
        #expect(!AssetRecord.oldestFirst(z, a))
    }

    @Test func theIndexListsOneInstantByPathInBothOrders() throws {
        let dir = TemporaryDirectory()
        for photo in Self.sameInstant { dir.write(photo.name, [UInt8](Fixtures.photo("Landscape_1.jpg"))) }
        dir.write("later.jpg", [UInt8](Fixtures.photo("Landscape_1.jpg")))
        let times = Dictionary(uniqueKeysWithValues: Self.sameInstant.map { ($0.name, ($0.time, $0.offset)) })
        let probe: LibraryIndex.Probe = { path in
            LibraryIndex.probeHeader(path).map { info in
                var info = info
                let name = String(path.description.split(separator: "/").last!)
                let (time, offset) = times[name] ?? ("2024:05:01 12:30:01", nil)   // later.jpg: one second later
                info.dateTimeOriginal = time
                info.offsetTimeOriginal = offset
                return info
            }
        }
        let library = try Library(root: dir.path)
        let index = try LibraryIndex(library: library, databasePath: dir.path + "-index.sqlite", probe: probe)
        defer { unlink(dir.path + "-index.sqlite") }
        index.rescan()
        let newest = index.listing(order: .newest, offset: 0, limit: 10).items.map(\.path.description)
        let oldest = index.listing(order: .oldest, offset: 0, limit: 10).items.map(\.path.description)
        #expect(newest == ["later.jpg", "a.jpg", "c.jpg", "m.jpg", "q.jpg", "z.jpg"])
        #expect(oldest == ["a.jpg", "c.jpg", "m.jpg", "q.jpg", "z.jpg", "later.jpg"])
    }
}
