import Testing
@testable import ThumbServer

/// `If-None-Match` against an ETag (RFC 9110 §13.1.2: weak comparison), strong or, as
/// thumbnails send it, weak.
@Suite struct EntityTagTests {
    let etag = "\"0123456789abcdef0123456789abcdef\""

    @Test func membersMatchByWeakComparison() {
        #expect(EntityTag.noneMatch([etag], etag: etag) == .tag)
        #expect(EntityTag.noneMatch(["W/" + etag], etag: etag) == .tag)
        #expect(EntityTag.noneMatch(["\"other\", " + etag], etag: etag) == .tag)
        #expect(EntityTag.noneMatch(["\"other\"", " W/\(etag) "], etag: etag) == .tag)
        #expect(EntityTag.noneMatch(["\"other\""], etag: etag) == .none)
        #expect(EntityTag.noneMatch(["w/" + etag], etag: etag) == .none)   // `W/` is case-sensitive
        #expect(EntityTag.noneMatch([String(etag.dropLast())], etag: etag) == .none)
        #expect(EntityTag.noneMatch([""], etag: etag) == .none)
        #expect(EntityTag.noneMatch([], etag: etag) == .none)
    }

    @Test func aWeakETagMatchesItsTagWithOrWithoutW() {
        let weak = "W/" + etag
        #expect(EntityTag.noneMatch([weak], etag: weak) == .tag)
        #expect(EntityTag.noneMatch([etag], etag: weak) == .tag)
        #expect(EntityTag.noneMatch(["\"other\", " + etag], etag: weak) == .tag)
        #expect(EntityTag.noneMatch(["W/\"other\""], etag: weak) == .none)
        #expect(EntityTag.noneMatch(["W/W/" + etag], etag: weak) == .none)
    }

    @Test func aStarMatchesAnyButAListedTagOutranksIt() {
        #expect(EntityTag.noneMatch(["*"], etag: etag) == .any)
        #expect(EntityTag.noneMatch([" * "], etag: etag) == .any)
        #expect(EntityTag.noneMatch(["*, " + etag], etag: etag) == .tag)
        #expect(EntityTag.noneMatch(["*", "\"other\""], etag: etag) == .any)
        #expect(EntityTag.noneMatch(["**"], etag: etag) == .none)
    }
}
