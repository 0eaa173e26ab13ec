import Foundation
import Testing
import ThumbHash

/// ThumbHash against vectors from PyPI's thumbhash-python (Tests/Scripts/thumbhash-vectors.py,
/// Tests/Fixtures/thumbhash/): the same RGBA, hashed by both. The implementations may differ
/// where a value rounds from a tie (thumbhash-python rounds halves to even, the reference and
/// ours up) and so by 1 on an AC value; decoded previews are compared pixel by pixel.
@Suite struct ThumbHashVectorTests {
    struct Vector {
        var name: String, width: Int, height: Int, hash: [UInt8]
        /// l_dc, p_dc, q_dc, l_scale, p_scale, q_scale, a_dc, a_scale before rounding.
        var unrounded: [Double]
        var previewWidth: Int, previewHeight: Int
        var rgba: [UInt8] { Self.file(name + ".rgba") }
        var preview: [UInt8] { Self.file(name + ".preview.rgba") }

        static let directory: String = {
            var url = URL(fileURLWithPath: #filePath)
            while !FileManager.default.fileExists(atPath: url.appendingPathComponent("Package.swift").path) {
                url.deleteLastPathComponent()
            }
            return url.path + "/Tests/Fixtures/thumbhash"
        }()

        static func file(_ name: String) -> [UInt8] {
            [UInt8](FileManager.default.contents(atPath: directory + "/" + name) ?? Data())
        }

        static let all: [Vector] = {
            let text = String(decoding: file("vectors.tsv"), as: UTF8.self)
            return text.split(separator: "\n").dropFirst().map { line in
                let f = line.split(separator: "\t", omittingEmptySubsequences: false).map(String.init)
                return Vector(name: f[0], width: Int(f[1])!, height: Int(f[2])!,
                              hash: [UInt8](Data(base64Encoded: f[3])!),
                              unrounded: f[4...11].map { Double($0)! },
                              previewWidth: Int(f[12])!, previewHeight: Int(f[13])!)
            }
        }()
    }

    /// A header field: where it sits in the 24+16 bits (and the alpha byte), and how its value
    /// was scaled before rounding (`offset + factor * value`, nil for flags and counts).
    struct Field {
        var name: String, byte: Int, shift: Int, bits: Int
        var unrounded: Int?, offset = 0.0, factor = 1.0

        func value(_ hash: [UInt8]) -> Int {
            let word = Int(hash[byte]) | (byte + 1 < hash.count ? Int(hash[byte + 1]) << 8 : 0)
                | (byte + 2 < hash.count ? Int(hash[byte + 2]) << 16 : 0)
            return (word >> shift) & (1 << bits - 1)
        }
    }

    static let header24 = [
        Field(name: "l_dc", byte: 0, shift: 0, bits: 6, unrounded: 0, factor: 63),
        Field(name: "p_dc", byte: 0, shift: 6, bits: 6, unrounded: 1, offset: 31.5, factor: 31.5),
        Field(name: "q_dc", byte: 0, shift: 12, bits: 6, unrounded: 2, offset: 31.5, factor: 31.5),
        Field(name: "l_scale", byte: 0, shift: 18, bits: 5, unrounded: 3, factor: 31),
        Field(name: "has_alpha", byte: 0, shift: 23, bits: 1),
        Field(name: "l_count", byte: 3, shift: 0, bits: 3),
        Field(name: "p_scale", byte: 3, shift: 3, bits: 6, unrounded: 4, factor: 63),
        Field(name: "q_scale", byte: 3, shift: 9, bits: 6, unrounded: 5, factor: 63),
        Field(name: "is_landscape", byte: 3, shift: 15, bits: 1),
    ]
    static let alphaByte = [
        Field(name: "a_dc", byte: 5, shift: 0, bits: 4, unrounded: 6, factor: 15),
        Field(name: "a_scale", byte: 5, shift: 4, bits: 4, unrounded: 7, factor: 15),
    ]

    @Test func vectorsAreThere() {
        #expect(Vector.all.count == 12)
        #expect(Vector.all.allSatisfy { $0.rgba.count == $0.width * $0.height * 4 })
        #expect(Vector.all.allSatisfy { $0.preview.count == $0.previewWidth * $0.previewHeight * 4 })
    }

    @Test(arguments: Vector.all.map(\.name))
    func headerMatchesExceptTies(name: String) throws {
        let vector = try #require(Vector.all.first { $0.name == name })
        let ours = try ThumbHash.encode(width: vector.width, height: vector.height, rgba: vector.rgba)
        #expect(ours.count == vector.hash.count)
        #expect(ours.count <= 25)
        let hasAlpha = vector.hash[2] & 0x80 != 0
        for field in Self.header24 + (hasAlpha ? Self.alphaByte : []) {
            let mine = field.value(ours), theirs = field.value(vector.hash)
            if mine == theirs { continue }
            // Only a tie may round either way: x.5 exactly, before rounding.
            let index = try #require(field.unrounded, "\(name): \(field.name) \(mine) != \(theirs)")
            let scaled = field.offset + field.factor * vector.unrounded[index]
            #expect(abs(scaled - scaled.rounded(.down) - 0.5) < 1e-9 && abs(mine - theirs) == 1,
                    "\(name): \(field.name) \(mine) != \(theirs) from \(scaled), not a tie")
        }
    }

    @Test(arguments: Vector.all.map(\.name))
    func acValuesWithinOne(name: String) throws {
        let vector = try #require(Vector.all.first { $0.name == name })
        let ours = try ThumbHash.encode(width: vector.width, height: vector.height, rgba: vector.rgba)
        let start = vector.hash[2] & 0x80 != 0 ? 6 : 5
        try #require(ours.count == vector.hash.count)
        for index in start..<ours.count {
            for shift in [0, 4] {
                let mine = Int(ours[index] >> shift) & 15, theirs = Int(vector.hash[index] >> shift) & 15
                #expect(abs(mine - theirs) <= 1, "\(name): AC nibble at byte \(index)<<\(shift): \(mine) vs \(theirs)")
            }
        }
    }

    /// Their hash through our decoder at their preview's size: the pixels of theirs, to 1 level
    /// (the same arithmetic, rounded once each way).
    @Test(arguments: Vector.all.map(\.name))
    func decodesTheirHashToTheirPreview(name: String) throws {
        let vector = try #require(Vector.all.first { $0.name == name })
        let image = try #require(ThumbHash.decode(vector.hash, width: vector.previewWidth, height: vector.previewHeight))
        #expect(image.rgba.count == vector.preview.count)
        let worst = zip(image.rgba, vector.preview).map { abs(Int($0) - Int($1)) }.max() ?? 0
        #expect(worst <= 1, "\(name): a channel differs by \(worst) levels")
    }

    /// Our own hash, decoded, against their preview: the same picture, but for what an AC value
    /// off by one moves (under a 15th of a term's scale).
    @Test(arguments: Vector.all.map(\.name))
    func ourHashDecodesToTheirPreview(name: String) throws {
        let vector = try #require(Vector.all.first { $0.name == name })
        let ours = try ThumbHash.encode(width: vector.width, height: vector.height, rgba: vector.rgba)
        let image = try #require(ThumbHash.decode(ours, width: vector.previewWidth, height: vector.previewHeight))
        let differences = zip(image.rgba, vector.preview).map { abs(Int($0) - Int($1)) }
        let mean = Double(differences.reduce(0, +)) / Double(differences.count)
        #expect((differences.max() ?? 0) <= 4, "\(name): a channel differs by \(differences.max() ?? 0) levels")
        #expect(mean <= 0.5, "\(name): channels differ by \(mean) levels on average")
    }

    /// The reference sizes its preview 32 px on the longer side of the L counts' ratio.
    @Test func defaultPreviewSize() throws {
        let landscape = try #require(Vector.all.first { $0.name == "landscape-1" })
        let image = try #require(ThumbHash.decode(landscape.hash))
        // 100x67: lx 7, ly round(7 * 67 / 100) = 5, so 32 x round(32 / 1.4) = 23.
        #expect((image.width, image.height) == (32, 23))
        #expect(ThumbHash.approximateAspectRatio(landscape.hash) == 7.0 / 5.0)
    }
}
