import Rendering
import Testing
@testable import Thumbnails

@Suite struct CacheKeyTests {
    let source = SourceIdentity(size: 1234, modifiedNanoseconds: 1_700_000_000_123_456_789)

    func key(_ path: String = "2024/a.jpg", source: SourceIdentity? = nil, grid: Int = 1,
             format: FormatChoice = .automatic, quality: Int = 80) -> CacheKey {
        CacheKey(assetPath: path, source: source ?? self.source, spec: GridSpec.defaults[grid], format: format, quality: quality)
    }

    @Test func nfcAndNfdSpellingsAreOneKey() {
        let nfc = "서울 야경.jpg".precomposedStringWithCanonicalMapping
        let nfd = "서울 야경.jpg".decomposedStringWithCanonicalMapping
        #expect(Array(nfc.utf8) != Array(nfd.utf8))
        #expect(key(nfc).digest == key(nfd).digest)
        #expect(key(nfd).assetPath.utf8.elementsEqual(nfc.utf8))
    }

    @Test func everyFieldChangesTheDigest() {
        let base = key().digest
        #expect(base.count == 32)
        #expect(key("2024/b.jpg").digest != base)
        #expect(key(source: SourceIdentity(size: 1235, modifiedNanoseconds: source.modifiedNanoseconds)).digest != base)
        #expect(key(source: SourceIdentity(size: 1234, modifiedNanoseconds: source.modifiedNanoseconds + 1)).digest != base)
        #expect(key(grid: 2).digest != base)
        #expect(key(format: .webp).digest != base)
        #expect(key(quality: 81).digest != base)
        #expect(key().digest == base)
        #expect(key().etag == "\"\(base)\"")
    }
}
