#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

extension ThumbHash {
    /// A decoded placeholder: 8-bit RGBA, row by row, not premultiplied.
    public struct Image: Equatable, Sendable {
        /// px
        public var width: Int
        /// px
        public var height: Int
        /// `width * height * 4` bytes.
        public var rgba: [UInt8]
    }

    /// The aspect ratio (width / height) the hash keeps, from its L term counts: about the
    /// encoded image's, to a seventh (a fifth with alpha). Nil for a hash under 5 bytes.
    public static func approximateAspectRatio(_ hash: [UInt8]) -> Double? {
        guard hash.count >= 5 else { return nil }
        let (lx, ly) = lCounts(hash)
        return Double(lx) / Double(ly)
    }

    /// The L term counts across and down as encoded (before the decoder's minimum of 3).
    static func lCounts(_ hash: [UInt8]) -> (lx: Int, ly: Int) {
        let hasAlpha = hash[2] & 0x80 != 0, isLandscape = hash[4] & 0x80 != 0
        let count = Int(hash[3] & 7), longer = hasAlpha ? 5 : 7
        return isLandscape ? (longer, count) : (count, longer)
    }

    /// Decodes a hash into a blurred image, by the reference's `thumbHashToRGBA` (P and Q
    /// boosted 1.25x against the quantisation's loss of saturation), with each value rounded
    /// to the nearest (the reference truncates, so its pixels may be 1 darker).
    /// - Parameters:
    ///   - width, height: px; nil: as the reference, 32 px on the longer side of the
    ///     approximate aspect ratio.
    /// - Returns: nil for a hash too short for its own header (under 5 bytes, 6 with alpha, or
    ///   fewer AC terms than its counts call for) or a size under 1 px.
    public static func decode(_ hash: [UInt8], width: Int? = nil, height: Int? = nil) -> Image? {
        guard let ratio = approximateAspectRatio(hash), ratio > 0 else { return nil }
        let header24 = Int(hash[0]) | Int(hash[1]) << 8 | Int(hash[2]) << 16
        let header16 = Int(hash[3]) | Int(hash[4]) << 8
        let lDC = Double(header24 & 63) / 63
        let pDC = Double((header24 >> 6) & 63) / 31.5 - 1
        let qDC = Double((header24 >> 12) & 63) / 31.5 - 1
        let lScale = Double((header24 >> 18) & 31) / 31
        let hasAlpha = header24 >> 23 != 0
        let pScale = Double((header16 >> 3) & 63) / 63
        let qScale = Double((header16 >> 9) & 63) / 63
        let counts = lCounts(hash)
        let lx = max(3, counts.lx), ly = max(3, counts.ly)
        guard !hasAlpha || hash.count >= 6 else { return nil }
        let aDC = hasAlpha ? Double(hash[5] & 15) / 15 : 1
        let aScale = hasAlpha ? Double(hash[5] >> 4) / 15 : 0

        var index = 0
        let start = hasAlpha ? 6 : 5
        func channel(_ nx: Int, _ ny: Int, _ scale: Double) -> [Double]? {
            var ac: [Double] = []
            for cy in 0..<ny {
                var cx = cy > 0 ? 0 : 1
                while cx * ny < nx * (ny - cy) {
                    let byte = start + (index >> 1)
                    guard byte < hash.count else { return nil }
                    let nibble = (hash[byte] >> ((index & 1) << 2)) & 15
                    ac.append((Double(nibble) / 7.5 - 1) * scale)
                    index += 1
                    cx += 1
                }
            }
            return ac
        }
        guard let lAC = channel(lx, ly, lScale), let pAC = channel(3, 3, pScale * 1.25),
              let qAC = channel(3, 3, qScale * 1.25) else { return nil }
        let aAC = hasAlpha ? channel(5, 5, aScale) : []
        guard let aAC else { return nil }

        let w = width ?? Int(round(ratio > 1 ? 32 : 32 * ratio))
        let h = height ?? Int(round(ratio > 1 ? 32 / ratio : 32))
        guard w > 0, h > 0 else { return nil }
        var rgba = [UInt8](repeating: 0, count: w * h * 4)
        var fx = [Double](repeating: 0, count: max(lx, hasAlpha ? 5 : 3))
        var fy = [Double](repeating: 0, count: max(ly, hasAlpha ? 5 : 3))
        var i = 0
        for y in 0..<h {
            for x in 0..<w {
                var l = lDC, p = pDC, q = qDC, a = aDC
                for cx in fx.indices { fx[cx] = cos(Double.pi / Double(w) * (Double(x) + 0.5) * Double(cx)) }
                for cy in fy.indices { fy[cy] = cos(Double.pi / Double(h) * (Double(y) + 0.5) * Double(cy)) }
                var j = 0
                for cy in 0..<ly {
                    var cx = cy > 0 ? 0 : 1
                    let fy2 = fy[cy] * 2
                    while cx * ly < lx * (ly - cy) {
                        l += lAC[j] * fx[cx] * fy2
                        j += 1
                        cx += 1
                    }
                }
                j = 0
                for cy in 0..<3 {
                    let fy2 = fy[cy] * 2
                    for cx in (cy > 0 ? 0 : 1)..<(3 - cy) {
                        let f = fx[cx] * fy2
                        p += pAC[j] * f
                        q += qAC[j] * f
                        j += 1
                    }
                }
                if hasAlpha {
                    j = 0
                    for cy in 0..<5 {
                        let fy2 = fy[cy] * 2
                        for cx in (cy > 0 ? 0 : 1)..<(5 - cy) {
                            a += aAC[j] * fx[cx] * fy2
                            j += 1
                        }
                    }
                }
                let b = l - 2.0 / 3 * p
                let r = (3 * l - b + q) / 2
                let g = r - q
                for (offset, value) in [r, g, b, a].enumerated() {
                    rgba[i + offset] = UInt8(Self.round(255 * min(1, max(0, value))))
                }
                i += 4
            }
        }
        return Image(width: w, height: h, rgba: rgba)
    }
}
