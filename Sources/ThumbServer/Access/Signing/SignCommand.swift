import Library

/// `thumbd sign --key-id ID --grid 3 --path P --expires-in 1h [--base-url URL] [config options]`
/// (or `--url U`, the listing's percent-encoded `url`, instead of `--path`):
/// prints a signed thumbnail URL (README, "Deploying a private library"), signed by the keys of
/// the configuration it reads as the server does (`--config FILE`, `THUMBD_SIGNING_KEYS`, …; no
/// `library` needed). The expiry is now + `--expires-in`, rounded up to `signed_url_bucket_seconds`.
public enum SignCommand {
    /// The usage line, for errors and `--help`.
    public static let usage = "usage: thumbd sign --grid GRID --path ASSET_PATH|--url LISTING_URL [--key-id ID] [--expires-in 1h] "
        + "[--base-url http://HOST:PORT] [--config FILE]"

    /// The signed URL for `arguments` (those after `sign`) at `now` (seconds since 1970).
    /// `--key-id` defaults to the first of `signing_keys`, `--expires-in` to `1h` (a number
    /// with `s`, `m`, `h` or `d`, or bare seconds), `--base-url` to `http://{host}:{port}`. The
    /// asset is `--path` (text) or `--url` (the listing's `url`, each segment percent-decoded once,
    /// as a prefetch's `urls`: the only way to name a file whose name is not UTF-8, since the
    /// command line reaches Swift as text and an invalid byte there becomes U+FFFD).
    /// - Throws: `ConfigError` for a missing `--grid`, neither or both of `--path` and `--url`, an
    ///   invalid percent-escape in `--url`, an unknown grid or key id, no
    ///   `signing_keys`, a path that leaves the library, a bad duration, or an expiry past
    ///   `signed_url_max_seconds`; and whatever `ConfigLoader` refuses.
    public static func url(arguments: [String], environment: [String: String], now: Int) throws(ConfigError) -> String {
        var options: [String: String] = [:]
        var rest: [String] = []
        var i = 0
        while i < arguments.count {
            let argument = arguments[i]
            let name = argument.split(separator: "=", maxSplits: 1).first.map(String.init) ?? argument
            guard ["--key-id", "--grid", "--path", "--url", "--expires-in", "--base-url"].contains(name) else {
                rest.append(argument)
                i += 1
                continue
            }
            if name != argument {
                options[name] = String(argument.dropFirst(name.count + 1))
            } else {
                guard i + 1 < arguments.count else { throw ConfigError("\(name) needs a value; \(usage)") }
                options[name] = arguments[i + 1]
                i += 1
            }
            i += 1
        }
        guard case .run(let config) = try ConfigLoader.load(arguments: rest, environment: environment, requireLibrary: false) else {
            throw ConfigError(usage)
        }
        let signing = config.signing
        guard let first = signing.keys.first else {
            throw ConfigError("no signing_keys are configured (give --config FILE, THUMBD_SIGNING_KEYS or --signing-keys)")
        }
        guard let gridName = options["--grid"], (options["--path"] == nil) != (options["--url"] == nil) else {
            throw ConfigError(usage)
        }
        guard config.grids.contains(where: { $0.name == gridName }) else {
            throw ConfigError("--grid \(gridName) is not one of this server's grids (\(config.grids.map(\.name).joined(separator: ", ")))")
        }
        let key: URLSigning.Key
        if let id = options["--key-id"] {
            guard let named = signing.keys.first(where: { $0.id == id }) else {
                throw ConfigError("--key-id \(id) is not among signing_keys (\(signing.keys.map(\.id).joined(separator: ", ")))")
            }
            key = named
        } else {
            key = first
        }
        let segments: [[UInt8]]
        do {
            if let url = options["--url"] {
                segments = try PrefetchPlan.segments(url: url)
            } else {
                segments = try PrefetchPlan.segments(options["--path"] ?? "").map { Array($0.utf8) }
            }
        } catch {
            throw ConfigError("\(options["--url"] == nil ? "--path" : "--url"): \(error.message)")
        }
        guard let lifetime = duration(options["--expires-in"] ?? "1h"), lifetime > 0 else {
            throw ConfigError("--expires-in must be a positive number of seconds, or one with s, m, h or d (90s, 30m, 1h, 7d)")
        }
        let expires = signing.expiry(now: now, lifetime: lifetime)
        guard expires - now <= signing.maxLifetimeSeconds else {
            throw ConfigError("--expires-in \(options["--expires-in"] ?? "") rounded up to a whole signed_url_bucket_seconds "
                + "(\(signing.bucketSeconds)) lives \(expires - now) s, past signed_url_max_seconds (\(signing.maxLifetimeSeconds))")
        }
        let host = config.host.contains(":") ? "[\(config.host)]" : config.host
        let base = options["--base-url"] ?? "http://\(host):\(config.port)"
        let encoded = PathEncoding.percentEncoded(Array(segments.joined(separator: [UInt8(ascii: "/")])))
        let grid = Array(gridName.utf8)
        let query = URLSigning.query(key: key, grid: grid, path: URLSigning.canonicalPath(segments),
                                     expires: expires)
        return base + "/thumbnails/" + PathEncoding.percentEncoded(grid) + "/" + encoded + "?" + query
    }

    /// Seconds in `text`: `90`, `90s`, `30m`, `1h`, `7d`; nil for anything else.
    static func duration(_ text: String) -> Int? {
        let units: [Character: Int] = ["s": 1, "m": 60, "h": 3600, "d": 86400]
        if let last = text.last, let unit = units[last] {
            return Int(text.dropLast()).flatMap { $0.multipliedReportingOverflow(by: unit).overflow ? nil : $0 * unit }
        }
        return Int(text)
    }
}
