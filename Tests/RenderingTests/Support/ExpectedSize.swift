import Rendering

/// The thumbnail size docs/API.md's "grid" rules give, worked out here in integers, apart from
/// `GridSpec.outputSize`, so the two can be checked against each other.
///
/// - `contain`: a source that fits the box keeps its size; otherwise scale by the limiting
///   axis, which then equals the box, and round the other side half up.
/// - `cover`: the box; when either side of the source is shorter than the box, a centre square
///   of the shortest side.
func expectedSize(_ spec: GridSpec, displayWidth w: Int, displayHeight h: Int)
    -> (width: Int, height: Int)
{
    let (boxWidth, boxHeight) = (spec.width, spec.height)
    switch spec.fit {
    case .contain:
        if w <= boxWidth && h <= boxHeight { return (w, h) }
        if w * boxHeight >= h * boxWidth {   // w/boxWidth ≥ h/boxHeight: width limits
            return (boxWidth, max(1, (2 * h * boxWidth + w) / (2 * w)))
        }
        return (max(1, (2 * w * boxHeight + h) / (2 * h)), boxHeight)
    case .cover:
        if w < boxWidth || h < boxHeight {
            let side = min(w, h, boxWidth, boxHeight)
            return (side, side)
        }
        return (boxWidth, boxHeight)
    }
}

extension GridSpec {
    /// The default grids by name: `grid("3")`.
    static func grid(_ name: String) -> GridSpec {
        defaults.first { $0.name == name }!
    }
}
