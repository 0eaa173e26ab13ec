import Foundation
public struct HTTPServerConfiguration: Sendable {
    public var host: String = "127.0.0.1"
    public var port: UInt16 = 8080
    public var backlog: Int32 = 1024
    public var maxRequestLineBytes: Int = 8192
    public var maxHeaderBytes: Int = 8192
    public var maxBodyBytes: Int = 1 << 20
    public var headerTimeout: Double = 10
    public var idleTimeout: Double = 75
    public var maxConnections: Int = 4096
    public var queueCount: Int = 2
    public var onExchange: (@Sendable (HTTPExchangeRecord) -> Void)? = nil
    public init() {}
}
public final class HTTPServer: Sendable {
    public init(configuration: HTTPServerConfiguration, responder: any HTTPResponder) {}
    public func start() throws -> UInt16 { fatalError() }
    public func shutdown(gracePeriod: Double, completion: @escaping @Sendable () -> Void) {}
    public var connectionCounts: (open: Int, total: Int) { (0, 0) }
}
