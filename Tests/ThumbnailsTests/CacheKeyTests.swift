import Rendering
import Testing
@testable import Thumbnails

@Suite struct CacheKeyTests {
    let source = SourceIdentity(size: 1234, modifiedNanoseconds: 1_700_000_000_123_456_789)

    func key(_ path: String = "2024/a.jpg", source: SourceIdentity? = nil, grid: Int = 1,
             format: FormatChoice = .automatic, quality: Int = 80) -> CacheKey {
        CacheKey(assetPath: path, source: source ?? self.source, spec: GridSpec.defaults[grid], format: format, quality: quality)
    }

    /// The key takes the asset path as the disk spells it (`Library.resolve` gives the disk's
    /// spelling for an NFC and an NFD URL alike, so one file is still one entry): two files
    /// whose names differ only in Unicode form are two keys, even with the same size and mtime.
    @Test func nfcAndNfdSpellingsAreTwoKeysAndEqualityIsByteForByte() {
        let nfc = "서울 야경.jpg".precomposedStringWithCanonicalMapping
        let nfd = "서울 야경.jpg".decomposedStringWithCanonicalMapping
        #expect(Array(nfc.utf8) != Array(nfd.utf8))
        #expect(key(nfc).digest != key(nfd).digest)
        #expect(key(nfc) != key(nfd))
        #expect(Set([key(nfc), key(nfd)]).count == 2)
        #expect(key(nfd).assetPath.bytes.elementsEqual(nfd.utf8))
        #expect(key(nfd) == key(nfd))
    }

    /// A path that is not UTF-8 is keyed by its bytes, apart from any UTF-8 name.
    @Test func aPathThatIsNotUTF8IsKeyedByItsBytes() {
        let spec = GridSpec.defaults[1]
        func latin1(_ byte: UInt8) -> CacheKey {
            CacheKey(asset: DiskPath(bytes: Array("caf".utf8) + [byte] + Array(".jpg".utf8)), source: source, spec: spec,
                     format: .automatic, quality: 80)
        }
        #expect(latin1(0xE9).digest != latin1(0xE8).digest)
        #expect(latin1(0xE9).digest == latin1(0xE9).digest)
        #expect(latin1(0xE9).digest != key("caf%E9.jpg").digest)
        #expect(latin1(0xE9).digest != key("caf\u{FFFD}.jpg").digest)
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
        #expect(key().etag == "W/\"\(base)\"")
    }
}
