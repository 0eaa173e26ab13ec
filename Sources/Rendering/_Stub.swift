public enum Vips { public static func start(concurrency: Int = 1) throws(RenderError) {} }
public struct RenderRequest: Sendable {
    public var sourcePath: String
    public var spec: GridSpec
    public var format: ImageFormat?
    public var quality: Int
    public var maxPixels: Int
    public init(sourcePath: String, spec: GridSpec, format: ImageFormat? = nil, quality: Int = 80, maxPixels: Int = 100_000_000) {
        self.sourcePath = sourcePath; self.spec = spec; self.format = format; self.quality = quality; self.maxPixels = maxPixels
    }
}
public struct Thumbnail: Sendable {
    public let bytes: [UInt8]; public let format: ImageFormat; public let width: Int; public let height: Int
    public init(bytes: [UInt8], format: ImageFormat, width: Int, height: Int) { self.bytes = bytes; self.format = format; self.width = width; self.height = height }
}
public struct RenderError: Error, Sendable, Equatable, CustomStringConvertible {
    public enum Kind: Sendable, Equatable { case sourceNotFound, unsupportedSource, sourceTooLarge, internalFailure }
    public var kind: Kind
    public var message: String
    public init(kind: Kind, message: String) { self.kind = kind; self.message = message }
    public var description: String { message }
}
public struct Renderer: Sendable {
    public init() {}
    public func render(_ request: RenderRequest) throws(RenderError) -> Thumbnail { fatalError() }
}
public struct SourceInfo: Sendable, Equatable {
    public var width: Int, height: Int, orientation: Int, displayWidth: Int, displayHeight: Int, pages: Int
    public var hasAlpha: Bool
    public var loader: String
    public var dateTimeOriginal: String?
    public var offsetTimeOriginal: String?
}
extension Renderer { public func probe(path: String) throws(RenderError) -> SourceInfo { fatalError() } }
