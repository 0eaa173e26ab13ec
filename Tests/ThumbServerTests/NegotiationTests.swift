import Testing
@testable import ThumbServer

/// `Accept` → WebP (docs/API.md, "output"): only a named `image/webp` with a non-zero q counts.
@Suite struct NegotiationTests {
    @Test(arguments: [
        (["image/webp"], true),
        (["image/avif,image/webp,*/*;q=0.8"], true),
        (["IMAGE/WebP"], true),
        ([" image/webp ; q=0.5 "], true),
        (["image/webp;q=0"], false),
        (["image/webp; Q=0.000"], false),
        (["image/webp;q=0.001"], true),
        (["image/webp;q=1"], true),
        (["image/webp;q=abc"], true),   // an unreadable q is not a zero
        (["image/*"], false),
        (["*/*"], false),
        (["image/webpx"], false),
        (["image/web"], false),
        (["text/html, image/webp;level=1;q=0.9"], true),
        (["image/png,image/webp;q=0,image/*;q=0.8"], false),
        ([""], false),
        (["text/html", "image/webp"], true),
        (["image/webp;q=0", "image/webp"], true),
        ([], false),
    ] as [([String], Bool)])
    func acceptNamesWebP(values: [String], expected: Bool) {
        #expect(Negotiation.acceptsWebP(values) == expected, "Accept: \(values)")
    }
}
