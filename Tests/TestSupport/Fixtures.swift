import Foundation

/// The project's own test photos (`Tests/Fixtures/photos`, see `Tests/Fixtures/MANIFEST.tsv`).
public enum Fixtures {
    /// The package root: the directory of the `Package.swift` above this file.
    public static let packageRoot: String = {
        var url = URL(fileURLWithPath: #filePath)
        while url.path != "/" {
            url.deleteLastPathComponent()
            if FileManager.default.fileExists(atPath: url.appendingPathComponent("Package.swift").path) { return url.path }
        }
        fatalError("no Package.swift above \(#filePath)")
    }()

    /// The absolute path of `Tests/Fixtures/photos`.
    public static let photos = packageRoot + "/Tests/Fixtures/photos"

    /// The shared image corpus (`../shared/corpus` beside the checkout, or `$THUMBD_CORPUS`), or
    /// nil when this clone has none (a directory with a `photos/` directory in it).
    public static let corpus: String? = {
        let candidate = ProcessInfo.processInfo.environment["THUMBD_CORPUS"]
            ?? URL(fileURLWithPath: packageRoot).deletingLastPathComponent().appendingPathComponent("shared/corpus").path
        var isDirectory: ObjCBool = false
        return FileManager.default.fileExists(atPath: candidate + "/photos", isDirectory: &isDirectory) && isDirectory.boolValue
            ? candidate : nil
    }()

    /// The bytes of fixture photo `name`.
    public static func photo(_ name: String) -> Data {
        FileManager.default.contents(atPath: photos + "/" + name)!
    }
}
