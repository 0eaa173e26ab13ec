import Testing
import ThumbHash

/// ThumbHash's bytes worked out by hand from the specification (ThumbHash.swift's summary).
@Suite struct ThumbHashTests {
    /// A transparent pixel: every channel 0, so every AC term is exactly 0 and no scale
    /// applies. Header 24: L DC 0, P and Q DC round(31.5) = 32, L scale 0, alpha: 0x820800.
    /// Header 16: L count 5 (alpha), not landscape. Alpha byte 0. AC terms: L 14 (5x5 triangle
    /// less DC), P 5, Q 5, A 14 = 38 nibbles, 19 bytes of 0: 25 bytes, the most a hash holds.
    @Test func transparentPixel() throws {
        let hash = try ThumbHash.encode(width: 1, height: 1, rgba: [0, 0, 0, 0])
        #expect(hash == [0x00, 0x08, 0x82, 0x05, 0x00, 0x00] + [UInt8](repeating: 0, count: 19))
    }

    /// 100x30 transparent: landscape; L counts 5 across, round(5 * 30 / 100) = 2 down (1.5, a
    /// tie, rounds up); header 16 is 2 | 1 << 15. AC terms: L 5x3 (the decoder's minimum 3)
    /// triangle, cx * 3 < 5 * (3 - cy): 5 + 4 + 2 = 11, less DC = 10; P 5, Q 5, A 14 = 34
    /// nibbles, 17 bytes.
    @Test func landscapeFlagAndCount() throws {
        let hash = try ThumbHash.encode(width: 100, height: 30, rgba: [UInt8](repeating: 0, count: 100 * 30 * 4))
        #expect(hash.count == 6 + 17)
        #expect(Array(hash[0..<6]) == [0x00, 0x08, 0x82, 0x02, 0x80, 0x00])
        #expect(ThumbHash.approximateAspectRatio(hash) == 2.5)
        let preview = try #require(ThumbHash.decode(hash))
        // 32 x round(32 / 2.5) = 13, every pixel the same: P and Q DC 32 / 31.5 - 1 = 1/63,
        // so b = 0 - 2/3 * 1/63 = -2/189 (shown as 0), r = (0 + 2/189 + 1/63) / 2 = 5/378,
        // 255 * 5/378 = 3.37 -> 3; g = r - q = -1/378 -> 0; alpha 0.
        #expect((preview.width, preview.height) == (32, 13))
        #expect(preview.rgba == [[UInt8]](repeating: [3, 0, 0, 0], count: 32 * 13).flatMap { $0 })
    }

    /// An opaque solid colour decodes to itself: the DC terms carry it, to the 6-bit steps.
    @Test func solidColourDecodesToItself() throws {
        let rgba = [[UInt8]](repeating: [200, 100, 50, 255], count: 40 * 40).flatMap { $0 }
        let hash = try ThumbHash.encode(width: 40, height: 40, rgba: rgba)
        #expect(hash[2] & 0x80 == 0)
        let preview = try #require(ThumbHash.decode(hash))
        #expect((preview.width, preview.height) == (32, 32))
        // L, P and Q come back within half a 6-bit step each: a few levels of 255.
        for pixel in stride(from: 0, to: preview.rgba.count, by: 4) {
            #expect(abs(Int(preview.rgba[pixel]) - 200) <= 6)
            #expect(abs(Int(preview.rgba[pixel + 1]) - 100) <= 6)
            #expect(abs(Int(preview.rgba[pixel + 2]) - 50) <= 6)
            #expect(preview.rgba[pixel + 3] == 255)
        }
    }

    @Test func refusesWhatDoesNotFit() {
        #expect(throws: ThumbHash.Failure.size(width: 101, height: 1)) {
            try ThumbHash.encode(width: 101, height: 1, rgba: [UInt8](repeating: 0, count: 404))
        }
        #expect(throws: ThumbHash.Failure.size(width: 0, height: 0)) {
            try ThumbHash.encode(width: 0, height: 0, rgba: [])
        }
        #expect(throws: ThumbHash.Failure.byteCount(expected: 16, actual: 12)) {
            try ThumbHash.encode(width: 2, height: 2, rgba: [UInt8](repeating: 0, count: 12))
        }
    }

    @Test func refusesShortHashes() {
        #expect(ThumbHash.decode([0x00, 0x08, 0x82, 0x05]) == nil)
        #expect(ThumbHash.decode([0x00, 0x08, 0x82, 0x05, 0x00]) == nil)   // alpha byte missing
        #expect(ThumbHash.decode([0x00, 0x08, 0x82, 0x05, 0x00, 0x00, 0x00]) == nil)   // AC terms missing
    }
}
