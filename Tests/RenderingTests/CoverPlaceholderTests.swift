import Foundation
import Rendering
import Testing
import ThumbHash

/// A square `cover` render that also makes the placeholder decodes the covering image uncropped,
/// makes the placeholder of that (the whole photo), and crops the centre itself
/// (cvips_covering_box in Sources/CVipsShim/cvips_render.c). Its thumbnail must be the bytes
/// libvips' own crop gives, which a render without a placeholder still uses: thumbnail URLs'
/// `v` tokens promise them (docs/API.md).
@Suite(.enabled(if: TestFiles.hasCorpus, "needs the shared corpus"))
struct CoverPlaceholderTests {
    let renderer = Renderer()

    func render(_ path: String, grid: String, format: ImageFormat?, side: Int) -> Result<Thumbnail, RenderError> {
        var request = RenderRequest(sourcePath: path, spec: .grid(grid), format: format)
        request.placeholderSide = side
        return Result { () throws(RenderError) in try renderer.render(request) }
    }

    /// Every still file of the corpus (photos, formats, the broken ones that render, such as the
    /// JPEGs cut short; `names/` holds copies of these) at grids 3 and 5 in each output format:
    /// the same bytes with the placeholder as without, and a render that fails fails alike.
    /// The encoders are deterministic (libjpeg-turbo, libspng/libpng, libwebp with the same
    /// settings on the same pixels), so equal pixels give equal bytes and the bytes are compared.
    @Test(arguments: ["photos", "formats", "broken"])
    func theThumbnailIsTheBytesOfLibvipsOwnCrop(folder: String) throws {
        var compared = 0, wholePlaceholders = 0
        for name in TestFiles.corpusFiles(folder) {
            let path = TestFiles.corpusPath(folder, name)
            guard let info = try? renderer.probe(path: path) else { continue }
            for grid in ["3", "5"] {
                for format in ImageFormat.allCases {
                    let without = render(path, grid: grid, format: format, side: 0)
                    let with = render(path, grid: grid, format: format, side: Placeholders.side)
                    switch (without, with) {
                    case (.success(let old), .success(let new)):
                        // A Bool, so that a failure does not diff two arrays of kilobytes.
                        let same = old.bytes == new.bytes
                        #expect(same, "\(folder)/\(name) grid \(grid) \(format): \(old.bytes.count) bytes against \(new.bytes.count)")
                        #expect((old.width, old.height) == (new.width, new.height))
                        compared += 1
                        let placeholder = try #require(new.placeholder, "\(folder)/\(name): no placeholder")
                        // The whole photo's shape: each side within a pixel of the photo's scaled.
                        let long = max(info.displayWidth, info.displayHeight)
                        let scale = Double(max(placeholder.width, placeholder.height)) / Double(long)
                        #expect(abs(Double(placeholder.width) - Double(info.displayWidth) * scale) <= 1.0
                                && abs(Double(placeholder.height) - Double(info.displayHeight) * scale) <= 1.0,
                                "\(folder)/\(name): placeholder \(placeholder.width)x\(placeholder.height) of a \(info.displayWidth)x\(info.displayHeight) photo")
                        if placeholder.width != placeholder.height { wholePlaceholders += 1 }
                    case (.failure(let old), .failure(let new)):
                        #expect(old.kind == new.kind, "\(folder)/\(name)")
                    default:
                        Issue.record("\(folder)/\(name) grid \(grid) \(format): one render failed, the other did not")
                    }
                }
            }
        }
        // Not vacuous: the corpus' folders each hold renderable photos that are not square.
        #expect(compared > 0 && wholePlaceholders > 0, "\(compared) compared, \(wholePlaceholders) not square")
    }

    /// The ThumbHash of a cover render's placeholder decodes to the photo's shape (within 10%),
    /// not the square's: 4:3, 3:4, 16:9, 9:16 shown (stored 16:9 with orientation 6), 21:9.
    @Test(arguments: [("photos", "google-pixel-12mp-gps.jpg", 4.0 / 3.0),
                      ("photos", "iphone6plus-portrait-8mp-gps.jpg", 3.0 / 4.0),
                      ("formats", "jpeg-ultrahdr-gainmap-4k.jpg", 16.0 / 9.0),
                      ("photos", "blackberry-z10-orientation6.jpg", 9.0 / 16.0),
                      ("photos", "nokia83-wide-21x9-gps.jpg", 4608.0 / 1976.0)])
    func thePlaceholderDecodesToThePhotosAspect(folder: String, name: String, aspect: Double) throws {
        for grid in ["3", "5"] {
            let thumbnail = try render(TestFiles.corpusPath(folder, name), grid: grid, format: nil, side: Placeholders.side).get()
            #expect(thumbnail.width == thumbnail.height)
            let placeholder = try #require(thumbnail.placeholder)
            let hash = try ThumbHash.encode(width: placeholder.width, height: placeholder.height, rgba: placeholder.rgba)
            let decoded = try #require(ThumbHash.decode(hash))
            let ratio = Double(decoded.width) / Double(decoded.height)
            #expect(abs(ratio / aspect - 1) <= 0.10, "\(name) grid \(grid): decodes \(decoded.width)x\(decoded.height), the photo is \(aspect)")
        }
    }
}

/// ThumbHash's limit, as the server's `Placeholders.side`.
private enum Placeholders {
    static let side = ThumbHash.maximumSide
}
