@testable import HTTP

/// Feeds `text` to a fresh parser in one piece and takes out every complete request.
func parseAll(_ text: String, limits: HTTPParserLimits = HTTPParserLimits()) throws(HTTPParseError) -> [HTTPRequest] {
    var parser = HTTPRequestParser(limits: limits)
    parser.append(contentsOf: Array(text.utf8))
    var requests: [HTTPRequest] = []
    while let request = try parser.nextRequest() { requests.append(request) }
    return requests
}

/// Feeds `text` one byte at a time, taking requests out after every byte.
func parseByteByByte(_ text: String) throws(HTTPParseError) -> [HTTPRequest] {
    var parser = HTTPRequestParser()
    var requests: [HTTPRequest] = []
    for byte in text.utf8 {
        parser.append(contentsOf: [byte])
        while let request = try parser.nextRequest() { requests.append(request) }
    }
    return requests
}

/// The error parsing `text` throws, or nil when it parses (completely or not).
func parseError(_ text: String, limits: HTTPParserLimits = HTTPParserLimits()) -> HTTPParseError? {
    do {
        _ = try parseAll(text, limits: limits)
        return nil
    } catch {
        return error
    }
}
