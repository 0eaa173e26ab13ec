/// The one description of what `/stats` and `/metrics` report (issue 27): a list of entries, each
/// a figure read from one snapshot, or a JSON object of entries. A figure has its `/stats` key and
/// its `/metrics` sample (family, kind, help, labels) side by side, so a figure added here is in
/// both outputs; the few that one format words otherwise (render percentiles beside a histogram,
/// the disk fault's sentence beside a 0/1 gauge) say so with `statsOnly` or `metricsOnly`.
/// `StatsSchema.json` and `StatsSchema.prometheus` render it; `ThumbService.statsSchema` is thumbd's.
struct StatsEntry<Snapshot>: Sendable {
    enum Node: Sendable {
        /// A figure: its key in its JSON object (nil: not in `/stats`), its sample in `/metrics`
        /// (nil: not there), and how it is read.
        case figure(key: String?, metric: MetricSample?, value: @Sendable (Snapshot) -> StatsValue)
        /// A JSON object of entries, `null` when `present` says no (its figures are then not in
        /// `/metrics` either). Objects nest `/stats` only: Prometheus families are flat.
        case object(key: String, present: @Sendable (Snapshot) -> Bool, entries: [StatsEntry])
    }

    let node: Node

    /// A figure in both: `/stats`' `key` and `/metrics`' `metric`.
    static func figure(_ key: String, _ metric: MetricSample,
                       _ value: @escaping @Sendable (Snapshot) -> StatsValue) -> StatsEntry {
        StatsEntry(node: .figure(key: key, metric: metric, value: value))
    }

    /// A figure in `/stats` only: one `/metrics` words otherwise (a mean, a percentile, a
    /// sentence) or has no series for.
    static func statsOnly(_ key: String, _ value: @escaping @Sendable (Snapshot) -> StatsValue) -> StatsEntry {
        StatsEntry(node: .figure(key: key, metric: nil, value: value))
    }

    /// A figure in `/metrics` only: a histogram, or a series `/stats` words otherwise.
    static func metricsOnly(_ metric: MetricSample, _ value: @escaping @Sendable (Snapshot) -> StatsValue) -> StatsEntry {
        StatsEntry(node: .figure(key: nil, metric: metric, value: value))
    }

    /// A JSON object; `null` in `/stats` and absent from `/metrics` while `present` is false.
    static func object(_ key: String, present: @escaping @Sendable (Snapshot) -> Bool = { _ in true },
                       _ entries: [StatsEntry]) -> StatsEntry {
        StatsEntry(node: .object(key: key, present: present, entries: entries))
    }
}

/// A figure's value, as `/stats` and `/metrics` each write it.
enum StatsValue: Sendable {
    /// A whole number.
    case integer(Int)
    /// A fractional number: `/stats` rounds it to `places` decimals (`%.{places}f`), `/metrics`
    /// writes it in full (Swift's shortest round-tripping form).
    case number(Double, places: Int)
    /// `/stats`: `true`/`false`; `/metrics`: `1`/`0`.
    case flag(Bool)
    /// `/stats`: a string; `/metrics`: an `info` sample (`1`) with the text as its key label.
    case text(String)
    /// `/stats`: an object of these texts; `/metrics`: an `info` sample (`1`) with them as its labels.
    case labels([(name: String, value: String)])
    /// `/stats`: `null`; `/metrics`: no sample (a family left with none is not written).
    case absent
    /// `/stats`: an object of counts in this order; `/metrics`: one sample per key, under the
    /// sample's key label (`status`, `outcome`). An empty list still writes the family's header.
    case counts([(key: String, count: Int)])
    /// `/metrics` only: a histogram's cumulative buckets (upper bounds in seconds), sum and count.
    case histogram(bounds: [Double], buckets: [Int], sum: Double, count: Int)
    /// `/stats` only: an array of objects of (key, value), in order.
    case objects([[(key: String, value: StatsValue)]])
}

/// What a Prometheus family is (`# TYPE`, text format 0.0.4). `info` is written as a gauge whose
/// one sample is `1`, its figure a label (as the client libraries' `*_info` series).
enum MetricKind: String, Sendable {
    case counter, gauge, histogram, info

    /// The `# TYPE` word: text format 0.0.4 has no `info`.
    var typeName: String { self == .info ? "gauge" : rawValue }
}

/// A Prometheus family: name, kind and `# HELP` text, declared once however many samples it has.
struct MetricFamily: Sendable {
    let name: String
    let kind: MetricKind
    let help: String

    init(_ name: String, _ kind: MetricKind, _ help: String) {
        self.name = name
        self.kind = kind
        self.help = help
    }

    /// The family's sample with these fixed labels (none by default).
    func sample(_ labels: [(name: String, value: String)] = []) -> MetricSample {
        MetricSample(family: self, labels: labels, keyLabel: nil)
    }

    /// The family's sample with one fixed label.
    func sample(_ label: String, _ value: String) -> MetricSample {
        sample([(label, value)])
    }

    /// Samples whose `label` is the value's keys (`.counts`) or text (`.text`, for `info`).
    func by(_ label: String) -> MetricSample {
        MetricSample(family: self, labels: [], keyLabel: label)
    }
}

/// Where a figure goes in `/metrics`: its family and labels.
struct MetricSample: Sendable {
    let family: MetricFamily
    let labels: [(name: String, value: String)]
    /// The label a `.counts` value's keys or a `.text` value go under; nil for a plain figure.
    let keyLabel: String?
}
