/// Which `THUMBD_*` environment variables start-up accepts.
extension ConfigLoader {
    /// Variables named `THUMBD_*` that are not config keys and that the server ignores: they
    /// belong to thumbd's own test tools, which a shell that runs them may pass on to the
    /// server. `THUMBD_CORPUS`: where the tests and benchmarks find the shared image corpus;
    /// `THUMBD_TEST_PORTS`: the ports the browser tests listen on (README, "Run the tests").
    public static let toolVariables: Set<String> = ["THUMBD_CORPUS", "THUMBD_TEST_PORTS"]

    /// Refuses a variable that starts with `THUMBD_` and is neither a config key's
    /// (`THUMBD_<KEY>`) nor one of `toolVariables`: a mistyped one (`THUMBD_QUALTY=40`) would
    /// otherwise be ignored in silence, as an unknown key in the config file is not.
    /// - Throws: `ConfigError` naming the first such variable (in byte order), with the closest
    ///   known name when one is near.
    static func checkEnvironment(_ environment: [String: String]) throws(ConfigError) {
        let known = ConfigOption.all.map(\.environmentName)
        for name in environment.keys.sorted() where name.hasPrefix("THUMBD_") {
            guard !known.contains(name), !toolVariables.contains(name) else { continue }
            throw ConfigError("unknown environment variable \(name)\(suggestion(for: name, among: known) { $0 }): thumbd reads "
                + "THUMBD_<KEY> for the keys that --help lists, so unset or rename it")
        }
    }
}
