/// The closest known name to a mistyped one, for the sentence that refuses it.
extension ConfigLoader {
    /// The one of `known` nearest to `unknown`, when it is within a small edit distance (at
    /// most 2 edits and fewer than half of `unknown`'s characters; a swap of two neighbours
    /// counts as one edit, the optimal string alignment distance, so `widht` finds `width`);
    /// nil when none is that near. Case is ignored; ties go to the first of `known`.
    static func closest(to unknown: String, among known: [String]) -> String? {
        let typed = Array(unknown.lowercased())
        var best: (name: String, distance: Int)?
        for name in known {
            let distance = editDistance(typed, Array(name.lowercased()))
            if distance <= 2, distance * 2 < typed.count, distance < (best?.distance ?? .max) {
                best = (name, distance)
            }
        }
        return best?.name
    }

    /// `" (did you mean X?)"` with the one of `known` closest to `unknown` (`closest`), each
    /// name written by `spelling` (quoted, as a flag...), or `""` when none is near.
    static func suggestion(for unknown: String, among known: [String],
                           spelling: (String) -> String = { "'\($0)'" }) -> String {
        closest(to: unknown, among: known).map { " (did you mean \(spelling($0))?)" } ?? ""
    }

    /// Edits (insert, delete, replace, swap of two neighbours) that turn `a` into `b`.
    static func editDistance(_ a: [Character], _ b: [Character]) -> Int {
        if a.isEmpty || b.isEmpty { return max(a.count, b.count) }
        var before = [Int](repeating: 0, count: b.count + 1)   // row i - 2
        var previous = Array(0...b.count)                      // row i - 1
        for i in 1...a.count {
            var current = [Int](repeating: 0, count: b.count + 1)
            current[0] = i
            for j in 1...b.count {
                let cost = a[i - 1] == b[j - 1] ? 0 : 1
                current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + cost)
                if i > 1, j > 1, a[i - 1] == b[j - 2], a[i - 2] == b[j - 1] {
                    current[j] = min(current[j], before[j - 2] + 1)
                }
            }
            before = previous
            previous = current
        }
        return previous[b.count]
    }

    /// The refusal of `--NAME` (`name` with `_`), which is no option: the nearest flag suggested
    /// (`suggestion`, among the options and the `--no-` forms of the true/false ones); for
    /// `--no-KEY` of an option that is not true/false, that option, which takes a value instead.
    static func unknownOption(_ name: String) -> ConfigError {
        let flag = { (key: String) in "--" + key.replacingOccurrences(of: "_", with: "-") }
        let hint: String
        if name.hasPrefix("no_"), let option = ConfigOption.all.first(where: { $0.key == String(name.dropFirst(3)) }) {
            hint = " (\(flag(option.key)) is not true/false: give it a value, \(flag(option.key)) VALUE)"
        } else {
            let negations = ConfigOption.all.filter { $0.kind == .boolean || $0.kind == .choice }.map { "no_" + $0.key }
            hint = suggestion(for: name, among: ConfigOption.all.map(\.key) + negations, spelling: flag)
        }
        return ConfigError("unknown option \(flag(name))\(hint); see --help")
    }
}
