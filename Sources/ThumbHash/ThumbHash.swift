#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// ThumbHash, Evan Wallace's image placeholder (<https://evanw.github.io/thumbhash/>, the
/// JavaScript reference `thumbhash.js` in github.com/evanw/thumbhash): an RGBA image of at most
/// 100x100 px in 5 to 25 bytes, which decodes to a blurred image of about its aspect ratio.
///
/// The image is turned into four channels, L (luminance), P (yellow-blue), Q (red-green) and A
/// (alpha), after compositing it onto its own average colour; each channel is reduced to the
/// lowest terms of its 2-D DCT (L up to 7 per axis, 5 with alpha; P and Q 3; A 5). The hash is a
/// 24-bit header (L, P, Q DC at 6 bits, L scale at 5, the alpha flag), a 16-bit one (the L
/// count of the shorter axis at 3 bits, P and Q scales at 6, the landscape flag), with alpha an
/// alpha byte (A DC and scale, 4 bits each), then every AC term at 4 bits, low nibble first.
/// Rounding is the reference's `Math.round` (halves up).
public enum ThumbHash {
    /// Why an image cannot be encoded.
    public enum Failure: Error, Equatable, CustomStringConvertible {
        /// A side is under 1 px or over 100 px (the reference refuses over 100x100).
        case size(width: Int, height: Int)
        /// `rgba` holds another count of bytes than `width * height * 4`.
        case byteCount(expected: Int, actual: Int)

        public var description: String {
            switch self {
            case .size(let width, let height): "\(width)x\(height) px does not fit in 1x1...100x100"
            case .byteCount(let expected, let actual): "\(actual) bytes of RGBA, not \(expected)"
            }
        }
    }

    /// The largest side an encoded image may have, px (the reference's limit).
    public static let maximumSide = 100

    /// The hash of an image: 5 to 25 bytes.
    /// - Parameters:
    ///   - width: px, 1...100.
    ///   - height: px, 1...100.
    ///   - rgba: 8-bit RGBA, row by row, not premultiplied, `width * height * 4` bytes.
    /// - Throws: `Failure` for a size outside 1...100 or a byte count that does not match.
    public static func encode(width w: Int, height h: Int, rgba: [UInt8]) throws(Failure) -> [UInt8] {
        guard (1...maximumSide).contains(w), (1...maximumSide).contains(h) else { throw .size(width: w, height: h) }
        guard rgba.count == w * h * 4 else { throw .byteCount(expected: w * h * 4, actual: rgba.count) }
        let pixels = w * h

        // The average colour, weighted by alpha.
        var averageR = 0.0, averageG = 0.0, averageB = 0.0, averageA = 0.0
        for i in 0..<pixels {
            let alpha = Double(rgba[i * 4 + 3]) / 255
            averageR += alpha / 255 * Double(rgba[i * 4])
            averageG += alpha / 255 * Double(rgba[i * 4 + 1])
            averageB += alpha / 255 * Double(rgba[i * 4 + 2])
            averageA += alpha
        }
        if averageA > 0 {
            averageR /= averageA
            averageG /= averageA
            averageB /= averageA
        }

        let hasAlpha = averageA < Double(pixels)
        let lLimit = hasAlpha ? 5.0 : 7.0   // fewer luminance terms when alpha needs room
        let longer = Double(max(w, h))
        let lx = max(1, Int(round(lLimit * Double(w) / longer)))
        let ly = max(1, Int(round(lLimit * Double(h) / longer)))

        // RGBA to LPQA, composited onto the average colour.
        var l = [Double](repeating: 0, count: pixels), p = l, q = l, a = l
        for i in 0..<pixels {
            let alpha = Double(rgba[i * 4 + 3]) / 255
            let r = averageR * (1 - alpha) + alpha / 255 * Double(rgba[i * 4])
            let g = averageG * (1 - alpha) + alpha / 255 * Double(rgba[i * 4 + 1])
            let b = averageB * (1 - alpha) + alpha / 255 * Double(rgba[i * 4 + 2])
            l[i] = (r + g + b) / 3
            p[i] = (r + g) / 2 - b
            q[i] = r - g
            a[i] = alpha
        }

        let lChannel = Channel(encoding: l, width: w, height: h, nx: max(3, lx), ny: max(3, ly))
        let pChannel = Channel(encoding: p, width: w, height: h, nx: 3, ny: 3)
        let qChannel = Channel(encoding: q, width: w, height: h, nx: 3, ny: 3)
        let aChannel = hasAlpha ? Channel(encoding: a, width: w, height: h, nx: 5, ny: 5) : nil

        let isLandscape = w > h
        let header24 = round(63 * lChannel.dc) | round(31.5 + 31.5 * pChannel.dc) << 6
            | round(31.5 + 31.5 * qChannel.dc) << 12 | round(31 * lChannel.scale) << 18 | (hasAlpha ? 1 << 23 : 0)
        let header16 = (isLandscape ? ly : lx) | round(63 * pChannel.scale) << 3
            | round(63 * qChannel.scale) << 9 | (isLandscape ? 1 << 15 : 0)
        var hash: [UInt8] = [UInt8(header24 & 255), UInt8((header24 >> 8) & 255), UInt8(header24 >> 16),
                             UInt8(header16 & 255), UInt8(header16 >> 8)]
        if let aChannel { hash.append(UInt8(round(15 * aChannel.dc) | round(15 * aChannel.scale) << 4)) }

        let terms = [lChannel, pChannel, qChannel, aChannel].compactMap { $0 }.flatMap(\.ac)
        let start = hash.count
        hash += [UInt8](repeating: 0, count: (terms.count + 1) / 2)
        for (index, term) in terms.enumerated() {
            hash[start + (index >> 1)] |= UInt8(round(15 * term)) << ((index & 1) << 2)
        }
        return hash
    }

    /// `Math.round` of the reference: the nearest integer, halves up (toward +∞).
    static func round(_ value: Double) -> Int {
        Int(floor(value + 0.5))
    }

    /// One channel's DCT: its DC term, its AC terms scaled into 0...1 around 0.5, and the scale.
    struct Channel {
        var dc = 0.0, ac: [Double] = [], scale = 0.0

        /// The terms `cx, cy` with `cx * ny < nx * (ny - cy)` (a triangle of the lowest
        /// frequencies), row by row, as the reference orders them.
        init(encoding channel: [Double], width w: Int, height h: Int, nx: Int, ny: Int) {
            var fx = [Double](repeating: 0, count: w)
            for cy in 0..<ny {
                var cx = 0
                while cx * ny < nx * (ny - cy) {
                    var f = 0.0
                    for x in 0..<w { fx[x] = cos(Double.pi / Double(w) * Double(cx) * (Double(x) + 0.5)) }
                    // The reference's sum in its order, over buffer pointers: a debug build
                    // (the tests') checks no bounds and copies no array in the loop.
                    channel.withUnsafeBufferPointer { pixels in
                        fx.withUnsafeBufferPointer { fx in
                            for y in 0..<h {
                                let fy = cos(Double.pi / Double(h) * Double(cy) * (Double(y) + 0.5))
                                let row = pixels.baseAddress! + y * w
                                for x in 0..<w { f += row[x] * fx[x] * fy }
                            }
                        }
                    }
                    f /= Double(w * h)
                    if cx > 0 || cy > 0 {
                        ac.append(f)
                        scale = max(scale, abs(f))
                    } else {
                        dc = f
                    }
                    cx += 1
                }
            }
            if scale > 0 {
                ac = ac.map { 0.5 + 0.5 / scale * $0 }
            }
        }
    }
}
