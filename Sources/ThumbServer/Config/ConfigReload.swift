/// What a reload (SIGHUP) makes of a configuration read again over the running one: the keys
/// marked `reloadable()` in `ConfigOption.all` and `client_keys` take their new values; every
/// other key that changed takes a restart, and keeps its running value, with one sentence each.
struct ConfigReload: Sendable, Equatable {
    /// The running configuration with the reloadable keys' new values: what is in force next.
    let effective: Config
    /// The keys whose new value is in force, in `ConfigOption.all`'s order.
    let applied: [String]
    /// One sentence per changed key that takes a restart, left as it was.
    let kept: [String]

    init(running old: Config, read new: Config) {
        var effective = old
        var applied: [String] = []
        var kept: [String] = []
        for option in ConfigOption.all {
            let was = option.get(old), now = option.get(new)
            guard was != now else { continue }
            if option.reloads && !Self.switchesTheMemoryTier(option.key, old, new) {
                _ = option.set(&effective, now)
                applied.append(option.key)
            } else {
                let why = Self.switchesTheMemoryTier(option.key, old, new)
                    ? "turning the memory tier on or off (0) takes a restart" : "it takes a restart"
                kept.append("\(option.key) changed from \(Self.shown(was)) to \(Self.shown(now)), but \(why): "
                    + "kept \(Self.shown(was))")
            }
        }
        if old.clientKeys != new.clientKeys {
            effective.clientKeys = new.clientKeys
            applied.append("client_keys")
        }
        if old.grids != new.grids {
            kept.append("grids changed, but they take a restart (they are in every cache key): kept as they were")
        }
        self.effective = effective
        self.applied = applied
        self.kept = kept
    }

    /// The memory tier's descriptors (memfds) are shared out at start (`DescriptorBudget`), for
    /// a tier that is on: `memory_cache_bytes` from or to 0 cannot be reloaded.
    private static func switchesTheMemoryTier(_ key: String, _ old: Config, _ new: Config) -> Bool {
        key == "memory_cache_bytes" && (old.memoryCacheBytes == 0) != (new.memoryCacheBytes == 0)
    }

    private static func shown(_ value: String) -> String { value.isEmpty ? "(none)" : value }
}
