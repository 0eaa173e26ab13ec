import Foundation
import HTTP
import Testing
import TestSupport
@testable import ThumbServer

/// What a full `/assets` page (10,000 items, the largest `limit`) costs written by hand, as the
/// server does, against `JSONEncoder`: figures printed, nothing asserted on time. Off unless
/// `THUMBD_LISTING_BENCHMARK` is set (it indexes 10,000 files):
/// `THUMBD_LISTING_BENCHMARK=1 swift test --skip-build --filter ListingBenchmark`.
@Suite struct ListingBenchmarkTests {
    static let items = ThumbService.maxListingLimit

    @Test(.enabled(if: ProcessInfo.processInfo.environment["THUMBD_LISTING_BENCHMARK"] != nil))
    func aFullPageHandWrittenAgainstJSONEncoder() throws {
        let root = NSTemporaryDirectory() + "thumbd-listing-benchmark-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: root) }
        // Hard links to one photo, 100 to a folder: 10,000 names, one file to read.
        let source = Paths.fixturePhotos + "/kodak-dc210-1998-vga.jpg"
        for i in 0..<Self.items {
            let folder = root + String(format: "/2024-%02d", i / 100)
            if i % 100 == 0 { try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true) }
            #expect(link(source, folder + String(format: "/IMG_%05d.JPG", i)) == 0)
        }
        let service = try InProcessServer(library: root) { $0.indexRescanSeconds = 3600 }
        #expect(eventually(within: 300) { service.thumbd.service.index.isComplete })
        func milliseconds(_ work: () throws -> Void) rethrows -> Double {
            let start = DispatchTime.now().uptimeNanoseconds
            try work()
            return Double(DispatchTime.now().uptimeNanoseconds - start) / 1e6
        }
        func median(_ values: [Double]) -> Double { values.sorted()[values.count / 2] }
        var request: [Double] = [], decode: [Double] = [], encode: [Double] = []
        var bytes = (handWritten: 0, encoded: 0)
        _ = service.respond("GET", "/assets?limit=\(Self.items)")   // warm-up
        for _ in 0..<5 {
            var body: [UInt8] = []
            request.append(milliseconds { body = service.respond("GET", "/assets?limit=\(Self.items)").body })
            var page: ListingBody?
            try decode.append(milliseconds { page = try JSONDecoder().decode(ListingBody.self, from: Data(body)) })
            #expect(page?.items.count == Self.items)
            var encoded: [UInt8] = []
            encode.append(milliseconds { encoded = JSONBody.encode(page) })
            bytes = (body.count, encoded.count)
        }
        print("""
            listing of \(Self.items) items, median of 5, ms:
              full request, hand-written body (\(bytes.handWritten) bytes): \(median(request))
              JSONEncoder of the same page alone (\(bytes.encoded) bytes): \(median(encode))
              JSONDecoder of the page: \(median(decode))
              all: request \(request), encode \(encode), decode \(decode)
            """)
    }
}
