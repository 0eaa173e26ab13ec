import HTTP

/// libFuzzer entry point for `HTTPRequestParser`. Beyond "never crash, never hang", it checks
/// one property on every input: feeding the bytes whole and feeding them split at a point taken
/// from the input itself give the same requests and the same error, since TCP may split a request
/// anywhere.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzHTTPRequestParser(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    var limits = HTTPParserLimits()
    limits.maxBodyBytes = 4096
    let whole = parse([bytes[...]], limits: limits)
    if size > 1 {
        let cut = Int(bytes[0]) % size
        let split = parse([bytes[..<cut], bytes[cut...]], limits: limits)
        precondition(whole == split, "split at \(cut) changed the outcome: \(whole) vs \(split)")
    }
    return 0
}

/// What the parser made of `pieces`: a line per request, then the error if any.
private func parse(_ pieces: [ArraySlice<UInt8>], limits: HTTPParserLimits) -> [String] {
    var parser = HTTPRequestParser(limits: limits)
    var outcome: [String] = []
    for piece in pieces {
        parser.append(contentsOf: piece)
        do {
            while let request = try parser.nextRequest() {
                let headers = request.headers.fields.map { "\($0.name)=\($0.value)" }.joined(separator: ";")
                outcome.append("\(request.method) \(request.target) \(request.version) [\(headers)] \(request.body.count)")
            }
        } catch {
            outcome.append("error \(error.status)")
            return outcome
        }
    }
    return outcome
}

/// SwiftPM links an executable's entry point as `<module>_main`, which hides libFuzzer's own
/// `main`; this one hands control to libFuzzer's driver (`LLVMFuzzerRunDriver`, LLVM ≥ 11).
@_silgen_name("LLVMFuzzerRunDriver")
private func runFuzzerDriver(
    _ argc: UnsafeMutablePointer<CInt>,
    _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>,
    _ callback: @convention(c) (UnsafePointer<UInt8>, Int) -> CInt) -> CInt

@_cdecl("HTTPParserFuzzer_main")
public func fuzzerMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
    var argc = argc
    var argv = argv
    return runFuzzerDriver(&argc, &argv) { data, size in fuzzHTTPRequestParser(data, size) }
}
