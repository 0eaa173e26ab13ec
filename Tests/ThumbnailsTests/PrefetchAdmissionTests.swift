import Testing
@testable import Thumbnails

/// Per-client prefetch admission (`PrefetchAdmission`, `PrefetchLimits`) on a clock the test moves.
@Suite struct PrefetchAdmissionTests {
    @Test func theBucketHoldsAMinuteAndRefillsEvenly() {
        var admission = PrefetchAdmission()
        let limits = PrefetchLimits(concurrentJobs: 0, itemsPerJob: 0, itemsPerMinute: 120)   // 2 items/s
        #expect(admission.admit(owner: "a", items: 100, limits: limits, now: 0) == nil)
        // 20 left: 50 more need 30 more tokens, 15 s at 2/s.
        #expect(admission.admit(owner: "a", items: 50, limits: limits, now: 0) == .rateLimited(limit: 120, retryAfterSeconds: 15))
        #expect(admission.admit(owner: "a", items: 50, limits: limits, now: 14.9) == .rateLimited(limit: 120, retryAfterSeconds: 1))
        #expect(admission.admit(owner: "a", items: 50, limits: limits, now: 15) == nil)
        // Another client has its own bucket; a job bigger than the bucket can never fit.
        #expect(admission.admit(owner: "b", items: 120, limits: limits, now: 15) == nil)
        #expect(admission.admit(owner: "c", items: 121, limits: limits, now: 15) == .tooManyItems(limit: 120))
        // Never more than a minute's worth, however long a client waits.
        #expect(admission.admit(owner: "a", items: 121, limits: limits, now: 10_000) == .tooManyItems(limit: 120))
        #expect(admission.admit(owner: "a", items: 120, limits: limits, now: 10_000) == nil)
        #expect(admission.admit(owner: "a", items: 1, limits: limits, now: 10_000) == .rateLimited(limit: 120, retryAfterSeconds: 1))
    }

    @Test func runningJobsAreCountedUntilTheyEnd() {
        var admission = PrefetchAdmission()
        let limits = PrefetchLimits(concurrentJobs: 2, itemsPerJob: 10, itemsPerMinute: 0)
        #expect(admission.admit(owner: "a", items: 10, limits: limits, now: 0) == nil)
        #expect(admission.admit(owner: "a", items: 1, limits: limits, now: 0) == nil)
        #expect(admission.admit(owner: "a", items: 1, limits: limits, now: 0) == .tooManyJobs(limit: 2))
        #expect(admission.admit(owner: "a", items: 11, limits: limits, now: 0) == .tooManyItems(limit: 10))
        admission.ended(owner: "a")
        #expect(admission.jobs(of: "a") == 1)
        #expect(admission.admit(owner: "a", items: 1, limits: limits, now: 0) == nil)
    }
}
