import Foundation
import Locking
import Synchronization

/// SIGHUP (`systemctl reload thumbd`): the configuration read again and what may change put in
/// force for the next request, as nginx reloads. Which keys a reload changes is
/// `ConfigReload`'s (the `reloadable()` options of `ConfigOption.all`, and `client_keys`).
extension Thumbd {
    /// Reads the configuration again as a start reads it (`ConfigLoader.load` with the start's
    /// `arguments` and `environment`, then `--check-config`'s checks), then
    /// `reload(to:)`. A configuration that does not load keeps the running one, and the one
    /// sentence of what is wrong is said. Returns the lines said (on stderr by default), each
    /// beginning `reload: `.
    @discardableResult
    public func reload(arguments: [String], environment: [String: String],
                       say: @Sendable (String) -> Void = { Thumbd.warn($0) }) -> [String] {
        let read: Config
        do throws(ConfigError) {
            guard case .run(let config) = try ConfigLoader.load(arguments: arguments, environment: environment) else {
                return []   // a printing flag: a start would not have served either
            }
            // The running cache directory is its disk tier's to watch; a new one (which takes a
            // restart) is tried as --check-config tries it.
            let running = current.withLock { $0.cacheDirectory }
            _ = try ConfigLoader.checked(config, cacheInUse: config.cacheDirectory == running)
            read = config
        } catch {
            let line = "reload: \(error.description); the running configuration is kept"
            say(line)
            return [line]
        }
        return reload(to: read, say: say)
    }

    /// Puts `read`'s reloadable keys in force (`ConfigReload`): the service's keys (client keys,
    /// signing keys, admin token, CORS origins) for the next request, while requests in flight
    /// keep the settings they read (`ThumbService.apply`); the access log's format, file and
    /// trusted proxies for the next line (`AccessLog.apply`); the cache tiers' limits, evicting
    /// down to them (`ThumbnailPipeline.setCacheLimits`, which unlinks: call it off the event
    /// loops). A changed key that takes a restart is said, one line each, and left as it was.
    /// A `read` that is not valid (`ConfigLoader.validate`), or whose new `access_log_file`
    /// cannot be opened, changes nothing, and the sentence is said. Returns the lines said.
    @discardableResult
    public func reload(to read: Config, say: @Sendable (String) -> Void = { Thumbd.warn($0) }) -> [String] {
        ThreadRole.assertNot(.eventLoop, "Thumbd.reload blocks on file I/O")
        let lines = current.withLock { running -> [String] in
            let reload = ConfigReload(running: running, read: read)
            let next = reload.effective
            do throws(ConfigError) {
                try ConfigLoader.validate(read)
                // The one step that can fail after validation, first: then nothing has changed.
                try accessLog.apply(next.accessLogSettings())
            } catch {
                return ["reload: \(error.description); the running configuration is kept"]
            }
            service.apply(next.service(descriptors: descriptors))
            service.pipeline.setCacheLimits(memoryBytes: next.memoryCacheBytes, diskBytes: next.diskCacheBytes)
            running = next
            return reload.kept.map { "reload: " + $0 }
                + [reload.applied.isEmpty ? "reload: no key a reload changes has changed"
                    : "reload: in force for the next request: " + reload.applied.joined(separator: ", ")]
        }
        lines.forEach(say)
        return lines
    }
}
