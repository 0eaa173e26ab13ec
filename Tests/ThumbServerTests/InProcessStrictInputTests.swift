import Foundation
import HTTP
import Testing
@testable import ThumbServer

/// Input the contract does not allow is refused, not read leniently (issue 31, item 7; issue 27):
/// query parameters a route does not read, prefetch bodies that are not exactly a
/// `PrefetchBody` in strict JSON, and signed URLs whose `exp`, `kid` or `sig` has more than one
/// spelling. Driven through `ThumbService.respond`, with no socket.
@Suite struct InProcessStrictInputTests {
    typealias Service = InProcessRouteTests.Service
    static let photo = "/thumbnails/3/fuji-sp2500-tiny-orientation6.jpg"

    func error(_ response: HTTPResponse) -> (code: String?, message: String) {
        let json = (try? JSONSerialization.jsonObject(with: Data(response.body))) as? [String: Any]
        return (json?["error"] as? String, json?["message"] as? String ?? "")
    }

    /// `?prefix=2024` gave the whole library and `?width=` was ignored: a parameter a route does
    /// not read is 400 naming it, with the known one it is nearest to.
    @Test func aQueryParameterTheRouteDoesNotReadIs400NamingIt() throws {
        let service = try Service()
        service.thumbd.service.index.rescan()
        for (method, target, named, hint) in [
            ("GET", "/assets?prefix=2024", "prefix", "it takes sort, offset, limit, after"),
            ("GET", "/assets?sort=oldest&limt=5", "limt", "did you mean limit?"),
            ("GET", Self.photo + "?width=100", "width", "it takes v, format, exp, kid, sig"),
            ("GET", Self.photo + "?v=0&fromat=png", "fromat", "did you mean format?"),
            ("HEAD", Self.photo + "?%77idth=1", "width", "it takes"),
            ("DELETE", "/prefetch?alll=true", "alll", "did you mean all?"),
            ("POST", "/prefetch?all=true", "all", "it takes none"),
            ("GET", "/prefetch/1?verbose=1", "verbose", "it takes none"),
        ] {
            let response = service.respond(method, target, body: #"{"grid": "3", "paths": ["Landscape_1.jpg"]}"#)
            #expect(response.status == 400, "\(method) \(target)")
            let (code, message) = error(response)
            #expect(code == "bad_request", "\(method) \(target)")
            #expect(message.contains("query parameter \"\(named)\"") && message.contains(hint), "\(method) \(target): \(message)")
        }
        // What clients send (the gallery, the listing's URLs, the README's examples) answers as before.
        let listing = service.respond("GET", "/assets?sort=newest&offset=0&limit=150")
        #expect(listing.status == 200)
        let items = try #require((try JSONSerialization.jsonObject(with: Data(listing.body)) as? [String: Any])?["items"] as? [[String: Any]])
        let listed = try #require(((items.first?["thumbnails"] as? [String: String])?["3"]))
        for target in [listed, listed + "&format=png", Self.photo + "?format=jpg", Self.photo, Self.photo + "?",
                       Self.photo + "?v=1&&", Self.photo + "?exp=1&kid=k&sig=s"] {   // exp, kid, sig: signing is off
            #expect(service.respond("GET", target).status == 200, "\(target)")
        }
        #expect(service.respond("GET", "/assets?limit=2&after=" + "x").status == 400)   // a bad cursor, as before
        #expect(service.respond("DELETE", "/prefetch?all=true").status == 200)
        #expect(service.respond("DELETE", "/prefetch").status == 200)
    }

    /// Every route follows the one rule: a query parameter it does not read is 400 naming it.
    /// `/`, `/healthz`, `/stats` and `/metrics` answered as if it were not there (found by a
    /// fresh user). Each route of `Route.all`, with each method it answers, so a route added
    /// without the check fails here.
    @Test func everyRouteRefusesAQueryParameterItDoesNotRead() throws {
        let service = try Service()
        service.thumbd.service.index.rescan()
        for route in Route.all {
            let path: String
            switch route.match {
            case .path(let exact) where exact.description == "/": continue   // the gallery page: below
            case .path(let exact): path = exact.description
            case .prefix(let prefix) where prefix.description == "/thumbnails/": path = Self.photo
            case .prefix(let prefix): path = prefix.description + "1"   // /prefetch/{id}
            }
            for (method, name) in [(Route.Methods.get, "GET"), (.head, "HEAD"), (.post, "POST"), (.delete, "DELETE")]
            where route.methods.contains(method) {
                let response = service.respond(name, path + "?bogus=1", body: #"{"grid": "3", "paths": ["Landscape_1.jpg"]}"#)
                #expect(response.status == 400, "\(name) \(path)?bogus=1")
                #expect(error(response).message.contains("has no query parameter \"bogus\""), "\(name) \(path)?bogus=1")
            }
        }
        // Without it, each answers.
        for path in ["/", "/healthz", "/stats", "/metrics"] {
            #expect(service.respond("GET", path).status == 200, "\(path)")
        }
        // The gallery page opens from a link that carries a query it does not read.
        let page = service.respond("GET", "/?utm_source=newsletter&fbclid=x")
        #expect(page.status == 200 && page.headers["Content-Type"]?.hasPrefix("text/html") == true)
    }

    /// A parameter given twice was read as its first value (`?sort=oldest&sort=newest` sorted
    /// oldest first); `all=yes` stopped only the caller's jobs as if it were absent. Both are 400
    /// naming the parameter.
    @Test func aRepeatedParameterAndAnUnreadableAllAre400() throws {
        let service = try Service()
        service.thumbd.service.index.rescan()
        for (method, target, says) in [
            ("GET", "/assets?sort=oldest&sort=newest", "the query parameter \"sort\" once"),
            ("GET", "/assets?offset=0&limit=5&offset=10", "the query parameter \"offset\" once"),
            ("GET", "/assets?limit=5&%6cimit=6", "the query parameter \"limit\" once"),
            ("GET", Self.photo + "?v=1&v=2", "the query parameter \"v\" once"),
            ("GET", Self.photo + "?format=png&format=jpg", "the query parameter \"format\" once"),
            ("DELETE", "/prefetch?all=true&all=false", "the query parameter \"all\" once"),
            ("DELETE", "/prefetch?all=yes", "all must be true or false"),
            ("DELETE", "/prefetch?all=", "all must be true or false"),
        ] {
            let response = service.respond(method, target)
            #expect(response.status == 400, "\(method) \(target)")
            let (code, message) = error(response)
            #expect(code == "bad_request" && message.contains(says), "\(method) \(target): \(message)")
        }
        for target in ["/prefetch?all=false", "/prefetch?all=0", "/prefetch?all=1"] {
            #expect(service.respond("DELETE", target).status == 200, "\(target)")
        }
    }

    /// A 400 quotes a query value as the client sent it (found by a fresh user: `offset=1+2`
    /// was told as `offset=1 2`, the `+` read as a space; `sort` and `format` named no value),
    /// with the parameter and what it must be; a grid no grid is named, with the grids there are,
    /// in a thumbnail URL (404) and a prefetch body (400) alike.
    @Test func aRefusedValueIsQuotedAsSentAndAnUnknownGridIsNamed() throws {
        let service = try Service()
        service.thumbd.service.index.rescan()
        for (method, target, status, message) in [
            ("GET", "/assets?offset=1+2", 400, "offset=1+2 is not a whole number: offset must be a whole number from 0 to 2147483647"),
            ("GET", "/assets?limit=%2D1", 400, "limit=%2D1 is too small: limit must be a whole number from 0 to 10000"),
            ("GET", "/assets?limit=10001", 400, "limit=10001 is too large: limit must be a whole number from 0 to 10000"),
            ("GET", "/cluster/placeholders?limit=0", 400, "limit=0 is too small: limit must be a whole number from 1 to 10000"),
            ("GET", "/assets?sort=new+est", 400, #"sort must be newest or oldest (not "new+est")"#),
            ("GET", "/assets/changes?since=0&sort=old%2Best", 400, #"sort must be newest or oldest (not "old%2Best")"#),
            ("GET", Self.photo + "?format=we+bp", 400, #"format must be jpeg, png or webp (not "we+bp")"#),
            ("DELETE", "/prefetch?all=ma+ybe", 400, #"all must be true or false (not "ma+ybe")"#),
            ("GET", "/thumbnails/7/Landscape_1.jpg", 404, #"no grid "7" on this server: its grids are 1, 3, 5"#),
            ("GET", "/thumbnails/thumb%20nail/Landscape_1.jpg", 404, #"no grid "thumb nail" on this server: its grids are 1, 3, 5"#),
            ("POST", "/prefetch", 400, #"no grid "7" on this server: its grids are 1, 3, 5"#),
        ] as [(String, String, Int, String)] {
            let response = service.respond(method, target, body: #"{"grid": "7", "paths": ["Landscape_1.jpg"]}"#)
            #expect(response.status == status, "\(method) \(target)")
            #expect(error(response).message == message, "\(method) \(target)")
        }
    }

    /// Prefetch bodies are decoded as `PrefetchBody`: an unknown field, a value of another JSON
    /// type and a null are 400 naming the field (and what it must be); a trailing comma, a
    /// duplicate key and a comment are 400 naming the position.
    @Test func aPrefetchBodyIsReadStrictly() throws {
        let service = try Service()
        service.thumbd.service.index.rescan()
        func post(_ body: String) -> (status: Int, code: String?, message: String) {
            let response = service.respond("POST", "/prefetch", body: body)
            let (code, message) = error(response)
            return (response.status, code, message)
        }
        for (body, message) in [
            (#"{"grid": "3", "paths": ["Landscape_1.jpg"], "colour": "red"}"#,
             #"unknown field "colour" (the fields are grid, format, sort, start, end, focus, after, count, paths, urls)"#),
            (#"{"grid": "3", "path": ["Landscape_1.jpg"]}"#, #"unknown field "path" (did you mean "paths"?)"#),
            (#"{"grid": 3, "paths": ["Landscape_1.jpg"]}"#, #"grid must be a string (a grid's name, e.g. "3")"#),
            (#"{"grid": "3", "paths": ["Landscape_1.jpg", 7]}"#, "paths[1] must be a string"),
            (#"{"grid": "3", "paths": "Landscape_1.jpg"}"#, "paths must be an array of strings"),
            (#"{"grid": "3", "start": "0", "end": 5}"#, "start must be a whole number ≥ 0"),
            (#"{"grid": "3", "start": 0, "end": -1}"#, "end must be a whole number ≥ 0"),
            (#"{"grid": "3", "format": null, "paths": ["Landscape_1.jpg"]}"#, "format must be a string (jpeg, png or webp), not null"),
            (#"{"paths": ["Landscape_1.jpg"]}"#, "grid is missing"),
            ("[1]", "the body must be a JSON object"),
            (#"{"grid": "3", "paths": ["Landscape_1.jpg"],}"#, "the body is not JSON: line 1, column 43 (byte 42): a trailing comma before '}'"),
            (#"{"grid": "3", "paths": ["Landscape_1.jpg",]}"#, "the body is not JSON: line 1, column 42 (byte 41): a trailing comma before ']'"),
            ("{\"grid\": \"3\",\n \"grid\": \"5\", \"paths\": []}", #"the body is not JSON: line 2, column 2 (byte 15): the key "grid" appears twice in one object"#),
            (#"{"grid": "3", "\u0067rid": "5", "paths": []}"#, #"the body is not JSON: line 1, column 15 (byte 14): the key "\u0067rid" appears twice in one object"#),
            (#"{"grid": "3", // warm it"#, "the body is not JSON: line 1, column 15 (byte 14): JSON has no comments (// or /* */)"),
        ] {
            let refused = post(body)
            #expect(refused.status == 400, "\(body)")
            #expect(refused.code == "bad_request", "\(body)")
            #expect(refused.message == message, "\(body)")
        }
        #expect(post(#"{"grid": "3", "sort": "newest", "after": 12, "count": 1}"#).code == "bad_cursor")   // as before
        // Valid bodies (the gallery's range with focus, the README's examples) are accepted as before.
        for body in [#"{"grid": "3", "paths": ["Landscape_1.jpg"]}"#, #"{"grid":"5","sort":"newest","start":0,"end":3,"focus":1}"#,
                     #"{"grid": "3", "sort": "oldest", "after": null, "count": 2}"#, #"{"grid": "1", "start": 0, "end": 1e15}"#,
                     #"{"grid": "3", "format": "webp", "urls": ["Landscape_6.jpg"]}"#, "\u{FEFF}{\"grid\": \"3\", \"start\": 0.0, \"end\": 1}"] {
            #expect(post(body).status == 202, "\(body)")
        }
        #expect(service.respond("DELETE", "/prefetch").status == 200)
    }

    /// A signed URL with `exp`, `kid` or `sig` twice, or `exp` with a leading zero, was accepted
    /// (the first of each won; `0…` read as the number): each is now `signature_invalid`, so that
    /// a signed URL has one spelling.
    @Test func aSignedURLHasOneSpellingOfEachParameter() throws {
        let key = URLSigning.Key(id: "k1", secret: [UInt8](repeating: 7, count: 32))
        let service = try Service { $0.signingKeys = ["k1:" + String(repeating: "07", count: 32)] }
        let expires = Int(Date().timeIntervalSince1970) + 3600
        let path = Array("fuji-sp2500-tiny-orientation6.jpg".utf8)
        let signed = URLSigning.query(key: key, grid: Array("3".utf8), path: path, expires: expires)
        let sig = String(signed.split(separator: "&").last!)
        #expect(service.respond("GET", Self.photo + "?" + signed).status == 200)
        #expect(service.respond("GET", Self.photo + "?v=1&format=jpeg&" + signed).status == 200)
        for query in [signed + "&exp=\(expires + 60)", signed + "&kid=k2", signed + "&" + sig, "exp=\(expires)&" + signed,
                      "exp=0\(expires)&kid=k1&" + sig, "exp=00\(expires)&kid=k1&" + sig] {
            let response = service.respond("GET", Self.photo + "?" + query)
            #expect(response.status == 403, "\(query)")
            #expect(error(response).code == "signature_invalid", "\(query)")
        }
    }
}
