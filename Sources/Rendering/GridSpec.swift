/// How a thumbnail fills its grid box (docs/API.md, "grid").
public enum Fit: String, Sendable, Hashable, Codable {
    /// Fit inside the box, aspect kept; touches the box on the limiting axis.
    case contain
    /// Fill the box and crop the overflow around the centre.
    case cover
}

/// One named thumbnail spec: the box a grid cell shows, in pixels.
/// Defaults (docs/API.md): `1` = 1179x2358 contain, `3` = 393x393 cover, `5` = 236x236 cover.
public struct GridSpec: Sendable, Hashable, Codable {
    /// The grid's name in URLs, e.g. `"3"`.
    public var name: String
    /// Box width, px (≥ 1).
    public var width: Int
    /// Box height, px (≥ 1).
    public var height: Int
    public var fit: Fit

    public init(name: String, width: Int, height: Int, fit: Fit) {
        self.name = name
        self.width = width
        self.height = height
        self.fit = fit
    }

    /// The three default grids of docs/API.md: a 393 pt phone at 3x (1179 px viewport).
    public static let defaults: [GridSpec] = [
        GridSpec(name: "1", width: 1179, height: 2358, fit: .contain),
        GridSpec(name: "3", width: 393, height: 393, fit: .cover),
        GridSpec(name: "5", width: 236, height: 236, fit: .cover),
    ]

    /// The size in px a source of `sourceWidth`x`sourceHeight` (as displayed, after orientation)
    /// gets under this spec, never enlarged (docs/API.md): `contain` scales by the limiting axis and
    /// keeps sources that already fit; `cover` gives the box, or a centre square of the shorter
    /// side when either side of the source is shorter than the box.
    public func outputSize(sourceWidth w: Int, sourceHeight h: Int) -> (width: Int, height: Int) {
        switch fit {
        case .contain:
            if w <= width && h <= height { return (w, h) }
            // Limiting axis: the one with the smaller scale factor.
            if w * height >= h * width {   // width-limited
                return (width, max(1, Int((Double(h) * Double(width) / Double(w)).rounded())))
            } else {
                return (max(1, Int((Double(w) * Double(height) / Double(h)).rounded())), height)
            }
        case .cover:
            if w < width || h < height {
                let side = min(w, h, width, height)
                return (side, side)
            }
            return (width, height)
        }
    }
}

/// An encoded output format (docs/API.md, "output").
public enum ImageFormat: String, Sendable, Hashable, Codable, CaseIterable {
    case jpeg, png, webp

    /// The media type for `Content-Type`.
    public var mediaType: String {
        switch self {
        case .jpeg: "image/jpeg"
        case .png: "image/png"
        case .webp: "image/webp"
        }
    }
}
