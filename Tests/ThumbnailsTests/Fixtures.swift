import Foundation

/// The project's own test photos (`Tests/Fixtures/photos`, see `Tests/Fixtures/MANIFEST.tsv`).
enum Fixtures {
    static let photos: String = {
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
    static func photo(_ name: String) -> Data {
        FileManager.default.contents(atPath: photos + "/" + name)!
    }
}
