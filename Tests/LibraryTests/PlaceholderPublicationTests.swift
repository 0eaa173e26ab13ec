import Foundation
@testable import Library
import Rendering
import Testing
import TestSupport

/// A listing at generation G carries exactly the placeholders published at or before G
/// (docs/API.md, "Placeholders"): one that arrived (made by a render, a preview or the backfill,
/// adopted from a peer, or taken away by a 403 or a failed render) is not listed until it is
/// published, and its publication is the next generation, which the change feed tells as a
/// changed item. The index here never publishes on its own (`schedulePublication` never runs):
/// each row publishes when it says.
@Suite struct PlaceholderPublicationTests {
    static let hash: [UInt8] = [0x1D, 0xD7, 0x09, 0x15, 0x82, 0x4D, 0x3C, 0x89, 0xAF, 0x68]
    static let other: [UInt8] = [0x23, 0x08, 0x0A, 0x0D, 0x02, 0x78, 0x77, 0x88, 0x80, 0x7F]

    /// What arrives for a.jpg.
    enum Arrival: Sendable {
        /// A render's, the preview reader's or the backfill's (`storeThumbhash`).
        case made([UInt8])
        /// A cluster peer's (`adoptThumbhash`).
        case adopted([UInt8])
        /// A 403: its source may not be read now (`Placeholders.forget`: `forgetThumbhash`).
        case forgotten
        /// A 415 or 422: its source cannot be rendered (`Placeholders.noteUnrenderable`: an empty hash).
        case unrenderable
    }

    /// One row: what a.jpg's placeholder is before (nil: none; empty: the note that it cannot be
    /// rendered; else that hash, published), what arrives, the `thumbhash` a.jpg is listed with
    /// once published (base64, worked out by hand), and how far that publication moves the generation.
    struct Row: Sendable, CustomTestStringConvertible {
        let name: String
        let before: [UInt8]?
        let arrival: Arrival
        let listed: String?
        let moves: Int
        var testDescription: String { name }
    }

    static let rows = [
        Row(name: "made", before: nil, arrival: .made(hash), listed: "HdcJFYJNPImvaA==", moves: 1),
        Row(name: "adopted from a peer", before: nil, arrival: .adopted(hash), listed: "HdcJFYJNPImvaA==", moves: 1),
        Row(name: "made anew over another", before: other, arrival: .made(hash), listed: "HdcJFYJNPImvaA==", moves: 1),
        Row(name: "forgotten (403)", before: hash, arrival: .forgotten, listed: nil, moves: 1),
        Row(name: "taken away as unrenderable", before: hash, arrival: .unrenderable, listed: nil, moves: 1),
        // Nothing shown changes: no generation, nothing told.
        Row(name: "unrenderable where none was shown", before: nil, arrival: .unrenderable, listed: nil, moves: 0),
        Row(name: "forgotten where none was shown", before: [], arrival: .forgotten, listed: nil, moves: 0),
    ]

    @Test(arguments: rows)
    func aPlaceholderIsListedFromTheGenerationThatPublishesIt(_ row: Row) throws {
        let dir = TemporaryDirectory("thumbd-publication")
        // No EXIF date: each is taken at its modification time, a.jpg in 2020, b.jpg in 2021.
        for (name, year) in [("a.jpg", 1_577_836_800.0), ("b.jpg", 1_609_459_200.0)] {
            dir.write(name, [UInt8](Fixtures.photo("Landscape_1.jpg")))
            try FileManager.default.setAttributes([.modificationDate: Date(timeIntervalSince1970: year)], ofItemAtPath: dir.path + "/" + name)
        }
        let database = dir.path + "-index.sqlite"
        defer { unlink(database) }
        let index = try LibraryIndex(library: try Library(root: dir.path), databasePath: database, probe: LibraryIndex.probeHeader,
                                     openDirectory: { path in path.withCString { opendir($0) } },
                                     schedulePublication: { _ in })
        index.rescan()
        let records = index.page(order: .newest, from: .offset(0), limit: 10).items
        #expect(records.map(\.path) == ["b.jpg", "a.jpg"])
        let a = records[1]
        let start = index.generation
        if let before = row.before {
            index.storeThumbhash(before, for: a.path, source: a.identity)
            index.publishArrivedPlaceholders()
        }
        /// The listing's generation and its items' `thumbhash`, newest first: b.jpg, a.jpg.
        func listing() -> (generation: Int, thumbhashes: [String?]) {
            let page = index.page(order: .newest, from: .offset(0), limit: 10)
            return (page.generation, page.thumbhashes)
        }
        let shown = row.before.flatMap { $0.isEmpty ? nil : Data($0).base64EncodedString() }
        let generation = index.generation
        #expect(listing() == (generation, [nil, shown]))

        switch row.arrival {
        case .made(let hash): index.storeThumbhash(hash, for: a.path, source: a.identity)
        case .adopted(let hash): #expect(index.adoptThumbhash(hash, for: a.path, source: a.identity) == .kept)
        case .forgotten: index.forgetThumbhash(for: a.path)
        case .unrenderable: index.storeThumbhash([], for: a.path, source: a.identity)
        }
        // Arrived, not published: the listing at this generation is as it was, and the feed has nothing.
        #expect(listing() == (generation, [nil, shown]))
        let unpublished = try #require(index.changes(since: generation, order: .newest))
        #expect(unpublished.generation == generation && unpublished.changed.isEmpty)
        // The feed's items carry what the listing at its generation does: since the start, a.jpg
        // as published before (when that was a placeholder), not what arrived since.
        let sinceStart = try #require(index.changes(since: start, order: .newest))
        #expect(sinceStart.generation == generation)
        #expect(sinceStart.changed == (shown == nil ? [] : [ListedAt(record: a, index: 1, thumbhash: shown)]))

        index.publishArrivedPlaceholders()
        #expect(listing() == (generation + row.moves, [nil, row.listed]))
        let told = try #require(index.changes(since: generation, order: .newest))
        #expect(told.generation == generation + row.moves)
        #expect(told.removed.isEmpty && told.inserted.isEmpty)
        #expect(told.changed == (row.moves == 0 ? [] : [ListedAt(record: a, index: 1, thumbhash: row.listed)]))
        // The feed's answer at the new generation agrees with the listing at it, in the other order too.
        let oldest = try #require(index.changes(since: generation, order: .oldest))
        #expect(oldest.changed == (row.moves == 0 ? [] : [ListedAt(record: a, index: 0, thumbhash: row.listed)]))
    }
}
