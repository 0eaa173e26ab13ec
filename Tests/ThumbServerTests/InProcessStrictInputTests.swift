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
}
