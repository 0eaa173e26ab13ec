import Foundation
import TestSupport

/// Where test inputs live: the project's own fixtures (always there) and the shared corpus
/// (`../shared/corpus` beside the checkout, or `$THUMBD_CORPUS`), whose sweeps run only when present.
enum Paths {
    /// The package root (`Fixtures.packageRoot`).
    static let packageRoot = Fixtures.packageRoot

    /// `Tests/Fixtures/photos`: a few small real photos (see Tests/Fixtures/MANIFEST.tsv).
    static let fixturePhotos = Fixtures.photos

    /// The shared corpus, or nil when this clone has none (`Fixtures.corpus`).
    static let corpus = Fixtures.corpus

    static var hasCorpus: Bool { corpus != nil }

    /// File names in a directory, sorted, without dot-files.
    static func files(in directory: String) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []).filter { !$0.hasPrefix(".") }.sorted()
    }
}

/// The expected output size by docs/API.md's rules, worked out here from the grid box and the source's
/// displayed size, independently of `GridSpec.outputSize`.
enum ExpectedSize {
    static func of(grid: String, width w: Int, height h: Int) -> (width: Int, height: Int) {
        switch grid {
        case "1":  // contain 1179x2358, never enlarge
            if w <= 1179 && h <= 2358 { return (w, h) }
            let scale = min(1179.0 / Double(w), 2358.0 / Double(h))
            return scale == 1179.0 / Double(w) ? (1179, Int((Double(h) * scale).rounded())) : (Int((Double(w) * scale).rounded()), 2358)
        case "3": return w < 393 || h < 393 ? (min(w, h), min(w, h)) : (393, 393)
        default: return w < 236 || h < 236 ? (min(w, h), min(w, h)) : (236, 236)
        }
    }
}
