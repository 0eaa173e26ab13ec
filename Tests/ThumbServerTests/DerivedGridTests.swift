import Foundation
import Testing
import Rendering
import ThumbHash
import ThumbServer
import TestSupport

/// Derived grids (docs/API.md): a grid-5 miss for a photo whose grid-3 thumbnail is cached is
/// rendered from that thumbnail (`renders.derived`), from the memory or the disk tier, for
/// clients and prefetch alike; never from another photo, another version of the file, another
/// format, or with `derive_grids` off.
@Suite struct DerivedGridTests {
    let photo = "/thumbnails/%@/Landscape_1.jpg"
    func url(_ grid: String, _ query: String = "") -> String { String(format: photo, grid) + query }

    @Test func gridFiveAfterGridThreeIsDerivedAndExact() throws {
        let server = try ServerHarness()
        #expect(try server.get(url("3")).status == 200)
        let five = try server.get(url("5"))
        #expect(five.status == 200 && five.header("X-Cache") == "MISS")
        #expect(five.image == ImageHeader(format: "jpeg", width: 236, height: 236))
        #expect(try server.stat("renders", "derived") == 1)
        #expect(try server.stat("renders", "total") == 2)
        // Its ETag is the key's, weak, as every thumbnail's; a repeat is a hit with the same one.
        let again = try server.get(url("5"))
        #expect(again.header("X-Cache") == "HIT-MEMORY" && again.header("ETag") == five.header("ETag"))
        #expect(five.header("ETag")?.hasPrefix("W/\"") == true)
        // Grid 1 (contain) is never derived, and grid 3 is not derived from grid 5.
        #expect(try server.get(url("1")).status == 200)
        #expect(try server.stat("renders", "derived") == 1)
    }

    @Test func aDonorOnDiskServesToo() throws {
        let server = try ServerHarness { $0.memoryCacheBytes = 0 }
        #expect(try server.get(url("3")).status == 200)
        // The disk write follows the response: wait until the entry is counted.
        let deadline = Date().addingTimeInterval(10)
        while try server.stat("disk_cache", "entries") < 1 && Date() < deadline { usleep(5_000) }
        let hits = try server.stat("disk_cache", "hits")
        #expect(try server.get(url("5")).image == ImageHeader(format: "jpeg", width: 236, height: 236))
        #expect(try server.stat("renders", "derived") == 1)
        #expect(try server.stat("disk_cache", "hits") == hits)   // reading the donor is not a hit
    }

    @Test func gridFiveFirstAnotherFormatOrTheSwitchOffRenderFromTheSource() throws {
        let server = try ServerHarness()
        #expect(try server.get(url("5")).status == 200)
        #expect(try server.get(url("3")).status == 200)
        #expect(try server.get(url("5", "?format=webp")).image?.format == "webp")   // the donor is JPEG
        #expect(try server.stat("renders", "derived") == 0)
        #expect(try server.stat("renders", "total") == 3)

        let off = try ServerHarness { $0.deriveGrids = false }
        #expect(try off.get(url("3")).status == 200)
        #expect(try off.get(url("5")).status == 200)
        #expect(try off.stat("renders", "derived") == 0)
    }

    /// A derived grid makes no placeholder: its donor holds its own box, and a placeholder is of
    /// the whole photo (docs/API.md, "Placeholders"); the next render of the source makes it.
    @Test func aDerivedGridMakesNoPlaceholder() throws {
        let server = try ServerHarness {
            $0.thumbhashBackfill = false
            $0.thumbhashPreviews = false
        }
        server.waitForInitialScan()
        func thumbhash() throws -> [UInt8]? {
            let items = try server.get("/assets").json["items"] as? [[String: Any]] ?? []
            let item = items.first { $0["path"] as? String == "Landscape_1.jpg" }
            return (item?["thumbhash"] as? String).map { [UInt8](Data(base64Encoded: $0) ?? Data()) }
        }
        #expect(try server.get(url("3")).status == 200)
        server.publishPlaceholders()
        #expect(try thumbhash() != nil)
        server.thumbd.service.index.forgetThumbhash(for: DiskPath("Landscape_1.jpg"))
        server.publishPlaceholders()
        #expect(try thumbhash() == nil)
        #expect(try server.get(url("5")).image == ImageHeader(format: "jpeg", width: 236, height: 236))
        #expect(try server.stat("renders", "derived") == 1)
        #expect(try thumbhash() == nil)   // not grid 3's square
        // Grid 1 renders the source: the whole 1800x1200 photo, 100x67 px, 7 terms across, 5 down.
        #expect(try server.get(url("1")).status == 200)
        server.publishPlaceholders()
        #expect(ThumbHash.approximateAspectRatio(try #require(try thumbhash())) == 7.0 / 5.0)
    }

    @Test func prefetchDerivesFromWhatTheClientSaw() throws {
        let server = try ServerHarness()
        #expect(try server.get(url("3")).status == 200)
        let job = try server.post("/prefetch", #"{"grid": "5", "paths": ["Landscape_1.jpg"]}"#)
        #expect(job.status == 202)
        let deadline = Date().addingTimeInterval(10)
        while try server.stat("renders", "total") < 2 && Date() < deadline { usleep(5_000) }
        #expect(try server.stat("renders", "derived") == 1)
        #expect(try server.stat("renders", "prefetch") == 1)
    }
}
