import Foundation
import Rendering
import Thumbnails

/// A configuration that cannot be used, in one sentence naming the key, flag or path.
public struct ConfigError: Error, Sendable, CustomStringConvertible, Equatable {
    public let description: String
    init(_ description: String) { self.description = description }
}

/// Builds a `Config` from, in rising precedence: the defaults, the config file (`--config FILE`,
/// else `config/thumbd.json` when it exists), `THUMBD_<KEY>` environment variables, and flags
/// (`--key value` or `--key=value`, `_` in keys written `-`; a boolean also as `--key` for true
/// and `--no-key` for false).
public enum ConfigLoader {
    /// Read when no `--config` is given and the file exists.
    public static let defaultPath = "config/thumbd.json"

    public enum Outcome: Sendable, Equatable {
        case run(Config)
        /// `--help`/`-h`, `--help-markdown`, `--version`/`-V`, `--man`, or `--check-config` of a
        /// configuration that holds, was given: print this and exit 0.
        case help(String)
    }

    /// - Throws: `ConfigError` for an unreadable or malformed file, an unknown key (at the top
    ///   level or in a grid object), flag or `THUMBD_*` variable (`checkEnvironment`), or a
    ///   value of the wrong type or out of range.
    /// `requireLibrary`: false for a command that serves nothing (`thumbd sign`), which needs no `library`.
    public static func load(arguments: [String], environment: [String: String],
                            requireLibrary: Bool = true) throws(ConfigError) -> Outcome {
        let flags = try parseFlags(arguments)
        if flags.contains(where: { $0.name == "help" }) { return .help(helpText()) }
        if flags.contains(where: { $0.name == "help_markdown" }) { return .help(optionsMarkdown()) }
        if flags.contains(where: { $0.name == "version" }) { return .help(BuildInfo.current.versionText) }
        if flags.contains(where: { $0.name == "man" }) { return .help(manPage()) }
        var config = Config()
        if let path = flags.last(where: { $0.name == "config" })?.value {
            try apply(file: path, to: &config)
        } else if FileManager.default.fileExists(atPath: defaultPath) {
            try apply(file: defaultPath, to: &config)
        }
        try checkEnvironment(environment)
        for option in ConfigOption.all {
            guard let text = environment[option.environmentName] else { continue }
            if option.kind == .list, let fault = ConfigOption.fault(in: ConfigOption.entries(of: text)) {
                throw ConfigError("environment variable \(option.environmentName): \(fault) (a comma-separated list)")
            }
            if !option.set(&config, text) {
                throw ConfigError("environment variable \(option.environmentName)=\(text) is not a valid \(describe(option))")
            }
        }
        for flag in flags where flag.name != "config" && flag.name != "check_config" {
            guard let option = ConfigOption.all.first(where: { $0.key == flag.name }) else {
                throw unknownOption(flag.name)
            }
            let text = flag.value ?? (option.kind == .boolean || option.kind == .choice ? "true" : "")
            if option.kind == .list, let fault = ConfigOption.fault(in: ConfigOption.entries(of: text)) {
                throw ConfigError("\(option.flag): \(fault) (a comma-separated list)")
            }
            guard option.set(&config, text) else {
                throw ConfigError("\(option.flag) \(text) is not a valid \(describe(option))")
            }
        }
        try validate(config, requireLibrary: requireLibrary)
        if flags.contains(where: { $0.name == "check_config" }) { return .help(try checked(config)) }
        return .run(config)
    }

    /// `--check-config`, as `nginx -t`: what a start would find wrong beyond the values
    /// themselves (checked by `load`), tried by the start's own rules: the library must be a
    /// directory this process may read and search; the cache directory apart from it
    /// (`CacheDirectory.overlap`), one a start would claim (never one holding files thumbd did
    /// not create) and where the disk tier can create and rename its files
    /// (`CacheDirectory.check`); `access_log_file` one a start can open (`AccessLog.checkOpening`).
    /// What the tries make is removed again: nothing is left behind, nothing is bound.
    /// `cacheInUse`: the cache directory is the running server's (a reload), whose faults its
    /// disk tier reports itself: not tried. Returns the line to print.
    /// - Throws: `ConfigError` with the start's sentence for the first of these that fails.
    static func checked(_ config: Config, cacheInUse: Bool = false) throws(ConfigError) -> String {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: config.library, isDirectory: &isDirectory), isDirectory.boolValue else {
            throw ConfigError("library \(config.library) is not a directory")
        }
        guard access(config.library, R_OK | X_OK) == 0 else {
            throw ConfigError("library \(config.library) cannot be read by this user")
        }
        let root = URL(fileURLWithPath: config.library).resolvingSymlinksInPath().path
        if let overlap = CacheDirectory.overlap(cache: config.cacheDirectory, library: root) {
            throw ConfigError(overlap + ": choose a cache_dir outside the library")
        }
        if !cacheInUse, let refusal = CacheDirectory.check(config.cacheDirectory) {
            throw ConfigError("cache_dir \(config.cacheDirectory) cannot be used: \(refusal)")
        }
        if !config.accessLogFile.isEmpty { try AccessLog.checkOpening(config.accessLogFile) }
        let host = config.host.contains(":") ? "[\(config.host)]" : config.host   // IPv6 (RFC 3986 §3.2.2)
        return "thumbd: the configuration is valid (library \(config.library), cache_dir \(config.cacheDirectory), "
            + "\(host):\(config.port))\n"
    }

    /// The `--help` text: usage, then every option with its default.
    public static func helpText() -> String {
        let defaults = Config()
        var lines = ["usage: thumbd --library DIR [--port 8080] [--host 127.0.0.1] [--cache-dir DIR] [--config FILE] [options]",
                     "       thumbd sign --grid GRID --path ASSET_PATH|--url LISTING_URL [--key-id ID] [--expires-in 1h] (prints a signed thumbnail URL)",
                     "",
                     "Serves grid thumbnails of the photos under --library (see README.md).",
                     "Precedence: defaults < config file (--config FILE, else \(defaultPath) if present) < THUMBD_* environment < flags.",
                     "Flags: --key value or --key=value; booleans also --key (true) and --no-key (false).",
                     "",
                     "options (flag / environment variable: meaning, default):"]
        lines += commandFlags.map { "  \($0.flag): \($0.help)" }
        for option in ConfigOption.all {
            let value = option.get(defaults)
            lines.append("  \(option.flag) / \(option.environmentName): \(option.help), default \(value.isEmpty ? "(none)" : value)")
        }
        lines.append("  grids (config file only): " + defaults.grids.map { "\($0.name)=\($0.width)x\($0.height) \($0.fit.rawValue)" }.joined(separator: ", "))
        let clientKeys = fileOnlyOptions[1]
        lines.append("  client_keys (config file only): \(clientKeys.shape) \(clientKeys.help), default \(clientKeys.defaultValue)")
        return lines.joined(separator: "\n") + "\n"
    }

    /// The flags that are not configuration keys, as `--help` and the manual page list them.
    static let commandFlags: [(flag: String, help: String)] = [
        ("--config FILE", "JSON config file, default \(defaultPath)"),
        ("-h, --help", "print this and exit"),
        ("-V, --version", "print the version, the git commit and the libvips and FFmpeg versions, and exit"),
        ("--help-markdown", "print the options as the Markdown table of docs/configuration.md and exit"),
        ("--check-config", "check the configuration (file, environment, flags), that the library is a readable directory and "
            + "that the cache directory and the access log can be used as a start uses them (tried, and left as found), as "
            + "nginx -t: print that it is valid and exit 0, or the one sentence of what is wrong and exit 2"),
    ]

    private struct Flag { let name: String; let value: String? }

    /// Words taken as the value of a boolean flag when they follow it.
    private static let booleanWords: Set<String> = ["true", "false", "yes", "no", "on", "off", "1", "0"]

    private static func parseFlags(_ arguments: [String]) throws(ConfigError) -> [Flag] {
        var flags: [Flag] = []
        var i = 0
        while i < arguments.count {
            let argument = arguments[i]
            // The two short flags, where an option may stand (a value that is "-h" stays a value).
            if let long = shortFlags[argument] {
                flags.append(Flag(name: long, value: nil))
                i += 1
                continue
            }
            guard argument.hasPrefix("--"), argument.count > 2 else {
                throw ConfigError("unexpected argument '\(argument)'; options look like --library DIR (see --help)")
            }
            let body = argument.dropFirst(2)
            if let eq = body.firstIndex(of: "=") {
                flags.append(Flag(name: key(body[..<eq]), value: String(body[body.index(after: eq)...])))
            } else {
                var name = key(body)
                var negated = false
                if name.hasPrefix("no_"), let kind = ConfigOption.all.first(where: { $0.key == String(name.dropFirst(3)) })?.kind,
                   kind == .boolean || kind == .choice {
                    name = String(name.dropFirst(3))   // --no-webp
                    negated = true
                }
                let option = ConfigOption.all.first { $0.key == name }
                // An unknown name is refused as one before a value is looked for (`--no-quality`
                // is no option, not one that needs a value).
                if option == nil, !actionFlags.contains(name), name != "config" { throw unknownOption(name) }
                let isBoolean = actionFlags.contains(name) || option?.kind == .boolean || option?.kind == .choice
                if isBoolean {
                    // `--access-log`, `--no-webp`, `--webp false` or `--access-log json` (a following
                    // true/false word, or a word of a choice, is its value).
                    if !negated, i + 1 < arguments.count,
                       Self.booleanWords.contains(arguments[i + 1].lowercased())
                        || (option?.kind == .choice && option?.accepts(arguments[i + 1]) == true) {
                        flags.append(Flag(name: name, value: arguments[i + 1]))
                        i += 1
                    } else {
                        flags.append(Flag(name: name, value: negated ? "false" : nil))
                    }
                } else if i + 1 < arguments.count {
                    // `--library --port 8080`: the value was left out, and the next option is not it.
                    let next = arguments[i + 1]
                    if next.hasPrefix("--"), Self.isOptionName(next) {
                        throw ConfigError("option --\(body) needs a value, and \(next) is an option (a value that "
                            + "starts with -- is given as --\(body)=VALUE)")
                    }
                    flags.append(Flag(name: name, value: next))
                    i += 1
                } else {
                    throw ConfigError("option --\(body) needs a value")
                }
            }
            i += 1
        }
        return flags
    }

    /// The flags that print something and exit instead of configuring: `--help`,
    /// `--help-markdown`, `--version`, and `--man` (the manual page, for packaging; not in `--help`).
    private static let actionFlags: Set<String> = ["help", "help_markdown", "version", "man", "check_config"]

    /// `-h` and `-V`, the short forms of `--help` and `--version`.
    private static let shortFlags = ["-h": "help", "-V": "version"]

    private static func key<S: StringProtocol>(_ flag: S) -> String { flag.replacingOccurrences(of: "-", with: "_") }

    /// Whether `argument` (`--name` or `--name=value`) names one of thumbd's options, `--help`,
    /// `--config` or a `--no-` boolean.
    private static func isOptionName(_ argument: String) -> Bool {
        var name = key(argument.dropFirst(2).prefix { $0 != "=" })
        if name.hasPrefix("no_") { name = String(name.dropFirst(3)) }
        return actionFlags.contains(name) || name == "config" || ConfigOption.all.contains { $0.key == name }
    }

    private static func describe(_ option: ConfigOption) -> String {
        switch option.kind {
        case .string: "string for \(option.key)"
        case .integer: "integer from \(option.bounds) for \(option.key) (\(option.help))"
        case .number: "number from \(option.bounds) for \(option.key) (\(option.help))"
        case .boolean: "boolean (true/false) for \(option.key)"
        case .list: "list of strings for \(option.key) (\(option.help))"
        case .choice: "word for \(option.key): \(option.bounds)"
        }
    }

    private static func apply(file path: String, to config: inout Config) throws(ConfigError) {
        let data = Data(try contents(ofConfigFile: path))
        if let error = StrictJSON.syntaxError(in: Array(data)) {
            throw ConfigError("the config file \(path) is not valid JSON at \(error)")
        }
        guard let object = try? JSONSerialization.jsonObject(with: data), let root = object as? [String: Any] else {
            throw ConfigError("the config file \(path) is not a JSON object")
        }
        for (key, value) in root.sorted(by: { $0.key < $1.key }) {
            if key == "grids" {
                config.grids = try grids(from: value, path: path)
                continue
            }
            if key == "client_keys" {
                config.clientKeys = try ClientKey.keys(from: value, path: path)
                continue
            }
            guard let option = ConfigOption.all.first(where: { $0.key == key }) else {
                throw ConfigError("unknown key '\(key)' in the config file \(path)"
                    + suggestion(for: key, among: ConfigOption.all.map(\.key) + ["grids", "client_keys"]))
            }
            let text: String?
            switch option.kind {
            case .string: text = value as? String
            case .boolean: text = JSONValue.boolean(value).map { String($0) }
            case .choice: text = value as? String ?? JSONValue.boolean(value).map { String($0) }
            case .integer: text = JSONValue.integer(value).map { String($0) }
            case .number: text = JSONValue.number(value).map { String($0) }
            case .list:
                // An array of strings (docs/configuration.md): a lone string, which reads as one
                // entry or as several split at commas as the environment's, is refused; each
                // string is an entry as written (`ConfigOption.fault(in:)`).
                guard let items = value as? [Any], let words = items as? [String] else {
                    throw ConfigError("key '\(key)' in the config file \(path) must be a JSON array of strings, one for "
                        + "each entry: \"\(key)\": \(option.example)")
                }
                if let fault = ConfigOption.fault(in: words) {
                    throw ConfigError("key '\(key)' in the config file \(path): \(fault)")
                }
                text = words.joined(separator: ",")
            }
            guard let text, option.set(&config, text) else {
                let what = describe(option)
                throw ConfigError("key '\(key)' in the config file \(path) must be \(what.hasPrefix("integer") ? "an" : "a") \(what)")
            }
        }
    }

    private static func grids(from value: Any, path: String) throws(ConfigError) -> [GridSpec] {
        guard let list = value as? [[String: Any]], !list.isEmpty else {
            throw ConfigError("key 'grids' in the config file \(path) must be a non-empty array of {\"name\",\"width\",\"height\",\"fit\"}")
        }
        var specs: [GridSpec] = []
        for (position, item) in list.enumerated() {
            try checkGridKeys(item, position: position, path: path)
            guard let name = item["name"] as? String, let width = JSONValue.integer(item["width"]),
                  let height = JSONValue.integer(item["height"]),
                  let fit = (item["fit"] as? String).flatMap(Fit.init(rawValue:)) else {
                throw ConfigError("key 'grids' in the config file \(path): each grid needs name (string), width, height (px) and fit (contain or cover)")
            }
            specs.append(GridSpec(name: name, width: width, height: height, fit: fit))
        }
        return specs
    }

    /// The keys of one grid object (`{"name", "width", "height", "fit"}`, README "Configuration").
    static let gridKeys = ["name", "width", "height", "fit"]

    /// Refuses a key of grid object `item` (at `position` in `grids`) that is not one of
    /// `gridKeys`: a misspelt `"widht"` would otherwise be ignored (and the grid refused for
    /// lacking a width, or worse, a default taken), a per-grid `"quality"` ignored in silence.
    /// - Throws: `ConfigError` naming the key and the grid, with the closest grid key, or
    ///   saying that a top-level key applies to every grid.
    private static func checkGridKeys(_ item: [String: Any], position: Int, path: String) throws(ConfigError) {
        for key in item.keys.sorted() where !gridKeys.contains(key) {
            let grid = (item["name"] as? String).map { "grid '\($0)'" } ?? "grid \(position + 1)"
            let why = ConfigOption.all.contains { $0.key == key }
                ? ": '\(key)' is a top-level key, set once for every grid"
                : suggestion(for: key, among: gridKeys) + "; a grid has name, width, height and fit"
            throw ConfigError("unknown key '\(key)' in \(grid) of 'grids' in the config file \(path)\(why)")
        }
    }

    static func validate(_ config: Config, requireLibrary: Bool = true) throws(ConfigError) {
        if config.library.isEmpty && requireLibrary {
            throw ConfigError("no library: give --library DIR (or THUMBD_LIBRARY, or 'library' in the config file)")
        }
        if config.cacheDirectory.isEmpty {
            throw ConfigError("cache_dir is empty: give a directory for the disk cache (--cache-dir DIR)")
        }
        // Sent as header field values: a control character (CR, LF...) would end the field
        // (RFC 9110 §5.5), so it is refused rather than sent or dropped.
        for (key, value) in [("cache_control", config.cacheControl), ("cache_control_unversioned", config.cacheControlUnversioned)]
        where value.unicodeScalars.contains(where: { ($0.value < 0x20 && $0 != "\t") || $0.value == 0x7F }) {
            throw ConfigError("key '\(key)': a header value cannot hold control characters such as CR or LF")
        }
        try validateSigning(config)
        _ = try ClusterPeers.node(config)
        _ = try TrustedProxies(config.trustedProxies)
        if config.corsOrigins.contains("*") && config.corsOrigins.count > 1 {
            throw ConfigError("key 'cors_origins': '*' (any origin) stands alone, not in a list of origins")
        }
        for origin in config.corsOrigins where origin != "*" && !CORSPolicy.isOrigin(origin) {
            throw ConfigError("key 'cors_origins': '\(origin)' is not an origin as browsers send it (a lowercase "
                + "scheme://host[:port] with no path, no trailing slash and no default port, e.g. https://photos.example.com)")
        }
        var names = Set<String>()
        for grid in config.grids {
            // A grid's name is a path segment of its URLs (/thumbnails/{grid}/...): RFC 3986
            // unreserved characters only, and not "." or "..", which clients remove as dot
            // segments (RFC 3986 §5.2.4), so such a grid's listed URLs would reach nothing.
            let unreserved = grid.name.unicodeScalars.allSatisfy {
                $0.isASCII && (CharacterSet.alphanumerics.contains($0) || "-._~".unicodeScalars.contains($0))
            }
            guard !grid.name.isEmpty, unreserved, grid.name != ".", grid.name != "..", names.insert(grid.name).inserted else {
                throw ConfigError("key 'grids': grid names must be unique and made of letters, digits, '-', '.', '_' and '~' "
                    + "(not '.' or '..', which URLs drop): got '\(grid.name)'")
            }
            guard (1...16384).contains(grid.width), (1...16384).contains(grid.height) else {
                throw ConfigError("key 'grids': grid '\(grid.name)' needs width and height in 1...16384 px")
            }
        }
    }

    /// Refuses a `signing_keys` entry that is not `ID:SECRET` (the id of 1 to 64 letters, digits,
    /// `-`, `.`, `_`; the secret at least 64 hex digits: 32 bytes, SHA-256's output length, below
    /// which RFC 2104 §3 strongly discourages HMAC keys) or whose id repeats. The message never
    /// repeats a secret.
    static func validateSigning(_ config: Config) throws(ConfigError) {
        var ids = Set<String>()
        for (position, entry) in config.signingKeys.enumerated() {
            let parts = entry.split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false)
            let id = parts.count == 2 ? String(parts[0]) : ""
            guard ClientKey.isIdentifier(id) else {
                throw ConfigError("key 'signing_keys': entry \(position + 1) must be ID:HEXSECRET, the id of 1 to 64 "
                    + "letters, digits, '-', '.' and '_'")
            }
            guard let secret = Crypto.bytes(hex: parts[1]), secret.count >= 32 else {
                throw ConfigError("key 'signing_keys': the secret of key '\(id)' must be at least 64 hex digits (32 bytes; "
                    + "e.g. from `openssl rand -hex 32`)")
            }
            guard ids.insert(id).inserted else {
                throw ConfigError("key 'signing_keys': key id '\(id)' is given twice")
            }
        }
        if config.signedURLBucketSeconds >= config.signedURLMaxSeconds && !config.signingKeys.isEmpty {
            throw ConfigError("key 'signed_url_bucket_seconds' (\(config.signedURLBucketSeconds)) must be below "
                + "signed_url_max_seconds (\(config.signedURLMaxSeconds)): expiries round up by up to one bucket")
        }
    }
}
