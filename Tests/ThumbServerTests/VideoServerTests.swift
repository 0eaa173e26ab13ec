import Dispatch
import Foundation
import Rendering
import Synchronization
import Testing
import TestSupport
import ThumbHash
@testable import ThumbServer

/// Videos beside photos in a served library (README "Videos"): listed with `type`,
/// `duration_ms`, displayed size and container time; thumbnails with the photo's URLs, cache,
/// ETags and error statuses; the helpers' counters in `/stats`.
@Suite struct VideoServerTests {
    /// A photo (Landscape_1.jpg, no EXIF date, mtime 2005-06-07T08:09:10Z), four good videos and
    /// the hostile ones.
    final class MixedLibrary {
        let root = NSTemporaryDirectory() + "thumbd-mixed-\(UUID().uuidString)"

        init() throws {
            let fm = FileManager.default
            try fm.createDirectory(atPath: root + "/clips", withIntermediateDirectories: true)
            try fm.copyItem(atPath: Paths.fixturePhotos + "/Landscape_1.jpg", toPath: root + "/photo.jpg")
            ListingTests.setModified(root + "/photo.jpg", seconds: 1_118_131_750)
            for name in ["h264.mp4", "portrait.mov", "iphone.mov", "vp9.webm", "truncated.mp4", "text.mp4",
                         "huge-16k.mp4", "corrupt.mp4", "empty.mp4"] {
                try fm.copyItem(atPath: VideoFixtures.path(name), toPath: root + "/clips/" + name)
            }
        }

        deinit { try? FileManager.default.removeItem(atPath: root) }
    }

    func server(_ library: MixedLibrary) throws -> ServerHarness {
        let server = try ServerHarness(library: library.root, renderer: VideoFixtures.renderer()) { $0.indexRescanSeconds = 3600 }
        server.waitForInitialScan()
        return server
    }

    func items(_ response: TestResponse) -> [String: [String: Any]] {
        var byPath: [String: [String: Any]] = [:]
        for item in response.json["items"] as? [[String: Any]] ?? [] { byPath[item["path"] as? String ?? ""] = item }
        return byPath
    }

    @Test func listingShowsVideosBesidePhotos() throws {
        let library = try MixedLibrary()
        let server = try server(library)
        let listing = try server.get("/assets?sort=oldest")
        #expect(listing.status == 200)
        let items = items(listing)
        // Truncated, text and empty files are not videos; the 16k header is one (its render is 422).
        #expect(Set(items.keys) == ["photo.jpg", "clips/h264.mp4", "clips/portrait.mov", "clips/iphone.mov",
                                    "clips/vp9.webm", "clips/huge-16k.mp4", "clips/corrupt.mp4"])
        let photo = try #require(items["photo.jpg"])
        #expect(photo["type"] as? String == "photo" && photo["duration_ms"] is NSNull)
        let h264 = try #require(items["clips/h264.mp4"])
        #expect(h264["type"] as? String == "video" && h264["duration_ms"] as? Int == 6000)
        #expect(h264["width"] as? Int == 320 && h264["height"] as? Int == 240)
        #expect(h264["taken"] as? String == "2021-06-01T10:00:00+00:00")   // creation_time, UTC
        let portrait = try #require(items["clips/portrait.mov"])
        #expect(portrait["width"] as? Int == 180 && portrait["height"] as? Int == 320)
        #expect(portrait["duration_ms"] as? Int == 3000)
        let iphone = try #require(items["clips/iphone.mov"])
        #expect(iphone["taken"] as? String == "2022-03-04T05:06:07+09:00")   // Apple's creation date, its offset kept
        // Sorted with the photos by `taken`: the 2005 photo first, then 2021's video, then 2022's.
        let order = (listing.json["items"] as? [[String: Any]] ?? []).compactMap { $0["path"] as? String }
        #expect(order.firstIndex(of: "photo.jpg")! < order.firstIndex(of: "clips/h264.mp4")!)
        #expect(order.firstIndex(of: "clips/h264.mp4")! < order.firstIndex(of: "clips/iphone.mov")!)
        // Kept in the index: a restart lists the same without reading a header again.
        try server.restart()
        let again = try server.get("/assets?sort=oldest")
        #expect(again.json["items"] as? NSArray == listing.json["items"] as? NSArray)
    }

    @Test func nonSquarePixelsAreListedAndPosteredAtTheirDisplaySize() throws {
        // 720x480 at SAR 32:27 is shown 853x480 (720 x 32/27 = 853.3); 1080x1080 at 16:9,
        // 1920x1080; the anamorphic clip with a phone's matrix, 480x853.
        let directory = TemporaryDirectory()
        for name in ["anamorphic.mp4", "square-sar.mp4", "anamorphic-portrait.mov"] {
            try FileManager.default.copyItem(atPath: VideoFixtures.path(name), toPath: directory.path + "/" + name)
        }
        let server = try ServerHarness(library: directory.path, renderer: VideoFixtures.renderer()) { $0.indexRescanSeconds = 3600 }
        server.waitForInitialScan()
        let listed = items(try server.get("/assets"))
        for (name, width, height, grid1Width, grid1Height) in [("anamorphic.mp4", 853, 480, 853, 480),
                                                               ("square-sar.mp4", 1920, 1080, 1179, 663),
                                                               ("anamorphic-portrait.mov", 480, 853, 480, 853)] {
            let item = try #require(listed[name])
            #expect(item["width"] as? Int == width && item["height"] as? Int == height, "\(name)")
            // Grid 1 (contain in 1179x2358): the listed size, or 1920x1080 x 1179/1920 = 1179x663.2.
            let poster = try server.get("/thumbnails/1/" + name)
            #expect(ImageHeader(poster.body) == ImageHeader(format: "jpeg", width: grid1Width, height: grid1Height), "\(name)")
        }
    }

    /// Two files whose decode hangs (`VideoFixtures.makeHanging`), asked for again and again,
    /// take both helpers each time; with `video_decode_timeout_seconds` at 1 s each hang is
    /// killed at 1 s and answered 503 `render_timeout`, its slot freed, so 20 good posters asked
    /// for meanwhile are all served. Before the video deadline of its own, a hang held its slot
    /// for `render_timeout_seconds` + 2 s (12 s here), and the good ones got 503 after 10 s.
    @Test func hungDecodesFreeTheirHelpersAtTheVideoDeadline() throws {
        let directory = TemporaryDirectory()
        let hanging = ["hang-1.webm", "hang-2.webm"]
        for name in hanging { VideoFixtures.makeHanging(at: directory.path + "/" + name) }
        for i in 0..<20 { try FileManager.default.copyItem(atPath: VideoFixtures.path("short.mp4"), toPath: directory.path + "/good-\(i).mp4") }
        let configure: (inout Config) -> Void = { config in
            // 2 s: a good poster's decode in a helper just started stays well inside it on a
            // loaded machine (at 1 s one good poster of 20 timed out under a load of 5).
            config.videoDecodeTimeoutSeconds = 2
            config.renderTimeoutSeconds = 30
            // More render workers than decoders: the decoders are what the hanging files hold.
            // (With two workers both held by hangs, the adaptive LIFO gives a worker to the
            // newest miss, often a hanging file asked again, and the good posters trickle.)
            config.renderWorkers = 4
            config.thumbhashBackfill = false   // only the test's requests decode: exact counts
            config.indexRescanSeconds = 3600
        }
        var config = Config()
        configure(&config)
        // The helpers as `Thumbd` makes them from the config (`video_decoders` 2 by default).
        let posters = try #require(config.videoPosters(executable: VideoFixtures.helperExecutable))
        let server = try ServerHarness(library: directory.path, renderer: Renderer(videoPosters: posters), configure: configure)

        let stop = Atomic(false)
        let hangAnswers = Mutex<[(status: Int, code: String?, seconds: Double)]>([])
        let hangLoops = DispatchGroup()
        for name in hanging {
            DispatchQueue.global().async(group: hangLoops) {
                while !stop.load(ordering: .relaxed) {
                    let start = DispatchTime.now().uptimeNanoseconds
                    let response = try? server.get("/thumbnails/3/" + name)
                    let seconds = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
                    hangAnswers.withLock { $0.append((response?.status ?? 0, response?.json["error"] as? String, seconds)) }
                }
            }
        }
        // Both helpers are on the hanging files before the first good poster is asked for.
        #expect(eventually { posters.busyHelpers.count == 2 })
        let goodAnswers = Mutex<[Int]>([])
        DispatchQueue.concurrentPerform(iterations: 4) { lane in
            for i in stride(from: lane, to: 20, by: 4) {
                let status = (try? server.get("/thumbnails/3/good-\(i).mp4"))?.status ?? 0
                goodAnswers.withLock { $0.append(status) }
            }
        }
        stop.store(true, ordering: .relaxed)
        hangLoops.wait()

        #expect(goodAnswers.withLock { $0 } == Array(repeating: 200, count: 20))
        let answers = hangAnswers.withLock { $0 }
        #expect(answers.count >= 4)   // each file at least twice: the loop went on
        for answer in answers {
            #expect(answer.status == 503 && answer.code == "render_timeout")
            // The 2 s deadline, and a wait for a render worker: far from the client's 30 s.
            #expect(answer.seconds >= 2 && answer.seconds < 12, "\(answer.seconds) s")
        }
        let video = try #require(try server.stats()["video"] as? [String: Any])
        #expect(video["hangs"] as? Int == answers.count && video["failed"] as? Int == answers.count)
        #expect(video["decoded"] as? Int == 20 && video["crashes"] as? Int == 0 && video["in_flight"] as? Int == 0)
        let metrics = try server.get("/metrics").text
        #expect(metrics.contains("\nthumbd_video_helper_faults_total{kind=\"hang\"} \(answers.count)\n"))
        // Killed and reaped: only live helpers are left, idle.
        #expect(posters.busyHelpers.isEmpty && posters.idleHelpers.allSatisfy { kill($0, 0) == 0 })
    }

    /// A video's placeholder is of its whole frame, upright, even when the first render is a
    /// cover grid's centre square (issue 28): the frame is decoded whole anyway. portrait.mov
    /// shows 180x320: in 100x100, 56x100, its ThumbHash counts fewer terms across than down.
    @Test func aVideosPlaceholderIsItsWholeFrame() throws {
        let library = try MixedLibrary()
        let server = try server(library)
        server.waitForInitialScan()
        #expect(try server.get("/thumbnails/3/clips/portrait.mov").image == ImageHeader(format: "jpeg", width: 180, height: 180))
        server.publishPlaceholders()
        let hash = try #require((items(try server.get("/assets"))["clips/portrait.mov"]?["thumbhash"] as? String)
            .flatMap { Data(base64Encoded: $0) })
        let ratio = try #require(ThumbHash.approximateAspectRatio([UInt8](hash)))
        #expect(ratio < 0.75, "\(ratio): not the 1 of the square")
    }

    @Test func videoThumbnailIsCachedAndTaggedAsAPhotoIs() throws {
        let library = try MixedLibrary()
        let server = try server(library)
        let versioned = try #require((items(try server.get("/assets"))["clips/portrait.mov"]?["thumbnails"] as? [String: String])?["3"])
        let first = try server.get(versioned)
        #expect(first.status == 200 && first.header("Content-Type") == "image/jpeg")
        #expect(first.header("X-Cache") == "MISS")
        #expect(first.header("Cache-Control") == "public, max-age=31536000, immutable")
        // 180x320 displayed, cover at 393 never enlarges: the 180 square.
        #expect(ImageHeader(first.body) == ImageHeader(format: "jpeg", width: 180, height: 180))
        let second = try server.get("/thumbnails/3/clips/portrait.mov")
        #expect(second.header("X-Cache") == "HIT-MEMORY" && second.header("ETag") == first.header("ETag"))
        #expect(try server.get("/thumbnails/3/clips/portrait.mov", headers: ["If-None-Match": first.header("ETag")!]).status == 304)
        let webp = try server.get("/thumbnails/5/clips/h264.mp4", headers: ["Accept": "image/webp"])
        #expect(webp.status == 200 && webp.header("Content-Type") == "image/webp")
        let video = try #require(try server.stats()["video"] as? [String: Any])
        #expect(video["decoded"] as? Int == 2 && video["crashes"] as? Int == 0 && video["decoders"] as? Int == 2)
        let metrics = try server.get("/metrics").text
        #expect(metrics.contains("\nthumbd_video_decodes_total{outcome=\"decoded\"} 2\n"))
        #expect(metrics.contains("\nthumbd_video_helper_faults_total{kind=\"crash\"} 0\n"))
    }

    @Test func byteLimitIsForPhotosOnly() throws {
        // h264.mp4 and the photo are both over 1,000 bytes: the photo is refused, the video is not.
        let library = try MixedLibrary()
        let server = try ServerHarness(library: library.root, renderer: VideoFixtures.renderer()) { $0.maxSourceBytes = 1000 }
        #expect(try server.get("/thumbnails/5/photo.jpg").status == 422)
        #expect(try server.get("/thumbnails/5/clips/h264.mp4").status == 200)
    }

    @Test func prefetchWarmsAVideosThumbnail() throws {
        let library = try MixedLibrary()
        let server = try server(library)
        let prefetch = PrefetchStorageServerTests()
        let accepted = try prefetch.post(server, #"{"grid": "5", "paths": ["clips/vp9.webm", "clips/corrupt.mp4"]}"#)
        #expect(accepted.status == 202)
        let job = try prefetch.finalState(server, of: accepted)
        #expect(job["done"] as? Int == 1 && job["failed"] as? Int == 1)
        let hit = try server.get("/thumbnails/5/clips/vp9.webm")
        #expect(hit.status == 200 && hit.header("X-Cache") == "HIT-DISK")
        #expect(ImageHeader(hit.body) == ImageHeader(format: "jpeg", width: 236, height: 236))
    }

    @Test func hostileVideosGetTheirStatusOnceAndAreRemembered() throws {
        let library = try MixedLibrary()
        let server = try server(library)
        for (name, status) in [("truncated.mp4", 415), ("text.mp4", 415), ("empty.mp4", 415), ("corrupt.mp4", 415),
                               ("huge-16k.mp4", 422)] {
            let response = try server.get("/thumbnails/3/clips/" + name)
            #expect(response.status == status, "\(name)")
            #expect(response.header("Cache-Control") == "no-store")
            // Asked again at another grid: remembered against the file, no decode.
            #expect(try server.get("/thumbnails/5/clips/" + name).status == status)
        }
        let renders = try #require(try server.stats()["renders"] as? [String: Any])
        #expect(renders["known_failures"] as? Int == 5)
        // Each non-empty one failed once in a helper (the empty file never reached one); no helper died.
        let video = try #require(try server.stats()["video"] as? [String: Any])
        #expect(video["decoded"] as? Int == 0 && video["failed"] as? Int == 4 && video["crashes"] as? Int == 0)
        // Good videos are still served.
        #expect(try server.get("/thumbnails/1/clips/h264.mp4").status == 200)
    }
}
