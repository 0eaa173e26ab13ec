import Foundation
import HTTP
import Rendering
import Testing
import TestSupport
import Thumbnails
@testable import ThumbServer

/// Config precedence and validation (README "Configuration").
@Suite struct ConfigTests {
    func load(_ arguments: [String], _ environment: [String: String] = [:]) throws -> Config {
        guard case .run(let config) = try ConfigLoader.load(arguments: arguments, environment: environment) else {
            throw ConfigError("expected a config")
        }
        return config
    }

    /// The shipped file names every key (but `library`, which has no default: each run gives
    /// it), each with its default, so that it documents them all and a key added to
    /// `ConfigOption.all` without it fails here.
    @Test func theShippedConfigFileSaysWhatTheDefaultsSay() throws {
        let path = Paths.packageRoot + "/config/thumbd.json"
        let config = try load(["--config", path, "--library", "/photos"])
        var expected = Config()
        expected.library = "/photos"
        #expect(config == expected)
        let file = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: path)))
            as? [String: Any])
        let keys = Set(ConfigOption.all.map(\.key)).subtracting(["library"]).union(["grids", "client_keys"])
        #expect(keys.subtracting(file.keys).sorted() == [], "keys missing from config/thumbd.json")
        #expect(Set(file.keys).subtracting(keys).sorted() == [], "keys config/thumbd.json should not have")
    }

    /// Every key a subsystem reads reaches its configuration (`Config.pipeline(descriptors:libraryRoot:)`,
    /// `.service(descriptors:)`, `.http(eventLoops:descriptors:onExchange:)`), each set here to a value
    /// other than its default; the descriptor budget's parts reach theirs.
    /// `--check-config` (issue 29, item 5), as `nginx -t`: a configuration that holds prints
    /// one line and starts nothing; what is wrong is the one sentence a start would give (a
    /// value, a key, the file), or the library that is not a readable directory.
    @Test func checkConfigSaysValidOrTheOneSentenceOfWhatIsWrong() throws {
        let library = Paths.fixturePhotos
        guard case .help(let line) = try ConfigLoader.load(arguments: ["--check-config", "--library", library, "--port", "9000"],
                                                           environment: [:]) else {
            Issue.record("--check-config of a valid configuration did not answer with a line to print")
            return
        }
        #expect(line == "thumbd: the configuration is valid (library \(library), cache_dir .thumbd-cache, 127.0.0.1:9000)\n")
        func refusal(_ arguments: [String]) -> String? {
            do { _ = try ConfigLoader.load(arguments: ["--check-config"] + arguments, environment: [:]); return nil }
            catch { return error.description }
        }
        #expect(refusal(["--library", "/nonexistent-thumbd-library"]) == "library /nonexistent-thumbd-library is not a directory")
        #expect(refusal(["--library", library + "/Landscape_1.jpg"]) == "library \(library)/Landscape_1.jpg is not a directory")
        #expect(refusal(["--library", library, "--port", "70000"])?.contains("--port 70000") == true)
        #expect(refusal(["--library", library, "--no-such-flag", "1"])?.hasPrefix("unknown option --no-such-flag") == true)
        #expect(refusal([]) == "no library: give --library DIR (or THUMBD_LIBRARY, or 'library' in the config file)")
        // As a start would refuse them, before anything is made.
        #expect(refusal(["--library", library, "--cache-dir", library + "/cache"])
                == "cache_dir \(library)/cache is inside the library \(library): choose a cache_dir outside the library")
        let above = (library as NSString).deletingLastPathComponent
        #expect(refusal(["--library", library, "--cache-dir", above])
                == "cache_dir \(above) contains the library \(library): choose a cache_dir outside the library")
        #expect(refusal(["--library", library, "--access-log", "combined", "--access-log-file", "/nonexistent-thumbd/dir/a.log"])
                == "access_log_file /nonexistent-thumbd/dir/a.log cannot be opened for appending: No such file or directory")
        #expect(refusal(["--library", library, "--cache-dir", library + "/Landscape_1.jpg/cache"])?
                    .hasPrefix("cache_dir \(library)/Landscape_1.jpg/cache is inside the library") == true)
        #expect(refusal(["--library", library, "--cache-dir", "/etc/hostname/cache"])
                == "cache_dir /etc/hostname/cache cannot be used: cannot create the cache directory /etc/hostname/cache: "
                + "/etc/hostname is not a directory")
        #expect(!FileManager.default.fileExists(atPath: library + "/cache"))
        guard case .help(let v6) = try ConfigLoader.load(arguments: ["--check-config", "--library", library, "--host", "::1",
                                                                      "--port", "9000"], environment: [:]) else { return }
        #expect(v6.hasSuffix(", [::1]:9000)\n"))
    }

    @Test func eachSubsystemGetsItsKeys() {
        var config = Config()
        config.cacheDirectory = "/c"
        config.memoryCacheBytes = 1
        config.diskCacheBytes = 2
        config.renderWorkers = 3
        config.prefetchWorkers = 4
        config.renderQueueLimit = 5
        config.maxSourcePixels = 6
        config.maxSourceBytes = 7
        config.renderTimeoutSeconds = 8
        config.grids = [GridSpec(name: "s", width: 9, height: 10, fit: .contain)]
        config.cacheControl = "private"
        config.cacheControlUnversioned = "no-store"
        config.webp = false
        config.quality = 11
        config.adminToken = "t"
        config.host = "::1"
        config.port = 12
        config.maxConnections = 13
        config.headerTimeoutSeconds = 14
        config.bodyTimeoutSeconds = 19
        config.idleTimeoutSeconds = 15
        config.maxHeaderBytes = 16
        config.maxBodyBytes = 17
        config.signingKeys = ["k:" + String(repeating: "0a", count: 32)]
        config.signedURLMaxSeconds = 20
        config.signedURLBucketSeconds = 21
        config.clientKeys = [ClientKey(id: "c", sha256: [UInt8](repeating: 1, count: 32), prefix: [Array("p".utf8)], expires: 22)]
        config.prefetchClientJobs = 23
        config.prefetchClientItemsPerJob = 24
        config.prefetchClientItemsPerMinute = 25
        let descriptors = DescriptorBudget(limit: 1 << 16, maxConnections: 13, renderWorkers: 3, eventLoops: 18, memoryTier: true)
        config.deriveGrids = false
        let pipeline = config.pipeline(descriptors: descriptors, libraryRoot: "/l")
        #expect(pipeline.cacheDirectory == "/c" && pipeline.memoryLimitBytes == 1 && pipeline.diskLimitBytes == 2)
        #expect(pipeline.libraryRoot == "/l" && pipeline.grids == config.grids && !pipeline.deriveGrids)
        #expect(pipeline.renderWorkers == 3 && pipeline.prefetchWorkers == 4 && pipeline.renderQueueLimit == 5)
        #expect(pipeline.maxSourcePixels == 6 && pipeline.maxSourceBytes == 7 && pipeline.renderDeadlineSeconds == 8)
        // 65,536 - (64 + 4 x (3 + 18)) reserved - 13 connections; no disk entries kept open.
        #expect(pipeline.memoryFileBudget == 65_375 && pipeline.openDiskEntryLimit == 0)
        let service = config.service(descriptors: descriptors)
        #expect(service.descriptors == descriptors)
        #expect(service.grids == config.grids && service.cacheControl == "private")
        #expect(service.unversionedCacheControl == "no-store" && !service.webpEnabled)
        #expect(service.quality == 11 && service.adminToken == "t")
        #expect(service.signing.keys == [URLSigning.Key(id: "k", secret: [UInt8](repeating: 10, count: 32))])
        #expect(service.signing.maxLifetimeSeconds == 20 && service.signing.bucketSeconds == 21)
        #expect(service.clientKeys == config.clientKeys)
        #expect(service.prefetchLimits == PrefetchLimits(concurrentJobs: 23, itemsPerJob: 24, itemsPerMinute: 25))
        let http = config.http(eventLoops: 18, descriptors: descriptors, onExchange: nil)
        #expect(http.eventLoopCount == 18 && http.host == "::1" && http.port == 12 && http.maxConnections == 13)
        #expect(http.headerTimeout == 14 && http.bodyTimeout == 19 && http.idleTimeout == 15)
        #expect(http.maxHeaderBytes == 16 && http.maxRequestLineBytes == 16 && http.maxBodyBytes == 17)
    }

    @Test func flagsBeatEnvironmentBeatFile() throws {
        let file = NSTemporaryDirectory() + "thumbd-config-\(UUID().uuidString).json"
        try Data(#"{"port": 1, "quality": 50, "webp": false, "render_workers": 0, "grids": [{"name": "s", "width": 100, "height": 50, "fit": "cover"}]}"#.utf8)
            .write(to: URL(fileURLWithPath: file))
        defer { try? FileManager.default.removeItem(atPath: file) }
        let config = try load(["--config", file, "--library", "/p", "--port=3", "--access-log"],
                              ["THUMBD_PORT": "2", "THUMBD_QUALITY": "60", "THUMBD_CACHE_DIR": "/c"])
        #expect(config.port == 3)
        #expect(config.quality == 60)
        #expect(config.cacheDirectory == "/c")
        #expect(config.webp == false)
        #expect(config.accessLog == .brief)
        #expect(config.grids.map(\.name) == ["s"])
        #expect(config.grids.first?.height == 50)
    }

    @Test func aHeaderValueWithAControlCharacterIsRefused() throws {
        for value in ["public\r\nX-Evil: 1", "no-cache\n", "private\u{7F}"] {
            var config = Config()
            config.library = "/photos"
            config.cacheControlUnversioned = value
            #expect(throws: ConfigError.self) { try ConfigLoader.validate(config) }
            config.cacheControlUnversioned = Config().cacheControlUnversioned
            config.cacheControl = value
            #expect(throws: ConfigError.self) { try ConfigLoader.validate(config) }
        }
        var tabbed = Config()
        tabbed.library = "/photos"
        tabbed.cacheControl = "public,\tmax-age=60"
        try ConfigLoader.validate(tabbed)
    }

    /// The sentence `load` refuses `arguments` and `environment` with (empty when it does not).
    func refusal(_ arguments: [String], _ environment: [String: String] = [:]) -> String {
        do {
            _ = try ConfigLoader.load(arguments: arguments, environment: environment)
            return ""
        } catch {
            return error.description
        }
    }

    /// A file of `json`, removed when the test ends (`defer` the returned closure).
    func configFile(_ json: String) throws -> (path: String, remove: () -> Void) {
        let path = NSTemporaryDirectory() + "thumbd-config-\(UUID().uuidString).json"
        try Data(json.utf8).write(to: URL(fileURLWithPath: path))
        return (path, { try? FileManager.default.removeItem(atPath: path) })
    }

    /// A list in the config file is a JSON array of strings (docs/configuration.md); a lone
    /// string, which could be one entry or several split at commas, was taken as the
    /// environment's comma-separated list: now it stops start-up naming the key.
    @Test func aListGivenAsAStringInTheFileIsRefused() throws {
        let string = try configFile(#"{"trusted_proxies": "10.0.0.0/8"}"#)
        defer { string.remove() }
        #expect(refusal(["--config", string.path, "--library", "/p"])
                == "key 'trusted_proxies' in the config file \(string.path) must be a JSON array of strings, one for each entry: "
                + #""trusted_proxies": ["127.0.0.1", "10.0.0.0/8"]"#)
        let origins = try configFile(#"{"cors_origins": "*"}"#)
        defer { origins.remove() }
        #expect(refusal(["--config", origins.path, "--library", "/p"]).hasPrefix("key 'cors_origins' in the config file \(origins.path) must be a JSON array of strings"))
        let array = try configFile(#"{"trusted_proxies": ["10.0.0.0/8", "::1"], "cors_origins": ["*"]}"#)
        defer { array.remove() }
        guard case .run(let config) = try ConfigLoader.load(arguments: ["--config", array.path, "--library", "/p"], environment: [:]) else {
            Issue.record("not a configuration to run")
            return
        }
        #expect(config.trustedProxies == ["10.0.0.0/8", "::1"])
        #expect(config.corsOrigins == ["*"])
    }

    /// A list's entry that is empty or has white space at an end (in the file, where a string
    /// is taken as written) was dropped or trimmed in silence (found by an operator in
    /// `trusted_proxies`); now it stops start-up naming its position, never its text (a
    /// `signing_keys` entry holds a secret). Outside the file spaces around commas are the
    /// separator's, and `a,,b` or a trailing comma leaves an empty entry.
    @Test func aListEntryThatIsEmptyOrSpacedIsRefusedByItsPosition() throws {
        for (json, fault) in [(#"{"trusted_proxies": ["10.0.0.1", ""]}"#, "entry 2 is empty"),
                              (#"{"trusted_proxies": ["10.0.0.1 "]}"#, "entry 1 has white space at its end"),
                              (#"{"cors_origins": [" https://a.example"]}"#, "entry 1 has white space at its start"),
                              (#"{"signing_keys": ["a:\#(String(repeating: "0", count: 64)),b"]}"#,
                               "entry 1 holds a comma: give each entry as a string of its own")] {
            let file = try configFile(json)
            defer { file.remove() }
            let key = json.dropFirst(2).prefix { $0 != "\"" }
            #expect(refusal(["--config", file.path, "--library", "/p"]) == "key '\(key)' in the config file \(file.path): \(fault)")
        }
        #expect(refusal(["--library", "/p", "--trusted-proxies", "10.0.0.1,,10.0.0.2"])
                == "--trusted-proxies: entry 2 is empty (a comma-separated list)")
        #expect(refusal(["--library", "/p"], ["THUMBD_TRUSTED_PROXIES": "10.0.0.1, "])
                == "environment variable THUMBD_TRUSTED_PROXIES: entry 2 is empty (a comma-separated list)")
        #expect(try load(["--library", "/p"], ["THUMBD_TRUSTED_PROXIES": " 10.0.0.1 , ::1 "]).trustedProxies == ["10.0.0.1", "::1"])
        #expect(try load(["--library", "/p", "--trusted-proxies", ""]).trustedProxies == [])
        #expect(try load(["--library", "/p"], ["THUMBD_CORS_ORIGINS": " "]).corsOrigins == [])
    }

    /// A config file that cannot be read says why, in strerror(3)'s words (found by an
    /// operator: `--config /nonexistent.json` said only "cannot read"); one that is not JSON
    /// says where (`aConfigFileThatIsNotStrictJSONIsRefusedNamingThePosition`).
    @Test func aConfigFileThatCannotBeReadSaysWhy() throws {
        let missing = "/nonexistent-thumbd-\(UUID().uuidString).json"
        #expect(refusal(["--config", missing, "--library", "/p"]) == "cannot read the config file \(missing): No such file or directory")
        let directory = TemporaryDirectory("thumbd-config-dir")
        #expect(refusal(["--config", directory.path, "--library", "/p"])
                == "cannot read the config file \(directory.path): Is a directory")
        #expect(refusal(["--config", "/etc/hostname/thumbd.json", "--library", "/p"])
                == "cannot read the config file /etc/hostname/thumbd.json: Not a directory")
        let array = try configFile("[1]")
        defer { array.remove() }
        #expect(refusal(["--config", array.path, "--library", "/p"]) == "the config file \(array.path) is not a JSON object")
    }

    /// A misspelt key inside a grid object, and a per-grid key that is a top-level one, were
    /// ignored in silence (a per-grid "quality" did nothing); now each stops start-up naming it.
    @Test func anUnknownKeyInAGridIsRefusedNamingIt() throws {
        let typo = try configFile(#"{"grids": [{"name": "3", "widht": 393, "width": 393, "height": 393, "fit": "cover"}]}"#)
        defer { typo.remove() }
        #expect(refusal(["--config", typo.path, "--library", "/p"])
                == "unknown key 'widht' in grid '3' of 'grids' in the config file \(typo.path) (did you mean 'width'?); "
                + "a grid has name, width, height and fit")
        let quality = try configFile(#"{"grids": [{"name": "1", "width": 1179, "height": 2358, "fit": "contain", "quality": 90}]}"#)
        defer { quality.remove() }
        #expect(refusal(["--config", quality.path, "--library", "/p"])
                == "unknown key 'quality' in grid '1' of 'grids' in the config file \(quality.path): 'quality' is a "
                + "top-level key, set once for every grid")
        let unnamed = try configFile(#"{"grids": [{"width": 1, "height": 1, "fit": "cover", "colour": "red"}]}"#)
        defer { unnamed.remove() }
        #expect(refusal(["--config", unnamed.path, "--library", "/p"]).hasPrefix("unknown key 'colour' in grid 1 of 'grids'"))
    }

    /// A grid name is a segment of its URLs: "." and ".." (which clients drop as dot segments, so
    /// the listed URLs reached nothing), and names with characters a URL must escape, are
    /// refused; ordinary names pass. Found by a fresh-eyes session.
    @Test func aGridNameThatCannotBeAURLSegmentIsRefused() throws {
        for name in ["..", ".", "a b", "3?x", "é"] {
            let file = try configFile(#"{"grids": [{"name": "\#(name)", "width": 10, "height": 10, "fit": "cover"}]}"#)
            defer { file.remove() }
            #expect(refusal(["--config", file.path, "--library", "/p"])
                    == "key 'grids': grid names must be unique and made of letters, digits, '-', '.', '_' and '~' "
                    + "(not '.' or '..', which URLs drop): got '\(name)'", "\(name)")
        }
        let fine = try configFile(#"{"grids": [{"name": "tile_2.5x-~", "width": 10, "height": 10, "fit": "cover"}]}"#)
        defer { fine.remove() }
        #expect(try load(["--config", fine.path, "--library", "/p"]).grids.map(\.name) == ["tile_2.5x-~"])
    }

    /// `--library --port 18400` took `--port` as the library and then refused '18400' as an
    /// unexpected argument; the left-out value is named now. A value that starts with `--` is
    /// still given with `=`. Found by a fresh-eyes session.
    @Test func anOptionLeftWithoutItsValueIsNamed() throws {
        #expect(refusal(["--library", "--port", "18400"])
                == "option --library needs a value, and --port is an option (a value that starts with -- is given as --library=VALUE)")
        #expect(try load(["--library=--odd", "--port", "18400"]).library == "--odd")
        #expect(try load(["--library", "/p", "--cache-control", "public"]).library == "/p")
    }

    /// `--no-quality` (a negation of an option that takes a value) was refused as needing a
    /// value, and `--no-quality 80` as an unknown option only after taking 80 as its value: it is
    /// no option, said as one, pointing at the option it looks like; other unknown flags with
    /// no value still get the nearest one. Found by an operator.
    @Test func aNegationOfAnOptionThatTakesAValueIsNoOption() throws {
        let hint = "unknown option --no-quality (--quality is not true/false: give it a value, --quality VALUE); see --help"
        #expect(refusal(["--library", "/p", "--no-quality"]) == hint)
        #expect(refusal(["--library", "/p", "--no-quality", "80"]) == hint)
        #expect(refusal(["--library", "/p", "--no-quality=80"]) == hint)
        #expect(refusal(["--library", "/p", "--cache-dri"]) == "unknown option --cache-dri (did you mean --cache-dir?); see --help")
        #expect(refusal(["--library", "/p", "--no-webpp"]) == "unknown option --no-webpp (did you mean --no-webp?); see --help")
        #expect(try load(["--library", "/p", "--no-webp"]).webp == false)
    }

    /// `THUMBD_QUALTY=40` was ignored in silence; an unknown `THUMBD_*` variable now stops
    /// start-up, but the two the project's test tools read (`THUMBD_CORPUS`, `THUMBD_TEST_PORTS`)
    /// are left to them.
    @Test func anUnknownThumbdVariableIsRefusedButTheTestToolsOwnAreNot() throws {
        #expect(refusal(["--library", "/p"], ["THUMBD_QUALTY": "40"])
                == "unknown environment variable THUMBD_QUALTY (did you mean THUMBD_QUALITY?): thumbd reads "
                + "THUMBD_<KEY> for the keys that --help lists, so unset or rename it")
        #expect(refusal(["--library", "/p"], ["THUMBD_": "1"]).hasPrefix("unknown environment variable THUMBD_:"))
        let config = try load(["--library", "/p"], ["THUMBD_CORPUS": "/corpus", "THUMBD_TEST_PORTS": "18200-18299",
                                                    "THUMBD_QUALITY": "40", "HOME": "/root", "thumbd_qualty": "1"])
        #expect(config.quality == 40)
    }

    /// Unknown keys and flags name the nearest known one when it is close.
    @Test func unknownNamesSuggestTheClosestKnownOne() throws {
        let file = try configFile(#"{"qualty": 40}"#)
        defer { file.remove() }
        #expect(refusal(["--config", file.path, "--library", "/p"])
                == "unknown key 'qualty' in the config file \(file.path) (did you mean 'quality'?)")
        #expect(refusal(["--library", "/p", "--cache-dri", "/c"]) == "unknown option --cache-dri (did you mean --cache-dir?); see --help")
        #expect(refusal(["--library", "/p", "--zzzzz", "1"]) == "unknown option --zzzzz; see --help")
        #expect(ConfigLoader.editDistance(Array("widht"), Array("width")) == 1)   // a swap is one edit
        #expect(ConfigLoader.editDistance(Array("quality"), Array("qualty")) == 1)
        #expect(ConfigLoader.editDistance(Array("port"), Array("host")) == 2)
        #expect(ConfigLoader.closest(to: "pot", among: ["port", "host"]) == "port")
        #expect(ConfigLoader.closest(to: "fit", among: ["name", "width"]) == nil)
    }

    @Test func booleanFlagsTakeEveryUsualSpelling() throws {
        #expect(try load(["--library", "/p", "--webp", "false"]).webp == false)
        #expect(try load(["--library", "/p", "--no-webp"]).webp == false)
        #expect(try load(["--library", "/p", "--webp=no", "--access-log", "true"]).accessLog == .brief)
        #expect(try load(["--access-log", "--library", "/p"]).accessLog == .brief)
        #expect(try load(["--library", "/p", "--webp=no"]).webp == false)
    }

    @Test(arguments: [(["--library", "/p", "--port", "x"], "--port"), (["--library", "/p", "--nope", "1"], "--nope"),
                      (["stray"], "stray"), (["--library", "/p", "--quality", "0"], "--quality")])
    func badFlagsNameTheFlag(arguments: [String], culprit: String) {
        #expect { try ConfigLoader.load(arguments: arguments, environment: [:]) } throws: { error in
            (error as? ConfigError)?.description.contains(culprit) == true
        }
    }

    /// A library path given as bytes that are not UTF-8 arrives with U+FFFD in their place;
    /// the error says so instead of only "not a readable directory" (found by a fresh-eyes session).
    @Test func aLibraryPathThatIsNotUTF8IsNamedAsSuch() {
        var config = Config()
        config.library = NSTemporaryDirectory() + "lib\u{FFFD}"
        config.cacheDirectory = NSTemporaryDirectory() + "thumbd-cache-\(UUID().uuidString)"
        #expect { _ = try Thumbd(config: config, process: ProcessSetup.prepare()) } throws: { error in
            (error as? ConfigError)?.description.contains("is not a readable directory (its path is not valid UTF-8") == true
        }
    }

    @Test func aVideoDecodeHasItsOwnDeadline() throws {
        // 5 s by default, whatever render_timeout_seconds says; the flag, rounded to the ms.
        #expect(Config().videoPosters()?.configuration.timeoutMilliseconds == 5000)
        let config = try load(["--library", "/p", "--render-timeout-seconds", "60", "--video-decode-timeout-seconds", "0.25"])
        #expect(config.videoDecodeTimeoutSeconds == 0.25)
        #expect(config.videoPosters()?.configuration.timeoutMilliseconds == 250)
        // No 0 (none): a decode that hangs would hold its helper for good.
        #expect { try ConfigLoader.load(arguments: ["--library", "/p", "--video-decode-timeout-seconds", "0"], environment: [:]) } throws: { error in
            (error as? ConfigError)?.description.contains("from 0.1 to 600.0 for video_decode_timeout_seconds") == true
        }
    }

    @Test func anOutOfRangeNumberSaysTheRange() {
        #expect { try ConfigLoader.load(arguments: ["--library", "/p", "--port", "70000"], environment: [:]) } throws: { error in
            (error as? ConfigError)?.description.contains("--port 70000 is not a valid integer from 0 to 65535 for port") == true
        }
    }

    /// A trailing comma or a repeated key was accepted (the last of the repeated keys won) and a
    /// comment gave "is not a JSON object": each stops start-up naming where and what
    /// (`StrictJSON.syntaxError`). A byte order mark is still fine.
    @Test func aConfigFileThatIsNotStrictJSONIsRefusedNamingThePosition() throws {
        for (json, problem) in [
            ("{\n  \"port\": 8080,\n  \"webp\": true,\n}\n", "line 3, column 15 (byte 32): a trailing comma before '}'"),
            ("{\"port\": 8080, \"port\": 9090}", "line 1, column 16 (byte 15): the key \"port\" appears twice in one object"),
            ("{\n  // the port\n  \"port\": 8080\n}", "line 2, column 3 (byte 4): JSON has no comments (// or /* */)"),
            ("{\"grids\": [{\"name\": \"3\", \"width\": 393, \"height\": 393, \"fit\": \"cover\",}]}",
             "line 1, column 69 (byte 68): a trailing comma before '}'"),
        ] {
            let file = try configFile(json)
            defer { file.remove() }
            #expect(refusal(["--config", file.path, "--library", "/p"]) == "the config file \(file.path) is not valid JSON at \(problem)")
        }
        let marked = try configFile("\u{FEFF}{\"port\": 8081}")
        defer { marked.remove() }
        #expect(try load(["--config", marked.path, "--library", "/p"]).port == 8081)
    }

    @Test(arguments: [#"{"port": true}"#, #"{"port": 1.5}"#, #"{"webp": 1}"#, #"{"grids": []}"#,
                      #"{"grids": [{"name": "a", "width": 0, "height": 1, "fit": "cover"}]}"#,
                      #"{"grids": [{"name": "a", "width": 1, "height": 1, "fit": "stretch"}]}"#, #"[1]"#])
    func badFilesAreRefused(json: String) throws {
        let file = NSTemporaryDirectory() + "thumbd-bad-\(UUID().uuidString).json"
        try Data(json.utf8).write(to: URL(fileURLWithPath: file))
        defer { try? FileManager.default.removeItem(atPath: file) }
        #expect(throws: ConfigError.self) { try ConfigLoader.load(arguments: ["--config", file, "--library", "/p"], environment: [:]) }
    }
}
