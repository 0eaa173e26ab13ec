import Foundation
import Testing
import TestSupport
import ThumbdClient

/// docs/client.md's code is ClientDocExamples.swift's, verbatim, and its model works against a
/// real thumbd as the page says.
@Suite(.serialized) struct ClientDocTests {
    /// The `// doc:begin NAME` … `// doc:end` blocks of ClientDocExamples.swift.
    static func blocks() throws -> [String: String] {
        let text = try String(contentsOfFile: Photos.packageRoot + "/Tests/ThumbdClientTests/ClientDocExamples.swift", encoding: .utf8)
        var blocks: [String: String] = [:]
        var name: String?
        var lines: [String] = []
        for line in text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init) {
            if line.hasPrefix("// doc:begin ") {
                name = String(line.dropFirst("// doc:begin ".count))
                lines = []
            } else if line == "// doc:end", let current = name {
                blocks[current] = lines.joined(separator: "\n")
                name = nil
            } else if name != nil {
                lines.append(line)
            }
        }
        return blocks
    }

    @Test func thePageShowsTheTestedCodeVerbatim() throws {
        let page = try String(contentsOfFile: Photos.packageRoot + "/docs/client.md", encoding: .utf8)
        let blocks = try Self.blocks()
        #expect(Set(blocks.keys) == ["model", "uikit", "swiftui"])
        for (name, code) in blocks {
            #expect(page.contains("```swift\n" + code + "\n```"), "docs/client.md lacks the \(name) block as tested")
        }
    }

    @MainActor @Test func theModelListsShowsPreheatsAndSwitchesColumns() async throws {
        let root = try ThumbdCachingTests.library(30)
        let renderer = GatedRenderer()
        let server = try TestServer(library: root.path, renderer: renderer) { $0.renderWorkers = 1 }
        defer { renderer.open() }
        let model = PhotoGridModel(server: server.baseURL)
        try await model.load()
        #expect(model.assets.count == 30)
        // A 393 pt wide screen, 3 columns of 131 pt, 7 rows high: rows 0-11 warmed (33 → 30 items).
        await model.scrolled(contentOffsetY: 0, viewportHeight: 7 * 131, rowHeight: 131)
        await model.preheat.settle()
        let range = await model.caching.jobIDs
        #expect(range.count == 1)
        #expect(try await model.caching.job(id: range[0]).total == 30)
        // Prefetching cells the range job covers is one more job: the two managers are apart.
        try await model.prefetch([4, 5])
        #expect(await model.caching.jobIDs.count == 2)
        try await model.cancelPrefetching([4, 5])
        #expect(await model.caching.jobIDs == range)
        await model.setColumns(5)
        #expect(try await model.caching.job(id: range[0]).state == .cancelled)
        renderer.open()
        var last: ThumbdImageResult?
        for try await result in model.thumbnails(at: 0) { last = result }
        guard case .thumbnail(let thumbnail) = last else { Issue.record("no thumbnail"); return }
        // 640x480 at grid 5 (cover 236): a 236x236 centre square.
        #expect(ImageHeader(Array(thumbnail.data)) == ImageHeader(format: "jpeg", width: 236, height: 236))
    }
}
