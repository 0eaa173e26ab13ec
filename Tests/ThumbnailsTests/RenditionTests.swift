import Rendering
import Testing
@testable import Thumbnails

/// What decides a thumbnail's pixels has one home (`Rendition`): the cache key and the `v`
/// token both change with each of its fields, and their texts stay as disk entries and
/// listed URLs have spelled them.
@Suite struct RenditionTests {
    let grid3 = GridSpec(name: "3", width: 393, height: 393, fit: .cover)
    let source = SourceIdentity(size: 2_000_000, modifiedNanoseconds: 1_700_000_000_123_456_789)

    func key(_ spec: GridSpec, quality: Int = 80, path: String = "2024/a.jpg") -> CacheKey {
        CacheKey(assetPath: path, source: source, spec: spec, format: .automatic, quality: quality)
    }

    @Test func theTextsAreAsDiskEntriesAndURLsHaveAlwaysSpelledThem() {
        // Changing either would orphan every disk entry or change every listed URL.
        #expect(key(grid3).canonical == "v1|3:393x393:cover|auto|q80|2000000|1700000000123456789|2024/a.jpg")
        #expect(Rendition(spec: grid3, quality: 80).tokenText == "v1|393x393:cover|q80")
    }

    /// Posters changed (non-square pixels stretched to their display aspect, issue 31 item 4):
    /// a video's key and token carry the poster version, so a cached square poster is never
    /// served again under an `immutable` URL; a photo's stay as they were.
    @Test func aVideosKeyAndTokenCarryThePosterVersion() {
        #expect(key(grid3, path: "2024/a.mp4").canonical == "v1p2|3:393x393:cover|auto|q80|2000000|1700000000123456789|2024/a.mp4")
        #expect(key(grid3, path: "2024/a.MOV").rendition.videoPoster)
        #expect(Rendition(spec: grid3, quality: 80, videoPoster: true).tokenText == "v1p2|393x393:cover|q80")
        #expect(ThumbnailVersion.token(for: key(grid3, path: "2024/a.mp4"))
                == ThumbnailVersion(spec: grid3, quality: 80, videoPoster: true).token(for: source))
    }

    @Test func everyFieldThatDecidesPixelsChangesBothTheKeyAndTheToken() {
        let base = key(grid3)
        let variants: [String: CacheKey] = [
            "spec.width": key(GridSpec(name: "3", width: 392, height: 393, fit: .cover)),
            "spec.height": key(GridSpec(name: "3", width: 393, height: 392, fit: .cover)),
            "spec.fit": key(GridSpec(name: "3", width: 393, height: 393, fit: .contain)),
            "quality": key(grid3, quality: 81),
            // A video's poster (by its path, as the listing judges it too): posterVersion.
            "videoPoster": key(grid3, path: "2024/a.mp4"),
        ]
        for (field, variant) in variants {
            #expect(variant.digest != base.digest, "\(field) does not change the cache key")
            #expect(ThumbnailVersion.token(for: variant) != ThumbnailVersion.token(for: base),
                    "\(field) does not change the v token")
        }
        // A stored field added to Rendition must be varied above (and so reach both texts).
        let fields = Mirror(reflecting: Rendition(spec: grid3, quality: 80)).children.compactMap(\.label)
        #expect(fields == ["spec", "quality", "videoPoster"])
        let specFields = Mirror(reflecting: grid3).children.compactMap(\.label)
        #expect(specFields == ["name", "width", "height", "fit"])   // the name is a label, not pixels
    }

    @Test func theNameAndFormatPickTheKeyNotTheToken() {
        let renamed = key(GridSpec(name: "three", width: 393, height: 393, fit: .cover))
        #expect(renamed.digest != key(grid3).digest)
        #expect(ThumbnailVersion.token(for: renamed) == ThumbnailVersion.token(for: key(grid3)))
    }
}
