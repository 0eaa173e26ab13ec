import Foundation
import Rendering

/// libvips behind a gate: each render records its source's file name and waits until the test
/// opens the gate, so a test decides when renders run instead of racing them.
final class GatedRenderer: ThumbnailRendering, @unchecked Sendable {
    // Guarded by `condition`.
    private let condition = NSCondition()
    private var startedNames: [String] = []
    private var isOpen = false
    private let real = Renderer()

    /// File names of the sources whose renders have started, in order.
    var started: [String] {
        condition.lock()
        defer { condition.unlock() }
        return startedNames
    }

    /// Lets every render waiting now, and every later one, go on.
    func open() {
        condition.lock()
        isOpen = true
        condition.broadcast()
        condition.unlock()
    }

    /// Waits up to `seconds` for `count` renders to have started; true when they have.
    func waitForStarts(_ count: Int, seconds: Double = 10) -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        condition.lock()
        defer { condition.unlock() }
        while startedNames.count < count {
            if !condition.wait(until: deadline) { return startedNames.count >= count }
        }
        return true
    }

    func render(_ request: RenderRequest) throws(RenderError) -> Thumbnail {
        condition.lock()
        startedNames.append(String(request.source.description.split(separator: "/").last ?? ""))
        condition.broadcast()
        // Bounded, so a failing test cannot hang the suite.
        let deadline = Date().addingTimeInterval(30)
        while !isOpen && condition.wait(until: deadline) {}
        condition.unlock()
        return try real.render(request)
    }
}
