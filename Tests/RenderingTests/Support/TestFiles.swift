import Foundation

/// Where the test images live: the package's own fixtures (always present) and the shared corpus
/// (`$THUMBD_CORPUS`, or `../shared/corpus` from the package root), which may be absent.
enum TestFiles {
    /// The package root: this file is `<root>/Tests/RenderingTests/Support/TestFiles.swift`.
    static let packageRoot: URL = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent()

    /// `Tests/Fixtures/`, real photos copied from the corpus with their MANIFEST rows.
    static let fixtures: URL = packageRoot.appendingPathComponent("Tests/Fixtures")

    /// Absolute path of a fixture by file name, wherever it sits (`photos/`, `formats/`,
    /// `broken/`); a name that is in none of them is taken as under `photos/`.
    static func fixture(_ name: String) -> String {
        for folder in ["photos", "formats", "broken"] {
            let path = fixtures.appendingPathComponent(folder).appendingPathComponent(name).path
            if FileManager.default.fileExists(atPath: path) { return path }
        }
        return fixtures.appendingPathComponent("photos").appendingPathComponent(name).path
    }

    /// The shared corpus, when it exists: `$THUMBD_CORPUS`, else `shared/corpus` beside the
    /// package root (`<root>/../shared/corpus`) or beside one of its ancestors (a helper
    /// checkout such as `/work/helpers/rendering` finds `/work/shared/corpus`).
    static let corpus: URL? = {
        var candidates: [URL] = []
        if let configured = ProcessInfo.processInfo.environment["THUMBD_CORPUS"] {
            candidates.append(URL(fileURLWithPath: configured))
        }
        var directory = packageRoot.deletingLastPathComponent()
        while directory.path != "/" {
            candidates.append(directory.appendingPathComponent("shared/corpus"))
            directory = directory.deletingLastPathComponent()
        }
        return candidates.first { url in
            var isDirectory: ObjCBool = false
            return FileManager.default.fileExists(atPath: url.path, isDirectory: &isDirectory)
                && isDirectory.boolValue
        }?.standardizedFileURL
    }()

    static var hasCorpus: Bool { corpus != nil }

    /// File names in a corpus folder (`photos`, `formats`, `broken`), sorted; empty without a corpus.
    static func corpusFiles(_ folder: String) -> [String] {
        guard let corpus else { return [] }
        let names = (try? FileManager.default.contentsOfDirectory(
            atPath: corpus.appendingPathComponent(folder).path)) ?? []
        return names.filter { !$0.hasPrefix(".") }.sorted()
    }

    /// Absolute path of `folder/name` in the corpus (call only when `hasCorpus`).
    static func corpusPath(_ folder: String, _ name: String) -> String {
        corpus!.appendingPathComponent(folder).appendingPathComponent(name).path
    }

    /// A fresh empty directory under the system temporary directory.
    static func temporaryDirectory() throws -> URL {
        let url = FileManager.default.temporaryDirectory
            .appendingPathComponent("rendering-tests-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }
}
