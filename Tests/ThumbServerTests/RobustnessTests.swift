import Foundation
import Testing
@testable import ThumbServer

/// Overload, render deadlines and the admin token (hostile-input and overload issue).
@Suite struct RobustnessTests {
    @Test func aFullRenderQueueGives503WithRetryAfterWhileHitsAreServed() throws {
        let root = NSTemporaryDirectory() + "thumbd-overload-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: root) }
        for i in 0..<12 { try FileManager.default.copyItem(atPath: Paths.fixturePhotos + "/Landscape_1.jpg", toPath: root + "/p\(i).jpg") }
        let server = try ServerHarness(library: root) { $0.renderWorkers = 1; $0.renderQueueLimit = 1 }
        #expect(try server.get("/thumbnails/5/p0.jpg").status == 200)   // a hot entry
        let statuses = LockedArray<(Int, String?)>()
        let done = DispatchGroup()
        for i in 0..<11 {  // real threads: all 11 requests are in flight at once
            done.enter()
            Thread {
                let response = try? server.get("/thumbnails/1/p\(i + 1).jpg")
                statuses.append((response?.status ?? -1, response?.header("Retry-After")))
                done.leave()
            }.start()
        }
        done.wait()
        let refused = statuses.values.filter { $0.0 == 503 }
        #expect(!refused.isEmpty)
        #expect(refused.allSatisfy { $0.1 == "1" })
        #expect(statuses.values.allSatisfy { $0.0 == 200 || $0.0 == 503 })
        #expect(try server.get("/thumbnails/5/p0.jpg").header("X-Cache") == "HIT-MEMORY")
        #expect(try server.get("/thumbnails/1/p11.jpg").status == 200)   // and misses work again after
        let renders = try #require(try server.stats()["renders"] as? [String: Any])
        #expect(renders["refused"] as? Int == refused.count)
        #expect(try server.stat("disk_cache", "misses")
                == (renders["total"] as? Int ?? 0) - (renders["prefetch"] as? Int ?? 0) + refused.count)
    }

    @Test func aRenderPastItsDeadlineGives503AndIsStillCached() throws {
        let server = try ServerHarness { $0.renderTimeoutSeconds = 0.001 }
        let late = try server.get("/thumbnails/1/Landscape_6.jpg")
        #expect(late.status == 503)
        #expect(late.json["error"] as? String == "render_timeout")
        #expect(late.header("Retry-After") != nil)
        let deadline = Date().addingTimeInterval(10)
        var later = try server.get("/thumbnails/1/Landscape_6.jpg")
        while later.status != 200 && Date() < deadline {
            usleep(50_000)
            later = try server.get("/thumbnails/1/Landscape_6.jpg")
        }
        #expect(later.status == 200)   // joined the render that outlived its deadline, or hit its result
        #expect(try server.stat("renders", "total") == 1)
    }

    /// A render's deadline timer belongs to its own flight: when nothing can be cached (here the
    /// disk limit is one block and memory is off), every request renders again, and a timer left
    /// from an earlier render must not fail the request rendering when it fires.
    @Test func anEarlierRendersDeadlineDoesNotFailALaterRequest() throws {
        let server = try ServerHarness {
            $0.memoryCacheBytes = 0
            $0.diskCacheBytes = 4096
            $0.renderTimeoutSeconds = 2
        }
        // Renders in well under 2 s, even on a loaded machine (grid 1 in PNG took over 1.5 s
        // under a load of 15), and long enough that a request is rendering most of the time.
        let target = "/thumbnails/3/Landscape_1.jpg?format=png"
        let started = Date()
        var statuses: [Int] = []
        while Date().timeIntervalSince(started) < 5 { statuses.append(try server.get(target).status) }
        #expect(statuses.count >= 3)
        #expect(statuses.allSatisfy { $0 == 200 }, "statuses: \(statuses)")
        // Each request rendered, or got the result of the render that had just finished (its
        // flight still held the outcome while the disk write was attempted): coalesced.
        let renders = try server.stat("renders", "total"), coalesced = try server.stat("renders", "coalesced")
        #expect(renders + coalesced == statuses.count, "renders \(renders), coalesced \(coalesced), requests \(statuses.count)")
    }

    @Test func aSourceOverTheByteLimitIs422() throws {
        let server = try ServerHarness { $0.maxSourceBytes = 100_000 }   // Landscape_1 is 347,327 bytes
        let big = try server.get("/thumbnails/3/Landscape_1.jpg")
        #expect(big.status == 422)
        #expect(big.json["error"] as? String == "source_too_large")
        #expect(try server.get("/thumbnails/3/Landscape_1.jpg").status == 422)   // remembered for the unchanged file
        #expect(try server.get("/thumbnails/3/kodak-dc210-1998-vga.jpg").status == 200)   // 79,837 bytes
        // The README's identity still holds: each disk miss is one render (one failed, one done)
        // or one remembered failure.
        #expect(try server.stat("disk_cache", "misses") == 3)
        #expect(try server.stat("renders", "total") == 2)
        #expect(try server.stat("renders", "failed") == 1)
        #expect(try server.stat("renders", "known_failures") == 1)
    }

    @Test func theAdminTokenGuardsStatsMetricsAndPrefetchChanges() throws {
        let server = try ServerHarness { $0.adminToken = "s3cret" }
        for (method, target) in [("GET", "/stats"), ("GET", "/metrics"), ("DELETE", "/prefetch"), ("POST", "/prefetch")] {
            let anonymous = try server.get(target, method: method)
            #expect(anonymous.status == 401, "\(method) \(target)")
            #expect(anonymous.json["error"] as? String == "unauthorized")
            #expect(anonymous.header("WWW-Authenticate")?.hasPrefix("Bearer") == true)
            #expect(try server.get(target, headers: ["Authorization": "Bearer wrong"], method: method).status == 401)
        }
        #expect(try server.get("/stats", headers: ["Authorization": "Bearer s3cret"]).status == 200)
        #expect(try server.get("/metrics", headers: ["Authorization": "bearer s3cret"]).status == 200)
        #expect(try server.get("/thumbnails/5/Landscape_1.jpg").status == 200)
        #expect(try server.get("/healthz").status == 200)
        #expect(try server.get("/assets").status == 200)
    }

    @Test func metricsAreValidPrometheusText() throws {
        let server = try ServerHarness()
        _ = try server.get("/thumbnails/5/Landscape_1.jpg")
        _ = try server.get("/thumbnails/5/Landscape_1.jpg")
        let metrics = try server.get("/metrics")
        #expect(metrics.header("Content-Type")?.hasPrefix("text/plain; version=0.0.4") == true)
        var families = Set<String>()
        for line in metrics.text.split(separator: "\n") where line.hasPrefix("# TYPE ") {
            let name = String(line.split(separator: " ")[2])
            #expect(families.insert(name).inserted, "\(name) declared twice")
        }
        #expect(metrics.text.contains("thumbd_cache_hits_total{tier=\"memory\"} 1\n"))
        #expect(metrics.text.contains("thumbd_renders_total 1\n"))
        #expect(metrics.text.contains("thumbd_render_duration_seconds_count 1\n"))
        #expect(metrics.text.contains("thumbd_http_requests_total{status=\"200\"} 2\n"))
    }
}
