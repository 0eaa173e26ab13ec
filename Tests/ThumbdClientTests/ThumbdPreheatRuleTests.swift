import Foundation
import Testing
import ThumbdClient

/// The preheat rule against the table the gallery's JavaScript is tested against too
/// (Tests/Fixtures/preheat-cases.json; Tests/Browser/gallery_grid_test.py,
/// preheat_plan_follows_the_shared_table): scroll positions in, prefetch starts and stops out.
@Suite struct ThumbdPreheatRuleTests {
    struct Table: Decodable { var cases: [Case] }
    struct Case: Decodable, CustomTestStringConvertible, Sendable {
        var name: String
        var columns: Int
        var items: Int
        var steps: [Step]
        var testDescription: String { name }
    }
    struct Step: Decodable, Sendable {
        var top: Double?
        var height: Double?
        var reset: Bool?
        var failed: [Int]?
        var start: [Start]?
        var stop: [[Int]]?
    }
    struct Start: Decodable, Sendable, Equatable {
        var rows: [Int]
        var items: [Int]
        var focus: Int
    }

    static let cases: [Case] = {
        let url = URL(fileURLWithPath: Photos.packageRoot + "/Tests/Fixtures/preheat-cases.json")
        return (try? JSONDecoder().decode(Table.self, from: Data(contentsOf: url)).cases) ?? []
    }()

    @Test func theTableIsRead() {
        #expect(Self.cases.count == 7)
    }

    @Test(arguments: cases)
    func theRuleFollowsTheTable(_ table: Case) {
        var rule = ThumbdPreheatRule(columns: table.columns, itemCount: table.items)
        for (number, step) in table.steps.enumerated() {
            if step.reset == true { rule.reset(); continue }
            if let rows = step.failed { rule.forget(rows: rows[0]..<rows[1]); continue }
            guard let top = step.top, let height = step.height else { Issue.record("step \(number) has no position"); continue }
            let plan = rule.update(top: top, height: height)
            let start = plan.start.map { Start(rows: [$0.rows.lowerBound, $0.rows.upperBound],
                                               items: [$0.items.lowerBound, $0.items.upperBound], focus: $0.focus) }
            #expect(start == (step.start ?? []), "step \(number), top \(top)")
            #expect(plan.stop.map { [$0.lowerBound, $0.upperBound] } == (step.stop ?? []), "step \(number), top \(top)")
        }
    }
}
