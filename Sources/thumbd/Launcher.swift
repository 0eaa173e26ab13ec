import Dispatch
import Foundation
import Rendering
import ThumbServer

/// Reads the configuration, starts the server and installs the SIGINT/SIGTERM handlers.
/// Nonisolated on purpose: Dispatch handlers created in top-level code would be main-actor
/// closures and trap when run on other queues (shared/DISPATCH.md).
enum Launcher {
    nonisolated(unsafe) static var signalSources: [any DispatchSourceSignal] = []

    static func run() {
        Vips.limitMallocArenas()
        let outcome: ConfigLoader.Outcome
        do {
            outcome = try ConfigLoader.load(arguments: Array(CommandLine.arguments.dropFirst()),
                                            environment: ProcessInfo.processInfo.environment)
        } catch {
            fail(error.description)
        }
        let config: Config
        switch outcome {
        case .help(let text):
            FileHandle.standardOutput.write(Data(text.utf8))
            exit(0)
        case .run(let c):
            config = c
        }
        let thumbd: Thumbd
        let port: UInt16
        do {
            thumbd = try Thumbd(config: config)
            port = try thumbd.start()
        } catch {
            fail(error.description)
        }
        FileHandle.standardOutput.write(Data(("thumbd: serving \(thumbd.service.library.root) on http://\(config.host):\(port)/ "
              + "(cache \(config.cacheDirectory)); try /thumbnails/3/<photo> and /stats\n").utf8))
        for sig in [SIGINT, SIGTERM] {
            signal(sig, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: sig, queue: .global())
            source.setEventHandler {
                FileHandle.standardOutput.write(Data("thumbd: stopping\n".utf8))
                        thumbd.shutdown { exit(0) }
            }
            source.resume()
            signalSources.append(source)
        }
    }

    static func fail(_ message: String) -> Never {
        FileHandle.standardError.write(Data("thumbd: \(message)\n".utf8))
        exit(2)
    }
}
