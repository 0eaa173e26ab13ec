import Foundation
import Rendering

/// libvips behind a gate: each render records its source's file name and waits while the gate
/// is shut (it starts shut), so a test decides when renders run instead of racing them. The
/// source is opened only after the gate, so a test can change the file while a render waits.
public final class GatedRenderer: ThumbnailRendering, @unchecked Sendable {
    // Guarded by `condition`.
    private let condition = NSCondition()
    private var startedNames: [String] = []
    private var isOpen = false
    private let real = Renderer()

    public init() {}

    /// File names of the sources whose renders have started, in order.
    public var started: [String] {
        condition.lock()
        defer { condition.unlock() }
        return startedNames
    }

    /// Lets every render waiting now, and every later one until `shut`, go on.
    public func open() {
        condition.lock()
        isOpen = true
        condition.broadcast()
        condition.unlock()
    }

    /// Makes renders that start from now on wait again.
    public func shut() {
        condition.lock()
        isOpen = false
        condition.unlock()
    }

    /// Waits up to `seconds` for `count` renders to have started; true when they have. 60 s by
    /// default: under the whole suite a render was seen to start more than 10 s after it was
    /// asked for (the bound matters only to a test that fails).
    public func waitForStarts(_ count: Int, seconds: Double = 60) -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        condition.lock()
        defer { condition.unlock() }
        while startedNames.count < count {
            if !condition.wait(until: deadline) { return startedNames.count >= count }
        }
        return true
    }

    public func render(_ request: RenderRequest) throws(RenderError) -> Thumbnail {
        condition.lock()
        startedNames.append(String(request.source.description.split(separator: "/").last ?? ""))
        condition.broadcast()
        // Bounded, so a failing test that never opens the gate cannot hang the suite; long,
        // because on a loaded machine running the whole suite a test can take minutes between
        // two of its awaits (a bound of 30 s let a held render finish mid-test in CI).
        let deadline = Date().addingTimeInterval(600)
        while !isOpen && condition.wait(until: deadline) {}
        condition.unlock()
        return try real.render(request)
    }
}
