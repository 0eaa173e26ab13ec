import Foundation
import Library
import Rendering
import Testing
import Thumbnails
@testable import ThumbServer

/// A `format` or `sort` value means the same wherever a client sends it: in a URL's query or in
/// a prefetch body (a prefetch warms exactly the entries a later GET reads).
@Suite struct RequestValueTests {
    /// The format a prefetch body with `"format": value` asks for, or its error.
    private func prefetchFormat(_ value: String, webpEnabled: Bool = true) -> Result<FormatChoice, APIError> {
        let body = Array(#"{"grid": "3", "format": \#(JSON.quote(value)), "paths": ["a.jpg"]}"#.utf8)
        return Result { () throws(APIError) in
            try PrefetchPlan(body: body, grids: GridSpec.defaults, webpEnabled: webpEnabled).format
        }
    }

    /// The format a thumbnail URL with `?format=value` asks for, or its error.
    private func queryFormat(_ value: String, webpEnabled: Bool = true) -> Result<FormatChoice, APIError> {
        Result { () throws(APIError) in
            try Negotiation.formatChoice(query: Substring("format=" + value), accept: [], webpEnabled: webpEnabled)
        }
    }

    @Test(arguments: [("jpeg", FormatChoice.jpeg), ("jpg", .jpeg), ("JPEG", .jpeg), ("Jpg", .jpeg), ("png", .png),
                      ("PNG", .png), ("webp", .webp), ("WebP", .webp)])
    func formatNamesAreReadAlikeInAQueryAndAPrefetchBody(value: String, expected: FormatChoice) {
        #expect(queryFormat(value) == .success(expected), "?format=\(value)")
        #expect(prefetchFormat(value) == .success(expected), "\"format\": \(value)")
    }

    @Test(arguments: ["gif", "", "jpeg2", "image/webp"])
    func unknownFormatsAreTheSame400InAQueryAndAPrefetchBody(value: String) {
        let refusal = APIError.badRequest("format must be jpeg, png or webp (not \"\(value)\")")
        #expect(queryFormat(value) == .failure(refusal), "?format=\(value)")
        #expect(prefetchFormat(value) == .failure(refusal), "\"format\": \(value)")
    }

    @Test func aDisabledWebPIsOneMessageInAQueryAndAPrefetchBody() {
        let refusal = APIError.badRequest("WebP output is disabled on this server")
        for value in ["webp", "WEBP"] {
            #expect(queryFormat(value, webpEnabled: false) == .failure(refusal))
            #expect(prefetchFormat(value, webpEnabled: false) == .failure(refusal))
        }
        #expect(queryFormat("png", webpEnabled: false) == .success(.png))
        #expect(prefetchFormat("png", webpEnabled: false) == .success(.png))
    }

    /// The order a range prefetch with `"sort": value` asks for (no field when nil), or its error.
    private func prefetchOrder(_ value: String?) -> Result<ListingOrder, APIError> {
        let sort = value.map { #""sort": \#(JSON.quote($0)), "# } ?? ""
        let body = Array(#"{"grid": "3", \#(sort)"start": 0, "end": 1}"#.utf8)
        return Result { () throws(APIError) -> ListingOrder in
            guard case .range(let order, _, _, _) = try PrefetchPlan(body: body, grids: GridSpec.defaults,
                                                                  webpEnabled: true).items else {
                throw APIError.badRequest("not a range")
            }
            return order
        }
    }

    @Test func sortValuesAreReadAlikeInAListingQueryAndAPrefetchBody() {
        func refusal(_ value: String) -> APIError { APIError.badRequest("sort must be newest or oldest (not \"\(value)\")") }
        for (value, expected) in [(nil, Result<ListingOrder, APIError>.success(.newest)), ("newest", .success(.newest)),
                                  ("oldest", .success(.oldest)), ("Oldest", .failure(refusal("Oldest"))),
                                  ("sideways", .failure(refusal("sideways"))), ("", .failure(refusal("")))] as [(String?, Result<ListingOrder, APIError>)] {
            #expect(Result { () throws(APIError) in try ListingOrder(parameter: value) } == expected, "\(value ?? "none")")
            #expect(Result { () throws(APIError) in try ListingOrder(query: value.map { Substring("sort=" + $0) }) } == expected,
                    "\(value ?? "none")")
            #expect(prefetchOrder(value) == expected, "\(value ?? "none")")
        }
        // A sort that is not a string is refused as a value of another JSON type.
        let body = Array(#"{"grid": "3", "sort": 1, "start": 0, "end": 1}"#.utf8)
        #expect(throws: APIError.badRequest("sort must be newest or oldest")) {
            try PrefetchPlan(body: body, grids: GridSpec.defaults, webpEnabled: true)
        }
    }
}
