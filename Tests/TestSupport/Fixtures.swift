import Foundation

/// The project's own test photos (`Tests/Fixtures/photos`, see `Tests/Fixtures/MANIFEST.tsv`).
public enum Fixtures {
    /// The absolute path of `Tests/Fixtures/photos`, found from the `Package.swift` above this file.
    public static let photos: String = {
        var url = URL(fileURLWithPath: #filePath)
        while url.path != "/" {
            url.deleteLastPathComponent()
            if FileManager.default.fileExists(atPath: url.appendingPathComponent("Package.swift").path) {
                return url.path + "/Tests/Fixtures/photos"
            }
        }
        fatalError("no Package.swift above \(#filePath)")
    }()

    /// The bytes of fixture photo `name`.
    public static func photo(_ name: String) -> Data {
        FileManager.default.contents(atPath: photos + "/" + name)!
    }
}
