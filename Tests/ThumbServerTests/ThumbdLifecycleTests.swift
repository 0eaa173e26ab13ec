import Dispatch
import Foundation
#if canImport(Glibc)
import Glibc
#endif
import Rendering
import Testing
import TestSupport
@testable import ThumbServer

/// The composition root's three steps (`Thumbd`): opening touches files and starts nothing,
/// wiring does no I/O, `start`/`startServing` do the side effects; and process-wide state is
/// `ProcessSetup`'s alone (issue 27: "wiring only wires", "one place that raises limits").
@Suite struct ThumbdLifecycleTests {
    func config(cache: String) -> Config {
        var config = Config()
        config.library = Paths.fixturePhotos
        config.cacheDirectory = cache
        config.libraryWatch = false
        config.indexRescanSeconds = 0.05
        return config
    }

    @Test func openingAndWiringStartNothingUntilStartServing() throws {
        let cache = NSTemporaryDirectory() + "thumbd-lifecycle-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: cache) }
        let config = config(cache: cache)
        let resources = try Thumbd.Resources.open(config, process: ProcessSetup.prepare(), eventLoops: 2)
        #expect(resources.watches.count == 2)
        let thumbd = Thumbd(config: config, resources: resources, renderer: Renderer())
        defer { thumbd.service.pipeline.stop() }
        // With a rescan every 50 ms, a listing that had started would have scanned by now.
        #expect(!eventually(within: 0.3) { thumbd.service.index.completedScans > 0 }, "the index scanned before start")
        #expect(thumbd.server.connectionCounts == (0, 0))
        thumbd.startServing()
        #expect(eventually(within: 10) { thumbd.service.index.completedScans > 0 }, "the index never scanned after startServing")
        #expect(thumbd.service.index.listing(order: .newest, offset: 0, limit: 1000).total > 0)
    }

    @Test func processSetupIgnoresSIGPIPEAndRaisesTheOpenFileLimitOnce() throws {
        let first = try ProcessSetup.prepare(), second = try ProcessSetup.prepare()
        #expect(first == second)
        var action = sigaction()
        #expect(sigaction(SIGPIPE, nil, &action) == 0)
        #expect(unsafeBitCast(action.__sigaction_handler.sa_handler, to: Int.self) == unsafeBitCast(SIG_IGN, to: Int.self))
        let limits = try #require(DescriptorBudget.currentLimits())
        #expect(limits.soft == limits.hard)
        #expect(first.openFileLimit == limits.soft)
    }
}
