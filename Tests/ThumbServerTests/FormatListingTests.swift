import Foundation
import Testing
@testable import ThumbServer

/// What is listed renders, and what cannot render is not listed (README "Formats"): one list of
/// formats, used by the listing's header reads and by renders alike.
@Suite struct FormatListingTests {
    /// Every file of `Tests/Fixtures/formats` (PNG, BMP, ICO, TGA, SVG, PDF) and a JPEG: BMP, ICO
    /// and TGA were listed with their sizes and answered 415 "source is not in a known format";
    /// SVG and PDF were listed and rendered though a photo library does not list them. TGA is
    /// not read now (README "Formats").
    @Test func theListingAndTheRendersAgreeOnEveryFixtureFormat() throws {
        let root = NSTemporaryDirectory() + "thumbd-formats-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: root) }
        let formats = Paths.packageRoot + "/Tests/Fixtures/formats"
        try FileManager.default.copyItem(atPath: formats, toPath: root)
        try FileManager.default.copyItem(atPath: Paths.fixturePhotos + "/kodak-dc210-1998-vga.jpg", toPath: root + "/kodak.jpg")
        let server = try ServerHarness(library: root) { $0.indexRescanSeconds = 3600 }
        server.waitForInitialScan()
        let items = try server.get("/assets?sort=oldest&limit=100").json["items"] as? [[String: Any]] ?? []
        var listed: [String: (width: Int, height: Int)] = [:]
        for item in items {
            listed[item["path"] as? String ?? ""] = (item["width"] as? Int ?? 0, item["height"] as? Int ?? 0)
        }
        #expect(listed.keys.sorted() == ["bmp-24bit-64x48.bmp", "ico-32bit-alpha-64x48.ico", "kodak.jpg",
                                         "png-rgba-alpha-2048x1536.png", "png-rgba-interlaced-adam7.png"])
        for name in ["bmp-24bit-64x48.bmp", "ico-32bit-alpha-64x48.ico"] {
            #expect(listed[name].map { [$0.width, $0.height] } == [64, 48], "\(name)")
        }
        // Each listed file renders, at the size its listed width and height give.
        for (name, size) in listed {
            let response = try server.get("/thumbnails/3/\(encodePath(name))")
            #expect(response.status == 200, "\(name): \(response.text)")
            let expected = ExpectedSize.of(grid: "3", width: size.width, height: size.height)
            #expect(response.image.map { [$0.width, $0.height] } == [expected.width, expected.height], "\(name)")
        }
        #expect(try server.get("/thumbnails/3/ico-32bit-alpha-64x48.ico").image?.format == "png")   // alpha kept
        // Each file not listed answers 415, and says why.
        for name in Paths.files(in: root) where listed[name] == nil {
            let response = try server.get("/thumbnails/3/\(encodePath(name))")
            #expect(response.status == 415, "\(name)")
            // "a format thumbd does not read (libvips svgload_source; ...)" for a format libvips
            // knows, "not in a format thumbd reads" for one no loader on the list claims (TGA).
            let message = response.json["message"] as? String ?? ""
            #expect(message.contains("format thumbd does not read") || message.contains("not in a format thumbd reads"), "\(name): \(message)")
            #expect(message.contains("see docs/thumbnails.md \"Formats\""), "\(name): \(message)")
        }
    }
}
