import Foundation
import Testing
import TestSupport
@testable import ThumbServer

/// Sweeps over the shared corpus (`../shared/corpus`): they run when it is there.
@Suite(.enabled(if: Paths.hasCorpus, "needs ../shared/corpus"), .serialized)
struct CorpusSweepTests {
    let corpus = Paths.corpus ?? ""

    @Test func everyPhotoAtEveryGridHasItsExactSize() throws {
        let server = try ServerHarness(library: corpus + "/photos")
        for name in Paths.files(in: corpus + "/photos") {
            let source = try #require(VipsHeader.displaySize(corpus + "/photos/" + name))
            for grid in ["1", "3", "5"] {
                let response = try server.get("/thumbnails/\(grid)/\(encodePath(name))")
                let expected = ExpectedSize.of(grid: grid, width: source.width, height: source.height)
                #expect(response.status == 200, "\(name) grid \(grid): \(response.text)")
                #expect(response.image == ImageHeader(format: "jpeg", width: expected.width, height: expected.height),
                        "\(name) at grid \(grid)")
                #expect(!response.carriesEXIF, "\(name) keeps EXIF")
            }
        }
    }

    @Test func theOrientationSetsComeOutTheSameSize() throws {
        let server = try ServerHarness(library: corpus + "/photos")
        for set in ["Landscape", "Portrait"] {
            var sizes: [ImageHeader] = []
            for n in 1...8 {
                let response = try server.get("/thumbnails/1/\(set)_\(n).jpg")
                sizes.append(try #require(response.image))
            }
            #expect(Set(sizes.map(\.description)).count == 1, "\(set): \(sizes)")
            #expect(sizes[0] == (set == "Landscape" ? ImageHeader(format: "jpeg", width: 1179, height: 786)
                                                    : ImageHeader(format: "jpeg", width: 1179, height: 1769)))
        }
    }

    @Test func everyFormatRendersOrGetsTheDocumentedError() throws {
        let server = try ServerHarness(library: corpus + "/formats")
        // Sources libvips 8.14 on Debian 12 cannot decode: documented 415 (README "Formats").
        let unsupported: Set<String> = ["jpeg-lossless-sof3.jpg"]
        for name in Paths.files(in: corpus + "/formats") {
            let response = try server.get("/thumbnails/3/\(encodePath(name))")
            if unsupported.contains(name) {
                #expect(response.status == 415, "\(name)")
                continue
            }
            #expect(response.status == 200, "\(name): \(response.status) \(response.text)")
            let header = try #require(response.image, "\(name)")
            // Alpha by the source's band count (grey+alpha 2, RGBA 4; CMYK's 4 bands are opaque), as vipsheader reads it; GIFs
            // always load with alpha (docs/API.md).
            let bands = Int(VipsHeader.field("bands", corpus + "/formats/" + name)) ?? 3
            let cmyk = VipsHeader.field("interpretation", corpus + "/formats/" + name).contains("CMYK")
            let alpha = bands == 2 || (bands == 4 && !cmyk) || name.hasSuffix(".gif")
            #expect(header.format == (alpha ? "png" : "jpeg"), "\(name): \(bands) bands")
            // Grid 3 of a source with both sides over 393 px is 393x393 whatever its orientation.
            if let source = VipsHeader.displaySize(corpus + "/formats/" + name) {
                let expected = ExpectedSize.of(grid: "3", width: source.width, height: source.height)
                #expect(header.width == expected.width && header.height == expected.height, "\(name): \(header)")
            }
        }
    }

    /// What is listed renders, and what is not listed answers 415 (README "Formats"), over every
    /// folder of the corpus. The exceptions are the documented ones, in `broken/`: a file whose
    /// header reads but whose data does not decode is listed and answers 415, or 422 over the
    /// pixel limit (the bombs). Everything else is listed but `jpeg-lossless-sof3.jpg`, whose
    /// header libjpeg-turbo 2.1 already refuses.
    @Test(arguments: ["photos", "formats", "names", "broken"])
    func theListingAndTheRendersAgreeOnEveryFile(folder: String) throws {
        let server = try ServerHarness(library: corpus + "/" + folder) { $0.indexRescanSeconds = 3600 }
        server.waitForInitialScan()
        let items = try server.get("/assets?limit=10000").json["items"] as? [[String: Any]] ?? []
        let listed = Set(items.compactMap { $0["url"] as? String })
        for name in Paths.files(in: corpus + "/" + folder) {
            let url = encodePath(name)
            let response = try server.get("/thumbnails/3/\(url)")
            if !listed.contains(url) {
                #expect(response.status == 415, "\(folder)/\(name) is not listed but answers \(response.status)")
            } else if folder == "broken" {
                #expect([200, 415, 422].contains(response.status), "\(folder)/\(name): \(response.status)")
            } else {
                #expect(response.status == 200, "\(folder)/\(name) is listed but answers \(response.status) \(response.text)")
            }
        }
        if folder != "broken" {
            let unlisted = Paths.files(in: corpus + "/" + folder).filter { !listed.contains(encodePath($0)) }
            #expect(unlisted == (folder == "formats" ? ["jpeg-lossless-sof3.jpg"] : []), "\(folder)")
            // and the one left out is said: /stats counts it (LibraryIndexTests has the rule).
            let library = try server.get("/stats").json["library"] as? [String: Any]
            #expect(library?["undecodable_files"] as? Int == unlisted.count, "\(folder)")
        }
    }

    /// But `truncated-10000-bytes.jpg`, a JPEG cut short: 200 with what decodes
    /// (`DegradedSourceTests`).
    @Test func brokenSourcesGet415Or422AndTheServerKeepsServing() throws {
        let server = try ServerHarness(library: corpus + "/broken")
        let cutJPEG = "truncated-10000-bytes.jpg"
        let cut = try server.get("/thumbnails/3/\(cutJPEG)")
        #expect(cut.status == 200 && cut.image == ImageHeader(format: "jpeg", width: 393, height: 393))
        #expect(try server.stat("renders", "degraded") == 1)
        for name in Paths.files(in: corpus + "/broken") where name != cutJPEG {
            let started = Date()
            let response = try server.get("/thumbnails/3/\(encodePath(name))")
            let expected = name.hasPrefix("bomb-png") ? [422] : name.hasPrefix("bomb") ? [415, 422] : [415]
            #expect(expected.contains(response.status), "\(name): \(response.status) \(response.text)")
            #expect(response.header("ETag") == nil)
            #expect(response.header("Cache-Control") == "no-store")
            #expect(Date().timeIntervalSince(started) < 2, "\(name) took too long")
            #expect(try server.get("/healthz").status == 200)
        }
        #expect(try server.stat("disk_cache", "entries") == 1)   // the cut JPEG's: a failure is never stored
        let again = try server.get("/thumbnails/3/empty.jpg")    // and not remembered either
        #expect(again.status == 415)
        #expect(try server.stat("renders", "failed") >= 10)
    }

    @Test func everyNameInTheNamesFolderIsReachable() throws {
        let server = try ServerHarness(library: corpus + "/names")
        for name in Paths.files(in: corpus + "/names") {
            let response = try server.get("/thumbnails/5/\(encodePath(name))")
            #expect(response.status == 200, "\(name): \(response.text)")
        }
    }
}
