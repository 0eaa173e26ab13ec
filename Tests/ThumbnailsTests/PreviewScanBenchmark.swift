import Dispatch
import Foundation
import Library
import Rendering
import Testing
import TestSupport
@testable import Thumbnails

/// A first scan of 10,000 phone photos with and without placeholders from embedded previews
/// (docs/performance.md, "Placeholders from embedded previews"): hard links, under distinct
/// names, to the shared corpus' phone photos (those with a preview of their shape and those
/// without), scanned into a fresh index. Printed: the scan's seconds (until the listing is whole) without
/// and with previews handed over, in 5 alternating rounds after a warm-up, then one scan with
/// every preview read after it: the seconds that took and the placeholders' rate. A benchmark, not a check: run with
/// `THUMBD_PREVIEW_BENCHMARK=1 swift test --skip-build --filter PreviewScanBenchmark`.
@Suite(.enabled(if: ProcessInfo.processInfo.environment["THUMBD_PREVIEW_BENCHMARK"] == "1" && Fixtures.corpus != nil,
                "THUMBD_PREVIEW_BENCHMARK=1 and the shared corpus"))
struct PreviewScanBenchmark {
    /// The corpus' phone photos: five with a preview of their shape, four without.
    static let phones = [
        "photos/galaxy-s-orientation6-gps-vga.jpg", "photos/google-pixel-12mp-gps.jpg", "photos/iphone5-orientation3-gps.jpg",
        "formats/heic-iphone7-gps-p3.heic", "formats/heic-iphone13-irot-and-exif-orientation6.heic",
        "photos/iphone6plus-portrait-8mp-gps.jpg", "photos/blackberry-z10-orientation6.jpg", "photos/jolla-8mp.jpg",
        "photos/nokia83-wide-21x9-gps.jpg",
    ]

    static let count = 10_000

    @Test func firstScanWithAndWithoutPreviews() throws {
        let root = NSTemporaryDirectory() + "thumbd-preview-benchmark-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: root + "/library", withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: root) }
        for i in 0..<Self.count {
            let source = Fixtures.corpus! + "/" + Self.phones[i % Self.phones.count]
            let name = String(format: "IMG_%05d.", i) + (source.hasSuffix(".heic") ? "heic" : "jpg")
            try FileManager.default.linkItem(atPath: source, toPath: root + "/library/" + name)
        }
        let library = try Library(root: root + "/library")
        let scheduler = RenderScheduler()
        defer { scheduler.stop() }

        /// One first scan into a fresh index: its seconds, and with previews (`all`: until the
        /// last is read; else they are stopped once the scan has returned) the seconds until
        /// they are all read after it and how many placeholders they made.
        func scan(previews: Bool, all: Bool, round: Int) throws -> (scan: Double, previews: Double, made: Int) {
            let database = root + "/index-\(previews)-\(round).sqlite"
            let index = try LibraryIndex(library: library, databasePath: database)
            let placeholders = Placeholders(store: index)
            let maker = PreviewPlaceholders(index: index, placeholders: placeholders, scheduler: scheduler)
            if previews { maker.start() }
            let started = DispatchTime.now().uptimeNanoseconds
            index.rescan()
            let scanned = DispatchTime.now().uptimeNanoseconds
            if !all { maker.stop() }
            maker.waitUntilIdle()
            let done = DispatchTime.now().uptimeNanoseconds
            #expect(index.listing(order: .newest, offset: 0, limit: 1).total == Self.count)
            return (Double(scanned - started) / 1e9, Double(done - scanned) / 1e9, placeholders.statistics.fromPreviews)
        }

        _ = try scan(previews: false, all: false, round: 0)   // the page cache and libvips warm
        // The scan's own time, A/B in alternating rounds: previews handed over, then stopped.
        var without: [Double] = [], with: [Double] = []
        for round in 1...5 {
            without.append(try scan(previews: false, all: false, round: round).scan)
            with.append(try scan(previews: true, all: false, round: round).scan)
        }
        print("first scan of \(Self.count) phone photos, s, without previews: \(without.map { String(format: "%.2f", $0) }), "
              + "with them handed over: \(with.map { String(format: "%.2f", $0) }); medians "
              + String(format: "%.2f and %.2f", without.sorted()[2], with.sorted()[2]))
        // Then one first scan with every preview read after it.
        let whole = try scan(previews: true, all: true, round: 6)
        print(String(format: "a first scan of %d phone photos with previews: the listing whole after %.2f s, the previews read %.2f s after it: %d placeholders, %.1f per second",
                     Self.count, whole.scan, whole.previews, whole.made, Double(whole.made) / whole.previews))
    }
}
