import Foundation
import Testing
import TestSupport
@testable import ThumbServer

/// A range prefetch's `focus` (docs/API.md, "Prefetch"): the items from the client's position to
/// the end are warmed first, then those before it, nearest first. A grid switch's first preheat
/// covers half a screen above the screen too; in listing order its renders held both workers
/// while the screen's own misses waited (the scroll benchmark's 5->1 screen: 1.6x its renders'
/// pool time, 1.1x with `focus`).
@Suite struct PrefetchFocusTests {
    @Test func orderedStartsAtTheFocusThenGoesBackNearestFirst() {
        let items = Array(10..<18)   // listing indexes 10...17, a range from 10
        #expect(PrefetchPlan.ordered(items, start: 10, focus: 13) == [13, 14, 15, 16, 17, 12, 11, 10])
        #expect(PrefetchPlan.ordered(items, start: 10, focus: 10) == Array(10..<18))
        #expect(PrefetchPlan.ordered(items, start: 10, focus: 2) == Array(10..<18))    // client above the range
        #expect(PrefetchPlan.ordered(items, start: 10, focus: 18) == Array((10..<18).reversed()))   // below it
        #expect(PrefetchPlan.ordered(items, start: 10, focus: 99) == Array((10..<18).reversed()))
        #expect(PrefetchPlan.ordered([Int](), start: 4, focus: 9) == [])
        // a range clamped by the listing: fewer items than end - start
        #expect(PrefetchPlan.ordered([4, 5, 6], start: 4, focus: 8) == [6, 5, 4])
    }

    /// One render worker, renders recorded in the order they start: the job's order is the
    /// listing's from `focus`, then back towards `start`.
    @Test(arguments: [(nil, [2, 3, 4, 5, 6, 7]), (5, [5, 6, 7, 4, 3, 2]), (2, [2, 3, 4, 5, 6, 7]),
                      (0, [2, 3, 4, 5, 6, 7]), (8, [7, 6, 5, 4, 3, 2])] as [(Int?, [Int])])
    func aJobIsWarmedFromItsFocus(focus: Int?, expected: [Int]) throws {
        let library = try PrefetchTests.CopiesLibrary(count: 10)
        let gate = GatedRenderer()
        gate.open()
        let server = try ServerHarness(library: library.root, renderer: gate) { $0.renderWorkers = 1 }
        server.thumbd.service.index.rescan()
        let listing = try #require(try server.get("/assets?sort=newest&limit=100").json["items"] as? [[String: Any]])
        let names = listing.compactMap { ($0["path"] as? String)?.split(separator: "/").last.map(String.init) }
        #expect(names.count == 10)
        let focusField = focus.map { #", "focus": \#($0)"# } ?? ""
        let accepted = try server.post("/prefetch", #"{"grid": "3", "sort": "newest", "start": 2, "end": 8\#(focusField)}"#)
        #expect(accepted.status == 202)
        #expect(accepted.json["total"] as? Int == 6)
        #expect(gate.waitForStarts(6))
        #expect(gate.started == expected.map { names[$0] })
    }

    @Test(arguments: [#"{"grid": "3", "start": 0, "end": 4, "focus": -1}"#,
                      #"{"grid": "3", "start": 0, "end": 4, "focus": 1.5}"#,
                      #"{"grid": "3", "start": 0, "end": 4, "focus": "2"}"#,
                      #"{"grid": "3", "paths": ["Landscape_1.jpg"], "focus": 0}"#,
                      #"{"grid": "3", "count": 4, "focus": 0}"#])
    func aBadFocusIs400AndQueuesNothing(body: String) throws {
        let server = try ServerHarness()
        let response = try server.post("/prefetch", body)
        #expect(response.status == 400, "\(body)")
        #expect(response.json["error"] as? String == "bad_request")
        #expect(try server.stat("prefetch", "jobs") == 0)
    }
}
