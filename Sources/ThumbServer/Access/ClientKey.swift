import Foundation

/// One client key of `client_keys` (README, "Deploying a private library"): a bearer key the app
/// gives a phone for `/assets` and `/prefetch…`, stored as its SHA-256 so that the config holds no
/// key in clear, optionally limited to a folder of the library and to an expiry. In the config
/// file: `{"id": "alice-phone", "sha256": "<64 hex digits>", "prefix": "alice", "expires":
/// "2027-01-01T00:00:00Z"}`, `prefix` and `expires` optional.
public struct ClientKey: Sendable, Equatable {
    /// Names the key in jobs and logs (never in `/metrics`): letters, digits, `-`, `.`, `_`, at most 64.
    public var id: String
    /// SHA-256 (FIPS 180-4) of the key's UTF-8 bytes, 32 bytes (`printf %s KEY | sha256sum`).
    public var sha256: [UInt8]
    /// The folder of the library the key sees, as `/`-separated names byte for byte as on disk
    /// (`alice`, `family/alice`); empty for the whole library. Empty by default.
    public var prefix: [[UInt8]] = []
    /// When the key stops working, seconds since 1970; nil for never. `nil` by default.
    public var expires: Int?

    public init(id: String, sha256: [UInt8], prefix: [[UInt8]] = [], expires: Int? = nil) {
        self.id = id
        self.sha256 = sha256
        self.prefix = prefix
        self.expires = expires
    }

    /// The keys of the config file's `client_keys` array.
    /// - Throws: `ConfigError` naming the entry for a key that is not an object of `id`, `sha256`,
    ///   `prefix` and `expires`, an id that is not 1 to 64 of letters, digits, `-`, `.` and `_` or
    ///   that repeats, a `sha256` that is not 64 hex digits or that another entry has, a `prefix` that is absolute or holds
    ///   `.`, `..` or empty names, or an `expires` that is not an ISO 8601 time with an offset.
    static func keys(from value: Any, path: String) throws(ConfigError) -> [ClientKey] {
        let shape = "an array of {\"id\", \"sha256\", \"prefix\", \"expires\"} objects"
        guard let list = value as? [[String: Any]] else {
            throw ConfigError("key 'client_keys' in the config file \(path) must be \(shape)")
        }
        var keys: [ClientKey] = []
        for (position, item) in list.enumerated() {
            let name = "entry \(position + 1) of 'client_keys' in the config file \(path)"
            for key in item.keys.sorted() where !["id", "sha256", "prefix", "expires"].contains(key) {
                throw ConfigError("unknown key '\(key)' in \(name): a client key has id, sha256, prefix and expires")
            }
            guard let id = item["id"] as? String, isIdentifier(id) else {
                throw ConfigError("\(name) needs an id of 1 to 64 letters, digits, '-', '.' and '_'")
            }
            guard !keys.contains(where: { $0.id == id }) else { throw ConfigError("client key id '\(id)' is given twice in \(path)") }
            guard let hex = item["sha256"] as? String, hex.utf8.count == 64, let digest = Crypto.bytes(hex: hex) else {
                throw ConfigError("client key '\(id)' needs sha256: the 64 hex digits of SHA-256 of the key "
                    + "(printf %s KEY | sha256sum), not the key itself")
            }
            // One key, one scope: a second entry for the same key would silently decide which
            // folder it reaches (the last one read won).
            if let same = keys.first(where: { $0.sha256 == digest }) {
                throw ConfigError("client keys '\(same.id)' and '\(id)' in \(path) have the same sha256: one key can have "
                    + "one prefix and one expiry; give each client its own key")
            }
            var key = ClientKey(id: id, sha256: digest)
            if let prefix = item["prefix"] {
                guard let text = prefix as? String else { throw ConfigError("client key '\(id)': prefix must be a string") }
                let trimmed = text.hasSuffix("/") ? String(text.dropLast()) : text
                let segments = trimmed.split(separator: "/", omittingEmptySubsequences: false)
                guard trimmed.isEmpty || (!text.hasPrefix("/") && segments.allSatisfy({ !$0.isEmpty && $0 != "." && $0 != ".." })) else {
                    throw ConfigError("client key '\(id)': prefix must be a folder of the library such as alice or family/alice "
                        + "(relative, without '.', '..' or empty names)")
                }
                key.prefix = trimmed.isEmpty ? [] : segments.map { Array($0.utf8) }
            }
            if let expires = item["expires"] {
                guard let text = expires as? String, let date = ISO8601DateFormatter().date(from: text) else {
                    throw ConfigError("client key '\(id)': expires must be an ISO 8601 time with an offset, e.g. 2027-01-01T00:00:00Z")
                }
                key.expires = Int(date.timeIntervalSince1970)
            }
            keys.append(key)
        }
        return keys
    }

    /// Whether `text` is 1 to 64 of letters, digits, `-`, `.` and `_` (ASCII): a key id, a client id.
    static func isIdentifier(_ text: some StringProtocol) -> Bool {
        (1...64).contains(text.utf8.count) && text.utf8.allSatisfy {
            (0x30...0x39).contains($0) || (0x41...0x5A).contains($0) || (0x61...0x7A).contains($0) || $0 == 0x2D || $0 == 0x2E || $0 == 0x5F
        }
    }
}
