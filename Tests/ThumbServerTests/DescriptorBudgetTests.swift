@testable import ThumbServer
import Testing

/// How the open-file limit is shared out (README, "Descriptors"), against figures worked out by hand.
@Suite struct DescriptorBudgetTests {
    /// `--nofile=1024`, the memory tier off, 2 render workers and 2 event loops: 64 + 4 x 4 = 80
    /// kept back; of the 944 left a quarter (236) is kept for open disk entries, so 708
    /// connections at most, though 4,096 were asked for.
    @Test func aLimitOf1024WithTheMemoryTierOff() {
        let budget = DescriptorBudget(limit: 1024, maxConnections: 4096, renderWorkers: 2, eventLoops: 2, memoryTier: false)
        #expect(budget.reserve == 80)
        #expect(budget.connections == 708)
        #expect(budget.openDiskEntries == 236)
        #expect(budget.memoryFiles == 0)
        #expect(budget.reserve + budget.connections + budget.openDiskEntries == 1024)
    }

    /// `--nofile=256`: the 256 kept-open entries of before would fill the table alone; now
    /// 80 are kept back, 44 (a quarter of 176) go to disk entries and 132 to connections.
    @Test func aLimitOf256LeavesRoomForRenders() {
        let budget = DescriptorBudget(limit: 256, maxConnections: 4096, renderWorkers: 2, eventLoops: 2, memoryTier: false)
        #expect(budget.reserve == 80 && budget.connections == 132 && budget.openDiskEntries == 44)
    }

    /// Plenty of descriptors: `max_connections` as asked, 256 disk entries (the ceiling), or
    /// with the memory tier on every descriptor not reserved or a connection as memfds.
    @Test func plentyOfDescriptors() {
        let off = DescriptorBudget(limit: 1 << 20, maxConnections: 4096, renderWorkers: 2, eventLoops: 2, memoryTier: false)
        #expect(off.connections == 4096 && off.openDiskEntries == 256 && off.memoryFiles == 0)
        let on = DescriptorBudget(limit: 1 << 20, maxConnections: 4096, renderWorkers: 2, eventLoops: 2, memoryTier: true)
        #expect(on.connections == 4096 && on.openDiskEntries == 0 && on.memoryFiles == (1 << 20) - 80 - 4096)
    }

    /// A tiny limit (48, as `prlimit --nofile=48` gives) keeps half for the server itself and
    /// still serves: 24 reserved, 6 memfds kept for the memory tier, 18 connections.
    @Test func aTinyLimitKeepsHalfAndStillServes() {
        let budget = DescriptorBudget(limit: 48, maxConnections: 4096, renderWorkers: 2, eventLoops: 2, memoryTier: true)
        #expect(budget.reserve == 24 && budget.connections == 18 && budget.memoryFiles == 6)
        let one = DescriptorBudget(limit: 2, maxConnections: 4096, renderWorkers: 2, eventLoops: 2, memoryTier: true)
        #expect(one.connections == 1)   // never 0: the server would never accept
    }

    /// The limit as getrlimit(2) reports it, raised: after `raiseLimit` the soft limit is the hard one.
    @Test func raisingTheLimitReachesTheHardLimit() throws {
        let raised = try #require(DescriptorBudget.raiseLimit())
        let now = try #require(DescriptorBudget.currentLimits())
        #expect(raised.after == now.soft)
        #expect(now.soft == now.hard)
    }
}
