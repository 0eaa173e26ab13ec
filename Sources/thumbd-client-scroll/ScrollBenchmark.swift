// The scroll benchmark of Tests/Benchmarks/scroll.py, its client made with ThumbdClient alone:
// a 3-column grid of the listing (newest first), 7 rows on screen, scrolled down at a constant
// speed (grid-3 rows/s), each cell asking ThumbdImageManager for its thumbnail as it becomes
// visible and cancelling the request (its task) when it leaves; with --prefetch, a
// ThumbdPreheatController updated every tick. ThumbdImageManager's queue over URLSession's pool
// (6 connections a host) stands in for scroll.py's FIFO over 6 keep-alive connections. The
// figures are scroll.py's, by its definitions (its header): one JSON line of the same fields,
// which `scroll.py --table FILE` prints as its table; --cells-out FILE writes one line per cell
// as scroll.py's does (its "sent" and "first" null: URLSession does not tell them).
//
// Usage: thumbd-client-scroll --url http://127.0.0.1:PORT [--speed 6] [--prefetch]
//          [--duration 15] [--final-wait 5] [--label TEXT] [--json-out FILE] [--cells-out FILE]
import Foundation
import ThumbdClient

struct Options {
    var url = URL(string: "http://127.0.0.1:8080/")!
    var speed = 6.0
    var prefetch = false
    var duration = 15.0
    var finalWait = 5.0
    var drainWait = 60.0
    var label = ""
    var jsonOut: String?
    var cellsOut: String?

    init(_ arguments: [String]) throws {
        var rest = arguments.makeIterator()
        func value(_ name: String) throws -> String {
            guard let value = rest.next() else { throw UsageError(text: "\(name) needs a value") }
            return value
        }
        while let argument = rest.next() {
            switch argument {
            case "--url": url = URL(string: try value(argument))!
            case "--speed": speed = Double(try value(argument)) ?? speed
            case "--prefetch": prefetch = true
            case "--duration": duration = Double(try value(argument)) ?? duration
            case "--final-wait": finalWait = Double(try value(argument)) ?? finalWait
            case "--drain-wait": drainWait = Double(try value(argument)) ?? drainWait
            case "--label": label = try value(argument)
            case "--json-out": jsonOut = try value(argument)
            case "--cells-out": cellsOut = try value(argument)
            default: throw UsageError(text: "unknown argument \(argument)")
            }
        }
        guard url.host == "127.0.0.1", speed > 0, speed <= 200, duration > 0, duration <= 600 else {
            throw UsageError(text: "--url must be http://127.0.0.1:PORT; speed 0...200, duration 0...600 s")
        }
    }
}

struct UsageError: Error { var text: String }

/// One cell that became visible, and what happened to its request (scroll.py's `Cell`).
@MainActor final class Cell {
    /// scroll.py's states, by its words (`--cells-out`).
    enum State: String { case sent, done, error, cancelled, blankAtEnd = "blank_at_end" }
    let index: Int
    let visible: Double
    let steady: Bool
    var hidden: Double?
    var last: Double?
    var state = State.sent
    var status: Int?
    var cacheStatus: String?
    var renderMilliseconds: Double?
    var error: String?
    var task: Task<Void, Never>?

    init(index: Int, visible: Double, steady: Bool) {
        self.index = index
        self.visible = visible
        self.steady = steady
    }

    var ready: Bool { state == .done && status == 200 }

    /// From visible to the last byte; a cell never ready counts its visible time (censored).
    func blank(end: Double) -> Double {
        if ready, let last { return last - visible }
        return (hidden ?? end) - visible
    }
}

@main
struct ScrollBenchmark {
    static let rowsOnScreen = 7.0
    static let columns = 3
    static let tick = 0.010
    static let steadyAfter = 1.5
    static let readyMilliseconds = 50.0

    static func main() async {
        do {
            let options = try Options(Array(CommandLine.arguments.dropFirst()))
            let result = try await run(options)
            let data = try JSONSerialization.data(withJSONObject: result, options: [.sortedKeys])
            let line = String(decoding: data, as: UTF8.self)
            print(line)
            if let path = options.jsonOut {
                let handle = FileHandle(forWritingAtPath: path) ?? {
                    _ = FileManager.default.createFile(atPath: path, contents: nil)
                    return FileHandle(forWritingAtPath: path)!
                }()
                handle.seekToEndOfFile()
                handle.write(Data((line + "\n").utf8))
                handle.closeFile()
            }
        } catch let error as UsageError {
            FileHandle.standardError.write(Data("thumbd-client-scroll: \(error.text)\n".utf8))
            exit(2)
        } catch {
            FileHandle.standardError.write(Data("thumbd-client-scroll: \(error)\n".utf8))
            exit(1)
        }
    }

    /// Waits (bounded) until the server has no render queued or running.
    static func idle(_ library: ThumbdLibrary, within seconds: Double) async throws -> (ThumbdStats, Bool) {
        let clock = ContinuousClock()
        let deadline = clock.now + .seconds(seconds)
        while true {
            let stats = try await library.stats()
            if stats.renders.inFlight == 0 && stats.renders.queued == 0 { return (stats, true) }
            if clock.now > deadline { return (stats, false) }
            try await Task.sleep(for: .milliseconds(100))
        }
    }

    @MainActor
    static func run(_ options: Options) async throws -> [String: Any] {
        let library = ThumbdLibrary(baseURL: options.url, clientID: "client-scroll-\(ProcessInfo.processInfo.processIdentifier)")
        let assets = try await library.fetchAssets(sort: .newest, pageSize: 10_000).assets
        guard !assets.isEmpty else { throw UsageError(text: "the library is empty") }
        let images = ThumbdImageManager(library: library)
        let caching = ThumbdCachingManager(library: library)
        let count = assets.count
        let rows = (count + columns - 1) / columns
        let yMax = max(0, Double(rows) - rowsOnScreen)
        let preheat = options.prefetch
            ? ThumbdPreheatController(caching: caching, grid: .three, columns: columns, itemCount: count) : nil

        let (s0, _) = try await idle(library, within: 30)
        let cold = s0.memoryCache.entries == 0 && s0.diskCache.entries == 0

        let clock = ContinuousClock()
        let start = clock.now
        func now() -> Double {
            let elapsed = clock.now - start
            return Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        }
        var cells: [Cell] = []
        var visible: [Int: Cell] = [:]
        var firstScreen: [Cell] = []
        var lags: [Double] = []
        var endReached = false
        var tick = 0
        var y = 0.0
        var plans = (posts: 0, stops: 0)
        while true {
            let t = now()
            if t >= options.duration { break }
            // The first tick shows the screen at exactly the top, as scroll.py's does.
            y = cells.isEmpty ? 0 : min(yMax, options.speed * t)
            let first = max(0, Int(y.rounded(.down)))
            let last = min(rows, Int((y + rowsOnScreen - 1e-9).rounded(.up)))
            var shown = Set<Int>()
            for row in first..<max(first, last) {
                for index in row * columns..<min(count, (row + 1) * columns) { shown.insert(index) }
            }
            for index in shown.sorted() where visible[index] == nil {
                let cell = Cell(index: index, visible: t, steady: t >= steadyAfter)
                cells.append(cell)
                visible[index] = cell
                let stream = images.requestImage(for: assets[index], grid: .three)
                cell.task = Task { @MainActor in
                    do {
                        for try await result in stream {
                            guard case .thumbnail(let thumbnail) = result, cell.state == .sent else { continue }
                            cell.last = now()
                            cell.state = .done
                            cell.status = 200
                            cell.cacheStatus = thumbnail.cacheStatus
                            cell.renderMilliseconds = thumbnail.renderMilliseconds
                        }
                    } catch let error as ThumbdError {
                        guard cell.state == .sent else { return }
                        cell.last = now()
                        if let answer = error.serverError {
                            cell.state = .done
                            cell.status = answer.status
                        } else {
                            cell.state = .error
                            cell.error = "\(error)"
                        }
                    } catch {
                        // cancelled: the cell left
                    }
                }
            }
            for (index, cell) in visible where !shown.contains(index) {
                visible[index] = nil
                cell.hidden = t
                if cell.state == .sent {
                    cell.state = .cancelled
                    cell.task?.cancel()
                }
            }
            if firstScreen.isEmpty { firstScreen = Array(visible.values) }
            if let preheat {
                let plan = await preheat.update(top: y, height: rowsOnScreen)
                plans.posts += plan.start.count
                plans.stops += plan.stop.count
            }
            if y >= yMax {
                endReached = true
                break
            }
            tick += 1
            var delay = Double(tick) * Self.tick - now()
            if delay < -Self.tick {
                lags.append(-delay)
                tick = Int((now() / Self.tick).rounded(.up))
                delay = 0
            } else {
                lags.append(max(0, -delay))
            }
            if delay > 0 { try? await Task.sleep(for: .seconds(delay)) }
        }
        let scrollEnd = now()
        // The last screen stays put until its cells are ready (bounded).
        while now() < scrollEnd + options.finalWait && visible.values.contains(where: { $0.state == .sent }) {
            try? await Task.sleep(for: .seconds(Self.tick))
        }
        let end = now()
        for cell in visible.values where cell.state == .sent {
            cell.hidden = end
            cell.state = .blankAtEnd
            cell.task?.cancel()
        }
        var stopAll = 0
        if let preheat {
            await preheat.stop()
            stopAll = 1
        }
        await preheat?.settle()
        let preheatError = await preheat?.lastError
        let drainStart = now()
        let (s1, drained) = try await idle(library, within: options.drainWait)
        let drainSeconds = now() - drainStart
        var leaks: [String: Int] = [:]
        let deadline = now() + 10
        var s2 = s1
        repeat {
            s2 = try await library.stats()
            leaks = [:]
            if s2.renders.queued != 0 { leaks["renders.queued"] = s2.renders.queued }
            if s2.renders.inFlight != 0 { leaks["renders.in_flight"] = s2.renders.inFlight }
            if s2.prefetch.queued != 0 { leaks["prefetch.queued"] = s2.prefetch.queued }
            if leaks.isEmpty { break }
            try await Task.sleep(for: .milliseconds(100))
        } while now() < deadline

        if let path = options.cellsOut {
            func rel(_ t: Double?) -> Any { t.map { ($0 * 10_000).rounded() / 10_000 } ?? NSNull() }
            var text = ""
            for cell in cells {
                let line: [String: Any] = ["grid": columns, "index": cell.index, "steady": cell.steady,
                                           "visible": rel(cell.visible), "hidden": rel(cell.hidden), "sent": NSNull(),
                                           "first": NSNull(), "last": rel(cell.last), "state": cell.state.rawValue,
                                           "status": cell.status ?? NSNull(), "x_cache": cell.cacheStatus ?? NSNull()]
                text += String(decoding: try JSONSerialization.data(withJSONObject: line, options: [.sortedKeys]), as: UTF8.self) + "\n"
            }
            try text.write(toFile: path, atomically: true, encoding: .utf8)
        }

        // ---- figures, by scroll.py's definitions
        func percentile(_ values: [Double], _ p: Double) -> Double? {
            guard !values.isEmpty else { return nil }
            let v = values.sorted()
            let k = Double(v.count - 1) * p / 100
            let f = Int(k.rounded(.down)), c = min(v.count - 1, f + 1)
            return v[f] + (v[c] - v[f]) * (k - Double(f))
        }
        func r1(_ x: Double?) -> Any { x.map { ($0 * 10).rounded() / 10 } ?? NSNull() }
        let ready = cells.filter(\.ready)
        let steady = cells.filter(\.steady)
        let steadyReady = steady.filter { $0.ready && ($0.last! - $0.visible) * 1000 <= readyMilliseconds }.count
        let scrolledAway = cells.filter { $0.state == .cancelled }.count
        let atEnd = cells.filter { $0.state == .blankAtEnd }.count
        let non200 = cells.filter { $0.state == .done && $0.status != 200 }
        let broken = cells.filter { $0.state == .error }
        let renders = s1.renders.total - s0.renders.total
        var byCache: [String: Int] = [:]
        for cell in ready { byCache[cell.cacheStatus ?? "none", default: 0] += 1 }
        var statuses: [String: Int] = [:]
        for cell in non200 { statuses[String(cell.status ?? 0), default: 0] += 1 }
        let workers = Double(ProcessInfo.processInfo.activeProcessorCount)
        let screenRenders = firstScreen.compactMap(\.renderMilliseconds)
        let pool = screenRenders.isEmpty ? 0 : max(screenRenders.reduce(0, +) / workers, screenRenders.max()!)
        let screenReady = firstScreen.filter(\.ready)
        var screen: [String: Any] = ["label": "first screen", "cells": firstScreen.count, "ready": screenReady.count,
                                     "renders": screenRenders.count, "renders_pool_ms": r1(pool)]
        if !screenReady.isEmpty && screenReady.count == firstScreen.count {
            screen["ms"] = r1(screenReady.map { $0.last! }.max()! * 1000)
        } else {
            screen["ms"] = NSNull()
            screen["never_ready"] = ["scrolled_away": firstScreen.filter { $0.state == .cancelled }.count,
                                     "blank_at_end": firstScreen.filter { $0.state == .blankAtEnd }.count,
                                     "errors": firstScreen.filter { $0.state == .error || ($0.state == .done && $0.status != 200) }.count]
        }
        let aborted = s2.requests[499] - s0.requests[499]
        var statusDelta: [String: Int] = [:]
        for (status, n) in s2.requests.byStatus where n != (s0.requests.byStatus[status] ?? 0) {
            statusDelta[status] = n - (s0.requests.byStatus[status] ?? 0)
        }
        return [
            "kind": "run", "label": options.label.isEmpty ? "swift v=\(options.speed)" : options.label,
            "scenario": "speed", "client": "ThumbdClient",
            "speed_rows_per_s_at_3": options.speed, "prefetch": options.prefetch,
            "photos": count, "cold_cache": cold, "scrolled_s": r1(scrollEnd), "end_of_library": endReached,
            "cells_shown": cells.count, "cells_drawn": ready.count, "steady_cells": steady.count,
            "ready_50ms_pct": steady.isEmpty ? NSNull() : r1(100 * Double(steadyReady) / Double(steady.count)),
            "blank_p50_ms": r1(percentile(cells.map { $0.blank(end: end) * 1000 }, 50)),
            "blank_p95_ms": r1(percentile(cells.map { $0.blank(end: end) * 1000 }, 95)),
            "blank_p50_steady_ms": r1(percentile(steady.map { $0.blank(end: end) * 1000 }, 50)),
            "blank_p95_steady_ms": r1(percentile(steady.map { $0.blank(end: end) * 1000 }, 95)),
            "scrolled_away_blank": scrolledAway, "blank_at_end": atEnd,
            "renders": renders, "renders_prefetch": s1.renders.prefetch - s0.renders.prefetch,
            "renders_per_cell_drawn": ready.isEmpty ? NSNull() : (Double(renders) / Double(ready.count) * 100).rounded() / 100,
            "renders_not_drawn": renders - ready.count,
            "drawn_by_x_cache": byCache,
            "screens": [screen],
            "errors": ["cell_non200": non200.count, "cell_broken": broken.count, "cell_statuses": statuses,
                       "prefetch_failures": preheatError == nil ? 0 : 1,
                       "prefetch_failure_examples": preheatError.map { ["\($0)"] } ?? [],
                       "broken_examples": broken.prefix(3).map { $0.error ?? "" }],
            "prefetch_calls": ["posts": plans.posts, "deletes": plans.stops, "stop_all": stopAll,
                               "items": s2.prefetch.done + s2.prefetch.skipped + s2.prefetch.failed + s2.prefetch.cancelled
                                   - s0.prefetch.done - s0.prefetch.skipped - s0.prefetch.failed - s0.prefetch.cancelled],
            // URLSession owns the connections and ThumbdImageManager its queue: what the client
            // cannot see is null (the server's count is the server's). A cancel closes the
            // connection under way (the server's 499s say how many); cells that scrolled away
            // blank and were not cancelled on a connection were dropped while queued.
            "connections": ["client_opened": NSNull(),
                            "server_counted": s2.connections.total - s0.connections.total,
                            "pool_opened": NSNull(),
                            "cancel_closes": aborted, "queue_drops": max(0, scrolledAway - aborted), "max_client_queue": NSNull()],
            "server_drained": drained, "drain_s": r1(drainSeconds), "leaks": leaks,
            "server_extras": ["renders.abandoned": s2.renders.abandoned - s0.renders.abandoned,
                              "renders.derived": s2.renders.derived - s0.renders.derived,
                              "requests.by_status.499": aborted],
            "requests_by_status": statusDelta,
            "prefetch_stats": ["done": s2.prefetch.done - s0.prefetch.done, "skipped": s2.prefetch.skipped - s0.prefetch.skipped,
                               "failed": s2.prefetch.failed - s0.prefetch.failed, "cancelled": s2.prefetch.cancelled - s0.prefetch.cancelled],
            "client_tick_lag_p95_ms": r1(percentile(lags.map { $0 * 1000 }, 95)),
            "client_tick_lag_max_ms": r1((lags.max() ?? 0) * 1000),
            "server_queue": ["max_queued": NSNull(), "queued_at_scroll_end": NSNull(), "max_prefetch_queued": NSNull(), "samples": 0],
        ]
    }
}
