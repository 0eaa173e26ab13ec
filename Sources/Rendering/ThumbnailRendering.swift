/// What turns a source into a thumbnail: `Renderer` (libvips) in a server; a stand-in whose
/// renders a test holds and releases, to check coalescing, deadlines and scheduling without
/// timing luck (as Nuke tests its pipeline with a loader whose queue the test suspends).
public protocol ThumbnailRendering: Sendable {
    /// Renders `request`; blocking, called on a render worker thread, from several at once.
    /// - Throws: `RenderError`, whose kind decides the status (docs/API.md, "Errors").
    func render(_ request: RenderRequest) throws(RenderError) -> Thumbnail

    /// Renders `request`'s grid from `donor`, a larger cached thumbnail of the same source
    /// (`Renderer.render(from:_:)`); blocking, as `render`. A failure makes the pipeline render
    /// from the source instead.
    func render(from donor: Thumbnail, _ request: RenderRequest) throws(RenderError) -> Thumbnail
}

extension ThumbnailRendering {
    /// Stand-ins derive nothing: every render is from the source.
    public func render(from donor: Thumbnail, _ request: RenderRequest) throws(RenderError) -> Thumbnail {
        throw RenderError(kind: .internalFailure, message: "this renderer derives no thumbnails")
    }
}

extension Renderer: ThumbnailRendering {}
