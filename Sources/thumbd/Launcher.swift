import Console
import Dispatch
import Foundation
import Rendering
import ThumbServer

/// Reads the configuration, sets the process up (`ProcessSetup`), installs the SIGINT/SIGTERM
/// SIGHUP (reload) and SIGUSR1 (reopen the access log) handlers and starts the server once `dispatchMain()` has taken over the main thread.
/// Nonisolated on purpose: Dispatch handlers created in top-level code would be main-actor
/// closures and trap when run on other queues (shared/DISPATCH.md).
enum Launcher {
    nonisolated(unsafe) static var signalSources: [any DispatchSourceSignal] = []

    static func run() {
        let arguments = Array(CommandLine.arguments.dropFirst())
        if arguments.first == "sign" { sign(Array(arguments.dropFirst())) }
        let outcome: ConfigLoader.Outcome
        do {
            outcome = try ConfigLoader.load(arguments: arguments, environment: ProcessInfo.processInfo.environment)
        } catch {
            fail(error.description)
        }
        let config: Config
        switch outcome {
        case .help(let text):
            Console.write(text, to: .standardOutput)
            exit(0)
        case .run(let c):
            config = c
        }
        let thumbd: Thumbd
        do {
            // Process-wide state first, here only (signals, limits, libvips: `ProcessSetup`).
            // The port is bound first, so a start that fails makes nothing on disk; systemd hears
            // READY=1 once it serves (Type=notify; packaging/thumbd.service).
            thumbd = try Thumbd(config: config, process: ProcessSetup.prepare(), listening: true,
                                notifier: SystemdNotifier(environment: ProcessInfo.processInfo.environment))
        } catch {
            fail(error.description)
        }
        for sig in [SIGINT, SIGTERM] {
            signal(sig, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: sig, queue: .global())
            source.setEventHandler {
                Console.write("thumbd: stopping\n", to: .standardOutput)
                thumbd.shutdown { exit(0) }
            }
            source.resume()
            signalSources.append(source)
        }
        // SIGHUP: read the configuration again and put what may change in force (`Thumbd.reload`);
        // SIGUSR1: reopen access_log_file (logrotate's postrotate). As nginx does both. One
        // serial queue: a reload and a reopen never run at once.
        let reloads = DispatchQueue(label: "thumbd.reload")
        let environment = ProcessInfo.processInfo.environment
        let reload: @Sendable () -> Void = { thumbd.reload(arguments: arguments, environment: environment) }
        let reopen: @Sendable () -> Void = { thumbd.reopenAccessLog() }
        for (sig, handler) in [(SIGHUP, reload), (SIGUSR1, reopen)] {
            signal(sig, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: sig, queue: reloads)
            source.setEventHandler(handler: handler)
            source.resume()
            signalSources.append(source)
        }
        // Accept only once `dispatchMain()` has run: it ends the main thread, and libdispatch then
        // creates the main queue's eventfd, trapping (SIGILL) if a connection flood has taken
        // every descriptor by that moment. Work queued on the main queue runs after that point.
        DispatchQueue.main.async {
            let port: UInt16
            do throws(ConfigError) {
                port = try thumbd.start()
            } catch {
                fail(error.description)
            }
            let host = config.host.contains(":") ? "[\(config.host)]" : config.host   // IPv6 (RFC 3986 §3.2.2)
            Console.write("thumbd: serving \(thumbd.service.library.root) on http://\(host):\(port)/ "
                          + "(cache \(config.cacheDirectory)); try /thumbnails/3/<photo> and /stats\n", to: .standardOutput)
            Console.write("thumbd: " + thumbd.descriptorSummary + "\n", to: .standardOutput)
        }
    }

    /// `thumbd sign …` (`SignCommand`): prints the signed URL and exits 0, or the reason and 2.
    static func sign(_ arguments: [String]) -> Never {
        if arguments.contains("--help") {
            Console.write(SignCommand.usage + "\n", to: .standardOutput)
            exit(0)
        }
        do {
            let url = try SignCommand.url(arguments: arguments, environment: ProcessInfo.processInfo.environment,
                                          now: Int(Date().timeIntervalSince1970))
            Console.write(url + "\n", to: .standardOutput)
            exit(0)
        } catch {
            fail(error.description)
        }
    }

    static func fail(_ message: String) -> Never {
        Console.warn(message)
        exit(2)
    }
}
