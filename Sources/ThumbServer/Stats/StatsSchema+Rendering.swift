import Foundation

/// Renders a list of `StatsEntry` against one snapshot: as the `/stats` JSON object, keys in the
/// entries' order; and as Prometheus text format 0.0.4, one `# HELP`/`# TYPE` block per family in
/// the order the entries first name it, every sample of a family in that block.
enum StatsSchema {
    /// The JSON object of `entries` (RFC 8259), with a final newline.
    static func json<Snapshot>(_ entries: [StatsEntry<Snapshot>], _ snapshot: Snapshot) -> String {
        var out = ""
        writeObject(entries, snapshot, into: &out)
        return out + "\n"
    }

    private static func writeObject<Snapshot>(_ entries: [StatsEntry<Snapshot>], _ snapshot: Snapshot, into out: inout String) {
        out += "{"
        var first = true
        for entry in entries {
            switch entry.node {
            case .figure(nil, _, _):
                continue
            case .figure(let key?, _, let value):
                out += (first ? "" : ",") + JSON.quote(key) + ":"
                write(value(snapshot), into: &out)
            case .object(let key, let present, let children):
                out += (first ? "" : ",") + JSON.quote(key) + ":"
                if present(snapshot) { writeObject(children, snapshot, into: &out) } else { out += "null" }
            }
            first = false
        }
        out += "}"
    }

    private static func write(_ value: StatsValue, into out: inout String) {
        switch value {
        case .integer(let n): out += String(n)
        case .number(let x, let places): out += String(format: "%.\(places)f", x)
        case .flag(let b): out += b ? "true" : "false"
        case .text(let text): out += JSON.quote(text)
        case .labels(let labels):
            out += "{" + labels.map { JSON.quote($0.name) + ":" + JSON.quote($0.value) }.joined(separator: ",") + "}"
        case .absent: out += "null"
        case .counts(let counts):
            out += "{" + counts.map { JSON.quote($0.key) + ":" + String($0.count) }.joined(separator: ",") + "}"
        case .histogram:
            preconditionFailure("a histogram is a /metrics figure: declare it metricsOnly")
        case .objects(let objects):
            out += "["
            for (i, object) in objects.enumerated() {
                out += (i == 0 ? "{" : ",{")
                for (j, field) in object.enumerated() {
                    out += (j == 0 ? "" : ",") + JSON.quote(field.key) + ":"
                    write(field.value, into: &out)
                }
                out += "}"
            }
            out += "]"
        }
    }

    /// The Prometheus text (format 0.0.4) of `entries`' `/metrics` figures.
    static func prometheus<Snapshot>(_ entries: [StatsEntry<Snapshot>], _ snapshot: Snapshot) -> String {
        var families: [(family: MetricFamily, samples: String, written: Bool)] = []
        var index: [String: Int] = [:]
        func collect(_ entries: [StatsEntry<Snapshot>]) {
            for entry in entries {
                switch entry.node {
                case .figure(_, nil, _):
                    continue
                case .figure(_, let sample?, let value):
                    let name = sample.family.name
                    let i = index[name] ?? families.count
                    if i == families.count {
                        index[name] = i
                        families.append((sample.family, "", false))
                    }
                    let v = value(snapshot)
                    if case .absent = v { continue }
                    families[i].written = true
                    write(v, as: sample, into: &families[i].samples)
                case .object(_, let present, let children):
                    if present(snapshot) { collect(children) }
                }
            }
        }
        collect(entries)
        var out = ""
        for block in families where block.written {
            out += "# HELP \(block.family.name) \(block.family.help)\n# TYPE \(block.family.name) \(block.family.kind.typeName)\n"
            out += block.samples
        }
        return out
    }

    private static func write(_ value: StatsValue, as sample: MetricSample, into out: inout String) {
        let name = sample.family.name
        func line(_ number: String, suffix: String = "", extra: [(name: String, value: String)] = []) {
            let labels = sample.labels + extra
            out += name + suffix
            if !labels.isEmpty {
                out += "{" + labels.map { "\($0.name)=\"\(labelEscaped($0.value))\"" }.joined(separator: ",") + "}"
            }
            out += " " + number + "\n"
        }
        switch value {
        case .integer(let n): line(String(n))
        case .number(let x, _): line("\(x)")
        case .flag(let b): line(b ? "1" : "0")
        case .text(let text): line("1", extra: [(sample.keyLabel ?? "value", text)])
        case .labels(let labels): line("1", extra: labels)
        case .absent: break
        case .counts(let counts):
            for (key, count) in counts { line(String(count), extra: [(sample.keyLabel ?? "key", key)]) }
        case .histogram(let bounds, let buckets, let sum, let count):
            for (bound, bucket) in zip(bounds, buckets) { line(String(bucket), suffix: "_bucket", extra: [("le", "\(bound)")]) }
            line(String(count), suffix: "_bucket", extra: [("le", "+Inf")])
            line("\(sum)", suffix: "_sum")
            line(String(count), suffix: "_count")
        case .objects:
            preconditionFailure("a list of objects is a /stats figure: declare it statsOnly")
        }
    }

    /// A label value escaped as text format 0.0.4 requires: backslash, double quote, line feed.
    static func labelEscaped(_ value: String) -> String {
        var out = ""
        for c in value.unicodeScalars {
            switch c {
            case "\\": out += "\\\\"
            case "\"": out += "\\\""
            case "\n": out += "\\n"
            default: out.unicodeScalars.append(c)
            }
        }
        return out
    }
}
