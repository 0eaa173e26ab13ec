import Foundation
import Rendering
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Sources that give no thumbnail, and the kind each gets (its HTTP status is ThumbServer's
/// `ThumbService.apiError(for:)`, pinned in `PathAndErrorTests`).
@Suite struct RenderErrorTests {
    let renderer = Renderer()

    private func kind(of path: String, maxPixels: Int = 100_000_000) -> RenderError.Kind? {
        do {
            _ = try renderer.render(RenderRequest(sourcePath: path, spec: .grid("3"),
                                                  maxPixels: maxPixels))
            return nil
        } catch {
            return error.kind
        }
    }

    @Test func missingFileIsNotFound() {
        #expect(kind(of: TestFiles.fixture("no-such-photo.jpg")) == .sourceNotFound)
        #expect(kind(of: TestFiles.fixture("Landscape_1.jpg/inside")) == .sourceNotFound)
    }

    /// A render checks the file it opened against the identity the caller keyed it by.
    @Test func aSourceOtherThanTheExpectedOneIsSourceChanged() throws {
        // A realpath: with an expected identity, no symlink may be on the way.
        let path = URL(fileURLWithPath: TestFiles.fixture("Landscape_1.jpg")).resolvingSymlinksInPath().path
        var st = stat()
        #expect(stat(path, &st) == 0)
        let actual = SourceIdentity(st)
        #expect(actual.size == 347_327)
        func render(expecting identity: SourceIdentity?) -> RenderError.Kind? {
            do {
                _ = try renderer.render(RenderRequest(sourcePath: path, spec: .grid("3"), expectedSource: identity))
                return nil
            } catch {
                return error.kind
            }
        }
        #expect(render(expecting: nil) == nil)
        #expect(render(expecting: actual) == nil)
        #expect(render(expecting: SourceIdentity(size: actual.size + 1, modifiedNanoseconds: actual.modifiedNanoseconds))
            == .sourceChanged)
        #expect(render(expecting: SourceIdentity(size: actual.size, modifiedNanoseconds: actual.modifiedNanoseconds + 1))
            == .sourceChanged)
        // A symlink on the way to an expected source is refused; without an expectation it is followed.
        let directory = try TestFiles.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let link = directory.resolvingSymlinksInPath().appendingPathComponent("link.jpg").path
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: path)
        for (expected, kind) in [(actual, RenderError.Kind.sourceChanged), (nil, nil)] as [(SourceIdentity?, RenderError.Kind?)] {
            do {
                _ = try renderer.render(RenderRequest(sourcePath: link, spec: .grid("3"), expectedSource: expected))
                #expect(kind == nil)
            } catch {
                #expect(error.kind == kind)
            }
        }
    }

    @Test func emptyFileIsUnsupported() throws {
        #expect(throws: RenderError.self) {
            _ = try renderer.render(RenderRequest(sourcePath: TestFiles.fixture("empty.jpg"),
                                                  spec: .grid("3")))
        }
        #expect(kind(of: TestFiles.fixture("empty.jpg")) == .unsupportedSource)
    }

    @Test func textFileIsUnsupported() throws {
        let directory = try TestFiles.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("page.jpg")
        try Data("<html><body>502 Bad Gateway</body></html>\n".utf8).write(to: file)
        #expect(kind(of: file.path) == .unsupportedSource)
    }

    @Test func directoryIsUnsupported() throws {
        let directory = try TestFiles.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        #expect(kind(of: directory.path) == .unsupportedSource)
    }

    @Test(.timeLimit(.minutes(1)))
    func fifoDoesNotBlock() throws {
        let directory = try TestFiles.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let fifo = directory.appendingPathComponent("photo.jpg").path
        try #require(mkfifo(fifo, 0o600) == 0)
        let start = Date()
        #expect(kind(of: fifo) == .unsupportedSource)
        #expect(throws: RenderError.self) { _ = try renderer.probe(path: fifo) }
        #expect(Date().timeIntervalSince(start) < 5)
    }

    @Test func overThePixelLimitIsTooLarge() throws {
        let path = TestFiles.fixture("Landscape_1.jpg")   // 1800x1200 = 2,160,000 px
        do {
            _ = try renderer.render(RenderRequest(sourcePath: path, spec: .grid("3"),
                                                  maxPixels: 2_000_000))
            Issue.record("rendered a source over the limit")
        } catch {
            #expect(error.kind == .sourceTooLarge)
            #expect(error.message.contains("1800x1200"))
            #expect(error.message.contains("2000000"))
        }
        #expect(kind(of: path, maxPixels: 2_160_000) == nil)   // the limit itself is allowed
        #expect(kind(of: path, maxPixels: 0) == nil)           // 0: no limit
    }

    @Test func messagesCarryTheLibvipsText() throws {
        let directory = try TestFiles.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("junk.png")
        try Data([0x89, 0x50, 0x4E, 0x47, 0x00, 0x01, 0x02]).write(to: file)
        do {
            _ = try renderer.render(RenderRequest(sourcePath: file.path, spec: .grid("3")))
            Issue.record("rendered junk")
        } catch {
            #expect(error.kind == .unsupportedSource)
            #expect(error.message.contains("known format"), "\(error.message)")
            #expect(!error.message.contains(file.path))
            #expect(!error.message.hasSuffix("\n"))
        }
    }
}
