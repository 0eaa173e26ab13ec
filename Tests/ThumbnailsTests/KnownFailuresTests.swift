import Rendering
import Testing
@testable import Thumbnails

/// Which render failures are remembered against their source (`KnownFailures`).
@Suite struct KnownFailuresTests {
    let source = KnownFailures.Source(path: "/lib/a.jpg", device: 1, inode: 2,
                                      identity: SourceIdentity(size: 10, modifiedNanoseconds: 5))

    @Test(arguments: [(RenderError.Kind.unsupportedSource, true), (.sourceTooLarge, true), (.sourceNotFound, false),
                      (.internalFailure, false), (.sourceChanged, false)])
    func onlyFailuresThatLieInTheFileAreRemembered(kind: RenderError.Kind, remembered: Bool) {
        let failures = KnownFailures()
        failures.record(RenderError(kind: kind, message: "m"), for: source)
        #expect((failures.failure(of: source) != nil) == remembered)
    }

    @Test func anyChangeOfTheFileForgetsIt() {
        let failures = KnownFailures()
        failures.record(RenderError(kind: .unsupportedSource, message: "m"), for: source)
        #expect(failures.failure(of: source)?.kind == .unsupportedSource)
        for changed in [{ (s: inout KnownFailures.Source) in s.device = 9 }, { $0.inode = 9 },
                        { $0.identity.size = 11 }, { $0.identity.modifiedNanoseconds = 6 }, { $0.path = "/lib/b.jpg" }] {
            var other = source
            changed(&other)
            #expect(failures.failure(of: other) == nil)
        }
    }

    @Test func theOldestAreForgottenPastTheCapacity() {
        let failures = KnownFailures(capacity: 3)
        for i in 0..<5 {
            var s = source
            s.path = DiskPath("/lib/\(i).jpg")
            failures.record(RenderError(kind: .unsupportedSource, message: "m"), for: s)
        }
        #expect(failures.count == 3)
        var first = source, last = source
        first.path = "/lib/0.jpg"
        last.path = "/lib/4.jpg"
        #expect(failures.failure(of: first) == nil)
        #expect(failures.failure(of: last) != nil)
    }
}
