import Foundation
import Rendering
import Testing

/// What a cover grid's placeholder costs (docs/performance.md, "Placeholders of cover grids"):
/// the corpus' photos rendered at grid 3 without a placeholder and with one, in alternating
/// rounds, printed as ms per render and their ratio. A benchmark, not a check: run
/// with `THUMBD_PLACEHOLDER_BENCHMARK=1 swift test --filter PlaceholderCostBenchmark` (a release
/// build: `-c release`).
@Suite(.enabled(if: ProcessInfo.processInfo.environment["THUMBD_PLACEHOLDER_BENCHMARK"] == "1" && TestFiles.hasCorpus,
                "THUMBD_PLACEHOLDER_BENCHMARK=1 and the shared corpus"))
struct PlaceholderCostBenchmark {
    @Test func coverGridRenderWithAndWithoutItsPlaceholder() throws {
        let photos = TestFiles.corpusFiles("photos").filter { $0.hasSuffix(".jpg") }.map { TestFiles.corpusPath("photos", $0) }
        let renderer = Renderer()
        func round(side: Int) throws -> Double {
            let started = DispatchTime.now().uptimeNanoseconds
            for photo in photos {
                var request = RenderRequest(sourcePath: photo, spec: .grid("3"))
                request.placeholderSide = side
                _ = try renderer.render(request)
            }
            return Double(DispatchTime.now().uptimeNanoseconds - started) / 1e6 / Double(photos.count)
        }
        _ = try round(side: 0)   // warm the page cache
        var without: [Double] = [], with: [Double] = []
        for _ in 0..<5 {
            without.append(try round(side: 0))
            with.append(try round(side: 100))
        }
        let a = without.sorted()[2], b = with.sorted()[2]
        print(String(format: "placeholder cost, grid 3, %d corpus JPEGs, median of 5 rounds: %.1f ms without, %.1f ms with (%.2fx, +%.1f ms)",
                     photos.count, a, b, b / a, b - a))
    }
}
