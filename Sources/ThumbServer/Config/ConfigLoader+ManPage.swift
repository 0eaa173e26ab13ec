/// thumbd(8), the manual page the Debian package installs, generated from the same help texts as
/// `--help` and docs/configuration.md (`ConfigOption.all`, `commandFlags`, `fileOnlyOptions`,
/// `Config()`'s defaults), so that it is never written twice. Printed by the hidden `thumbd --man`;
/// packaging/build-deb.sh gzips it into the package.
extension ConfigLoader {
    /// The manual page in roff (man(7) macros), section 8.
    public static func manPage() -> String {
        let defaults = Config()
        var out = [".TH THUMBD 8 \"\" \"thumbd \(roff(BuildInfo.current.version))\" \"System Administration\"",
                   ".SH NAME", "thumbd \\- image thumbnail cache server for photo-grid apps",
                   ".SH SYNOPSIS",
                   ".B thumbd", "\\-\\-library \\fIDIR\\fR [\\fIoptions\\fR]", ".br",
                   ".B thumbd sign", "\\-\\-grid \\fIGRID\\fR \\-\\-path \\fIASSET_PATH\\fR [\\fIoptions\\fR]",
                   ".SH DESCRIPTION",
                   "thumbd answers HTTP GET requests for thumbnails of the photos and videos under",
                   "\\fB\\-\\-library\\fR, at the grid sizes of the \\fBgrids\\fR setting, rendered with libvips and kept",
                   "in a memory and a disk cache (\\fBcache_dir\\fR). It lists the library at /assets, answers /stats,",
                   "/metrics and /healthz, and serves a photo grid at /.",
                   ".PP", "\\fBthumbd sign\\fR prints a signed thumbnail URL (see \\fBsigning_keys\\fR).",
                   ".PP",
                   roff("Precedence: defaults < config file (--config FILE, else \(defaultPath) if present) < THUMBD_* environment < flags."),
                   roff("Flags: --key value or --key=value; booleans also --key (true) and --no-key (false)."),
                   "A bad value or an unknown key stops start-up with exit status 2 and one sentence naming it.",
                   ".SH OPTIONS"]
        for command in commandFlags {
            out += [".TP", "\\fB" + roff(command.flag) + "\\fR", roff(command.help)]
        }
        for option in ConfigOption.all {
            let value = option.get(defaults)
            let placeholder = option.kind == .boolean ? "" : " \\fI" + option.key.uppercased() + "\\fR"
            out += [".TP", "\\fB" + roff(option.flag) + "\\fR" + placeholder + ", \\fB" + option.environmentName + "\\fR, key \\fB"
                    + roff(option.key) + "\\fR",
                    roff(option.help) + (option.bounds.isEmpty ? "" : " (" + roff(option.bounds) + ")")
                    + ". Default: " + (value.isEmpty ? "none" : roff(value)) + "."]
        }
        for option in fileOnlyOptions {
            out += [".TP", "key \\fB" + option.key + "\\fR (config file only): " + roff(option.shape),
                    roff(option.help) + ". Default: " + roff(option.defaultValue) + "."]
        }
        out += [".SH FILES",
                ".TP", "/etc/thumbd/thumbd.json",
                "The configuration file the packaged systemd unit gives as \\fB\\-\\-config\\fR: strict JSON (no comments),",
                "one object of the keys above. Set \\fBlibrary\\fR.",
                ".TP", "/var/cache/thumbd",
                "The packaged unit's cache directory (systemd's CacheDirectory=): thumbnails, the library index",
                "(index.sqlite) and thumbd.lock, which one server at a time holds.",
                ".SH SIGNALS",
                roff("SIGINT and SIGTERM stop accepting, let in-flight requests finish (up to shutdown_grace_seconds) and exit 0."),
                ".PP",
                roff("SIGHUP reads the configuration again: client and signing keys, the admin token, CORS origins, the access log "
                    + "and the cache limits take effect for the next request; a changed key that takes a restart is said and kept, "
                    + "and a configuration that does not load is said and changes nothing."),
                ".PP",
                roff("SIGUSR1 reopens access_log_file (after logrotate moved it)."),
                ".SH EXIT STATUS",
                "0 after a stop by signal or a printing flag; 2 when the configuration cannot be used or the server",
                "cannot start (the port is taken, another thumbd holds the cache directory).",
                ".SH SEE ALSO",
                "systemctl(1), journalctl(1), /usr/share/doc/thumbd/"]
        return out.joined(separator: "\n") + "\n"
    }

    /// `text` safe as roff running text: backslashes escaped, `-` as a real minus (`\-`, so that
    /// flags can be copied), a line's leading `.` or `'` kept from being read as a request.
    static func roff(_ text: String) -> String {
        var escaped = text.replacingOccurrences(of: "\\", with: "\\e").replacingOccurrences(of: "-", with: "\\-")
        if escaped.hasPrefix(".") || escaped.hasPrefix("'") { escaped = "\\&" + escaped }
        return escaped
    }
}
