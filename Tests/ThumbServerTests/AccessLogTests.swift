import Foundation
import HTTP
import Testing
import TestSupport
@testable import ThumbServer

/// The access log's formats (exact lines), the client address behind trusted proxies (CIDR
/// ranges, IPv4 and IPv6), the `access_log` words, and the file reopened without losing lines.
@Suite struct AccessLogTests {
    /// 2026-12-06T06:07:00.125Z (1796537220 worked out with Python's calendar.timegm).
    static let time = 1_796_537_220.125

    /// A miss of grid 5 through two proxies: the client 198.51.100.4 sent it to 10.0.0.9, which
    /// passed it to 10.0.0.2, thumbd's peer.
    static func miss() -> HTTPExchangeRecord {
        var record = HTTPExchangeRecord(method: "GET", target: "/thumbnails/5/Landscape_1.jpg?v=abc", status: 200,
                                        bodyBytes: 5120, durationNanoseconds: 41_204_000,
                                        responseHeaders: HTTPHeaders([("X-Cache", "MISS"), ("Server-Timing", "render;dur=38.6")]))
        record.peer = IPAddress("10.0.0.2")
        record.version = .http1_1
        record.requestHeaders = HTTPHeaders([("Referer", "https://photos.example.com/"), ("User-Agent", #"Mozilla/5.0 "x""#),
                                             ("X-Forwarded-For", "198.51.100.4, 10.0.0.9")])
        return record
    }

    static func entry(_ record: HTTPExchangeRecord, trusting proxies: [String] = ["10.0.0.0/8"], offset: Int = 3600) throws -> AccessLogEntry {
        let client = try TrustedProxies(proxies).client(peer: record.peer, headers: record.requestHeaders)
        return AccessLogEntry(exchange: record, client: client, time: time, utcOffsetSeconds: offset)
    }

    @Test func combinedIsNginxsLineThenRequestTimeCacheAndRender() throws {
        let line = try #require(AccessLogFormat.combined.line(try Self.entry(Self.miss())))
        #expect(line == #"198.51.100.4 - - [06/Dec/2026:07:07:00 +0100] "GET /thumbnails/5/Landscape_1.jpg?v=abc HTTP/1.1" "#
            + #"200 5120 "https://photos.example.com/" "Mozilla/5.0 \x22x\x22" 0.041 MISS 38.6"# + "\n")
        // nginx's combined format, field by field (ngx_http_log_module), then thumbd's three.
        let combined = try Regex(#"^(\S+) - (\S+) \[(\d{2}/[A-Z][a-z]{2}/\d{4}:\d{2}:\d{2}:\d{2} [+-]\d{4})\] "([^"]*)" (\d{3}) (\d+) "([^"]*)" "([^"]*)" (\d+\.\d{3}) (\S+) (\S+)\n$"#)
        let match = try #require(line.wholeMatch(of: combined))
        #expect(match.output[1].substring == "198.51.100.4")
        #expect(match.output[2].substring == "-")
        #expect(match.output[4].substring == "GET /thumbnails/5/Landscape_1.jpg?v=abc HTTP/1.1")
        #expect(match.output[5].substring == "200")
        #expect(match.output[11].substring == "38.6")
    }

    @Test func combinedWritesWhatItLacksAsADash() throws {
        // A request that did not parse: no method, version, headers; a hit: no render; UTC; a west offset.
        var bad = HTTPExchangeRecord(method: "", target: "", status: 400, bodyBytes: 95, durationNanoseconds: 0,
                                     responseHeaders: HTTPHeaders())
        bad.peer = IPAddress("2001:db8::7")
        #expect(AccessLogFormat.combined.line(try Self.entry(bad, offset: 0))
                == #"2001:db8::7 - - [06/Dec/2026:06:07:00 +0000] "-" 400 95 "-" "-" 0.000 - -"# + "\n")
        var hit = Self.miss()
        hit.responseHeaders = HTTPHeaders([("X-Cache", "HIT-MEMORY")])
        hit.requestHeaders = HTTPHeaders([("User-Agent", "caf\u{E9}\\")])
        hit.peer = nil
        #expect(AccessLogFormat.combined.line(try Self.entry(hit, offset: -5 * 3600 - 1800))
                == #"- - - [06/Dec/2026:00:37:00 -0530] "GET /thumbnails/5/Landscape_1.jpg?v=abc HTTP/1.1" 200 5120 "-" "#
                + #""caf\xC3\xA9\x5C" 0.041 HIT-MEMORY -"# + "\n")
    }

    @Test func briefIsThePresentLine() throws {
        #expect(AccessLogFormat.brief.line(try Self.entry(Self.miss()))
                == "2026-12-06T06:07:00Z GET /thumbnails/5/Landscape_1.jpg?v=abc 200 5120 MISS 41.20ms\n")
        #expect(AccessLogFormat.off.line(try Self.entry(Self.miss())) == nil)
    }

    @Test func jsonIsOneObjectPerLineWithSortedKeys() throws {
        let line = try #require(AccessLogFormat.json.line(try Self.entry(Self.miss())))
        #expect(line == #"{"body_bytes":5120,"cache":"MISS","method":"GET","protocol":"HTTP/1.1","#
            + #""referer":"https://photos.example.com/","remote_addr":"198.51.100.4","render_ms":38.6,"request_ms":41.2,"#
            + #""status":200,"target":"/thumbnails/5/Landscape_1.jpg?v=abc","time":"2026-12-06T06:07:00.125Z","#
            + #""user_agent":"Mozilla/5.0 \"x\""}"# + "\n")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
        #expect(object["user_agent"] as? String == #"Mozilla/5.0 "x""#)
    }

    /// `IPRange` reads addresses and CIDR ranges of both families; each row: entry, an address
    /// inside, an address outside.
    @Test(arguments: [
        ("127.0.0.1", "127.0.0.1", "127.0.0.2"),
        ("10.0.0.0/8", "10.255.1.2", "11.0.0.1"),
        ("192.168.1.128/25", "192.168.1.200", "192.168.1.100"),
        ("0.0.0.0/0", "203.0.113.9", "::1"),
        ("10.0.0.0/8", "::ffff:10.1.2.3", "::ffff:11.1.2.3"),   // IPv4-mapped peers of a dual-stack socket
        ("::1", "::1", "::2"),
        ("2001:db8::/32", "2001:db8:ffff::1", "2001:db9::1"),
        ("fc00::/7", "fdff::1", "fe00::1"),
        ("::/0", "2001:db8::1", "10.0.0.1"),
        // An IPv4-mapped IPv6 range is the IPv4 range it maps (104 - 96 = 8 bits), as a mapped peer is read as IPv4.
        ("::ffff:10.0.0.0/104", "10.255.1.2", "11.0.0.1"),
        ("::ffff:10.0.0.0/104", "::ffff:10.1.2.3", "2001:db8::1"),
        ("::ffff:192.0.2.0/120", "192.0.2.255", "192.0.3.0"),
        ("::ffff:0.0.0.0/96", "203.0.113.9", "::1"),
        ("::ffff:10.0.0.1", "10.0.0.1", "10.0.0.2"),
    ])
    func rangesHoldWhatTheyShould(entry: String, inside: String, outside: String) throws {
        let range = try IPRange(entry)
        #expect(range.contains(try #require(IPAddress(inside))))
        #expect(!range.contains(try #require(IPAddress(outside))))
    }

    /// A malformed `trusted_proxies` entry stops the start with one sentence naming it, by its
    /// position and its text.
    @Test(arguments: [
        ("localhost", "key 'trusted_proxies': entry 2, 'localhost', is not an IP address or a CIDR range (such as 127.0.0.1, 10.0.0.0/8 or fd00::/8)"),
        ("10.0.0.0/33", "key 'trusted_proxies': entry 2, '10.0.0.0/33', has a prefix length that is not 0 to 32, the bits of an IPv4 address"),
        ("2001:db8::/129", "key 'trusted_proxies': entry 2, '2001:db8::/129', has a prefix length that is not 0 to 128, the bits of an IPv6 address"),
        ("10.0.0.0/+8", "key 'trusted_proxies': entry 2, '10.0.0.0/+8', has a prefix length that is not 0 to 32, the bits of an IPv4 address"),
        ("10.0.0.0/", "key 'trusted_proxies': entry 2, '10.0.0.0/', has a prefix length that is not 0 to 32, the bits of an IPv4 address"),
        ("10.1.2.3/8", "key 'trusted_proxies': entry 2, '10.1.2.3/8', has bits set after its /8 prefix: write the range's first address (10.0.0.0/8) or the one address without a length"),
        ("2001:db8::1/32", "key 'trusted_proxies': entry 2, '2001:db8::1/32', has bits set after its /32 prefix: write the range's first address (2001:db8::/32) or the one address without a length"),
        ("127.0.0.1:8080", "key 'trusted_proxies': entry 2, '127.0.0.1:8080', is not an IP address or a CIDR range (such as 127.0.0.1, 10.0.0.0/8 or fd00::/8)"),
        // Leading zeros: refused in an address (inet_pton) and in a prefix length alike.
        ("127.0.0.01", "key 'trusted_proxies': entry 2, '127.0.0.01', is not an IP address or a CIDR range (such as 127.0.0.1, 10.0.0.0/8 or fd00::/8)"),
        ("10.0.0.0/08", "key 'trusted_proxies': entry 2, '10.0.0.0/08', has a prefix length with a leading zero: write it without (10.0.0.0/8), as an address is written without one"),
        ("0.0.0.0/00", "key 'trusted_proxies': entry 2, '0.0.0.0/00', has a prefix length with a leading zero: write it without (0.0.0.0/0), as an address is written without one"),
        // IPv4-mapped IPv6 ranges are read as written, 128 bits (those taken are in the table above).
        ("::ffff:10.0.0.0/129", "key 'trusted_proxies': entry 2, '::ffff:10.0.0.0/129', has a prefix length that is not 0 to 128, the bits of an IPv6 address"),
        ("::ffff:10.1.0.0/104", "key 'trusted_proxies': entry 2, '::ffff:10.1.0.0/104', has bits set after its /104 prefix: write the range's first address (::ffff:10.0.0.0/104) or the one address without a length"),
        ("::ffff:0:0/80", "key 'trusted_proxies': entry 2, '::ffff:0:0/80', has bits set after its /80 prefix: write the range's first address (::/80) or the one address without a length"),
        ("fd00::/008", "key 'trusted_proxies': entry 2, 'fd00::/008', has a prefix length with a leading zero: write it without (fd00::/8), as an address is written without one"),
    ])
    func malformedEntriesAreRefusedAtLoad(entry: String, sentence: String) throws {
        #expect(throws: ConfigError(sentence)) { try ConfigLoader.load(arguments: ["--library", "/p"], environment: ["THUMBD_TRUSTED_PROXIES": "::1," + entry]) }
    }

    /// Who the client is: X-Forwarded-For is read only from a trusted peer, from the right,
    /// up to the first address not trusted.
    @Test(arguments: [
        // peer, X-Forwarded-For, client
        ("198.51.100.4", "203.0.113.1", "198.51.100.4"),          // untrusted peer: its header is anyone's
        ("10.0.0.2", nil, "10.0.0.2"),                            // trusted, no header: the peer
        ("10.0.0.2", "203.0.113.1", "203.0.113.1"),               // nginx's $proxy_add_x_forwarded_for
        ("10.0.0.2", "192.0.2.66, 203.0.113.1", "203.0.113.1"),   // the client's own claim left of it is not believed
        ("10.0.0.2", "203.0.113.1, 10.0.0.9", "203.0.113.1"),     // two trusted hops
        ("10.0.0.2", "10.0.0.8, 10.0.0.9", "10.0.0.8"),           // every hop trusted: the leftmost
        ("10.0.0.2", "junk, 10.0.0.9", "10.0.0.9"),               // junk stops the walk at the last address read
        ("::1", "2001:db8::5", "2001:db8::5"),
    ] as [(String, String?, String)])
    func theClientIsTheFirstUntrustedAddressFromTheRight(peer: String, forwardedFor: String?, client: String) throws {
        let proxies = try TrustedProxies(["10.0.0.0/8", "::1"])
        #expect(proxies.client(peer: IPAddress(peer), forwardedFor: forwardedFor)?.description == client)
    }

    /// Several `X-Forwarded-For` lines are one list, in order (RFC 9110 §5.3): the client's own
    /// first line cannot win over the line a trusted proxy appended.
    @Test func everyForwardedForLineIsRead() throws {
        let proxies = try TrustedProxies(["127.0.0.1"])
        let headers = HTTPHeaders([("X-Forwarded-For", "1.2.3.4"), ("Accept", "*/*"), ("x-forwarded-for", "5.6.7.8")])
        #expect(proxies.client(peer: IPAddress("127.0.0.1"), headers: headers)?.description == "5.6.7.8")
        var parser = HTTPRequestParser()   // headers as received (bytes, looked up lazily)
        parser.append(contentsOf: Array(("GET / HTTP/1.1\r\nHost: a\r\nX-Forwarded-For: 1.2.3.4\r\n"
                                         + "X-Forwarded-For: 5.6.7.8, 9.9.9.9\r\n\r\n").utf8))
        let received = try #require(try parser.nextRequest())
        #expect(proxies.client(peer: IPAddress("127.0.0.1"), headers: received.headers)?.description == "9.9.9.9")
        #expect(proxies.client(peer: IPAddress("127.0.0.1"), headers: HTTPHeaders())?.description == "127.0.0.1")
    }

    @Test func accessLogTakesItsWordsAndTheOldBooleans() throws {
        func format(_ arguments: [String], _ environment: [String: String] = [:]) throws -> AccessLogFormat {
            guard case .run(let config) = try ConfigLoader.load(arguments: ["--library", "/p"] + arguments, environment: environment) else {
                throw ConfigError("expected a config")
            }
            return config.accessLog
        }
        #expect(try format([]) == .off)
        #expect(try format(["--access-log"]) == .brief)
        #expect(try format(["--access-log", "combined"]) == .combined)
        #expect(try format(["--access-log=json"]) == .json)
        #expect(try format(["--no-access-log"]) == .off)
        #expect(try format([], ["THUMBD_ACCESS_LOG": "false"]) == .off)
        #expect(try format([], ["THUMBD_ACCESS_LOG": "combined"]) == .combined)
        let dir = TemporaryDirectory()
        for (json, expected) in [("true", AccessLogFormat.brief), ("false", .off), (#""json""#, .json), (#""combined""#, .combined)] {
            dir.write("c.json", Array(#"{"access_log": \#(json)}"#.utf8))
            #expect(try format(["--config", dir.path + "/c.json"]) == expected)
        }
        dir.write("c.json", Array(#"{"access_log": "apache"}"#.utf8))
        #expect(throws: ConfigError("key 'access_log' in the config file \(dir.path)/c.json must be a word for access_log: "
                                    + "off, brief, combined or json (false is off, true brief)")) {
            try format(["--config", dir.path + "/c.json"])
        }
    }

    /// logrotate moves the file, then SIGUSR1 reopens it: every line written before the reopen
    /// is in the moved file, every line after in the new one.
    @Test func aReopenSendsLaterLinesToTheNewFileAndLosesNone() throws {
        let dir = TemporaryDirectory()
        let path = dir.path + "/access.log"
        let log = try AccessLog(settings: .init(format: .combined, trustedProxies: TrustedProxies([]), file: path),
                                clock: { (Self.time, 0) })
        var record = Self.miss()
        for index in 0..<50 {
            record.target = "/before/\(index)"
            log.write(record)
        }
        try FileManager.default.moveItem(atPath: path, toPath: path + ".1")
        log.reopen()
        for index in 0..<50 {
            record.target = "/after/\(index)"
            log.write(record)
        }
        log.flush()
        let old = try String(contentsOfFile: path + ".1", encoding: .utf8).split(separator: "\n")
        let new = try String(contentsOfFile: path, encoding: .utf8).split(separator: "\n")
        #expect(old.map { $0.split(separator: " ")[6] } == (0..<50).map { "/before/\($0)" })
        #expect(new.map { $0.split(separator: " ")[6] } == (0..<50).map { "/after/\($0)" })
        #expect(new.first.map(String.init) == #"10.0.0.2 - - [06/Dec/2026:06:07:00 +0000] "GET /after/0 HTTP/1.1" 200 5120 "#
                + #""https://photos.example.com/" "Mozilla/5.0 \x22x\x22" 0.041 MISS 38.6"#)
    }

    /// A reopen that fails (the directory made unwritable by a bad logrotate config) keeps the
    /// old file and says so in one sentence that names `access_log_file` once; the next reopen
    /// that works is said once, and later ones are not. Found by an operator.
    @Test func aFailedReopenIsSaidAndSoIsItsRecovery() throws {
        let dir = TemporaryDirectory()
        let logs = dir.path + "/logs"
        try FileManager.default.createDirectory(atPath: logs, withIntermediateDirectories: true)
        let path = logs + "/access.log"
        let log = try AccessLog(settings: .init(format: .combined, trustedProxies: TrustedProxies([]), file: path),
                                clock: { (Self.time, 0) })
        let said = LockedArray<String>()
        try FileManager.default.moveItem(atPath: logs, toPath: dir.path + "/moved")   // the path leads nowhere now
        log.reopen(say: { said.append($0) })
        log.reopen(say: { said.append($0) })
        log.flush()
        let failed = "access_log_file \(path) cannot be opened for appending: No such file or directory; "
            + "lines go on to the file open before"
        #expect(said.values == [failed, failed])
        try FileManager.default.createDirectory(atPath: logs, withIntermediateDirectories: true)
        log.reopen(say: { said.append($0) })
        log.reopen(say: { said.append($0) })
        log.write(Self.miss())
        log.flush()
        #expect(said.values == [failed, failed, "access_log_file \(path) is reopened: lines go to it again"])
        #expect(try String(contentsOfFile: path, encoding: .utf8).split(separator: "\n").count == 1)
    }

    @Test func aLogFileThatCannotBeOpenedStopsTheStart() throws {
        #expect(throws: ConfigError("access_log_file /nonexistent/dir/access.log cannot be opened for appending: "
                                    + "No such file or directory")) {
            try AccessLog(settings: .init(format: .combined, trustedProxies: TrustedProxies([]), file: "/nonexistent/dir/access.log"))
        }
    }
}
