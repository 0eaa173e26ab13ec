import Dispatch
import Rendering
import Synchronization
import Testing

/// `Renderer` is called from several render worker threads at once.
@Suite struct ConcurrentRenderTests {
    @Test func parallelRendersMatchSerialOnes() throws {
        let renderer = Renderer()
        let requests = ["Landscape_1.jpg", "Landscape_6.jpg", "galaxy-s-orientation6-gps-vga.jpg",
                        "sony-cybershot-small-orientation6.jpg", "png-rgba-alpha-2048x1536.png",
                        "empty.jpg"]
            .flatMap { name in ["1", "3", "5"].map {
                RenderRequest(sourcePath: TestFiles.fixture(name), spec: .grid($0))
            } }
        let serial = requests.map { try? renderer.render($0).bytes }

        let parallel = Mutex([[UInt8]?](repeating: nil, count: requests.count))  // one lock for the results
        DispatchQueue.concurrentPerform(iterations: requests.count) { index in
            let bytes = try? renderer.render(requests[index]).bytes
            parallel.withLock { $0[index] = bytes }
        }

        let results = parallel.withLock { $0 }
        #expect(results == serial)
        #expect(results.compactMap { $0 }.count == requests.count - 3)   // empty.jpg fails 3 times
    }
}
