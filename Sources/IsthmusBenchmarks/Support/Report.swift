import Foundation
import Synchronization

/// The figures of a benchmark run: printed as a table, or as one JSON object (`--json`).
final class Report: Sendable {
    struct Figure: Sendable {
        var section: String
        var key: String
        var label: String
        var value: Double
        var unit: String
        var column: Column = .sqlite
    }

    /// Which store the bridge ran on: the bridge-only and scale parts run once on each, shown side by side.
    enum Column: Sendable {
        case sqlite
        case postgres
    }

    struct Target: Sendable {
        var name: String
        var met: Bool
        var detail: String
    }

    private struct State {
        var figures: [Figure] = []
        var targets: [Target] = []
        var notes: [String] = []
    }

    private let state = Mutex(State())

    /// Records one figure (`key` is its JSON name inside `section`; `column`: the store the bridge ran on).
    func add(_ section: String, _ key: String, _ label: String, _ value: Double, _ unit: String, column: Column = .sqlite) {
        state.withLock {
            $0.figures.append(Figure(section: section, key: key, label: label, value: value, unit: unit, column: column))
        }
        progress("\(section)\(column == .postgres ? " (PostgreSQL)" : "") · \(label): \(Self.format(value)) \(unit)")
    }

    /// Records whether a target was met.
    func target(_ name: String, met: Bool, _ detail: String) {
        state.withLock { $0.targets.append(Target(name: name, met: met, detail: detail)) }
    }

    /// A remark printed under the table (what bounds a figure, what was skipped).
    func note(_ text: String) {
        state.withLock { $0.notes.append(text) }
        progress("note: \(text)")
    }

    func value(_ section: String, _ key: String, column: Column = .sqlite) -> Double? {
        state.withLock { $0.figures.last { $0.section == section && $0.key == key && $0.column == column }?.value }
    }

    // MARK: Output

    func table(machine: [String: String]) -> String {
        let (figures, targets, notes) = state.withLock { ($0.figures, $0.targets, $0.notes) }
        var out = "Isthmus benchmarks — \(machine["cpu"] ?? "?"), \(machine["cores"] ?? "?") cores, \(machine["memory_gib"] ?? "?") GiB, "
            + "load \(machine["load_before"] ?? "?") before the run\n"
        let width = max(40, figures.map(\.label.count).max() ?? 40)
        // A section measured on both stores gets a second column: each SQLite figure's PostgreSQL twin (same key).
        let postgres = Dictionary(figures.filter { $0.column == .postgres }.map { ("\($0.section)\u{0}\($0.key)", $0.value) },
                                  uniquingKeysWith: { $1 })
        let twoColumns = Set(figures.filter { $0.column == .postgres }.map(\.section))
        var section = ""
        for figure in figures where figure.column == .sqlite {
            if figure.section != section {
                section = figure.section
                out += "\n\(section)\n"
                if twoColumns.contains(section) {
                    out += "  " + "".padding(toLength: width, withPad: " ", startingAt: 0) + "  " + "SQLite".leftPadded(to: 10)
                        + "   " + "PostgreSQL".leftPadded(to: 10) + "\n"
                }
            }
            var line = "  " + figure.label.padding(toLength: width, withPad: " ", startingAt: 0) + "  "
                + Self.format(figure.value).leftPadded(to: 10)
            if twoColumns.contains(section) {
                line += "   " + (postgres["\(figure.section)\u{0}\(figure.key)"].map(Self.format) ?? "-").leftPadded(to: 10)
            }
            out += line + " " + figure.unit + "\n"
        }
        if !targets.isEmpty {
            out += "\nTargets\n"
            for target in targets {
                out += "  [\(target.met ? "met " : "MISS")] \(target.name): \(target.detail)\n"
            }
        }
        if !notes.isEmpty {
            out += "\nNotes\n"
            for note in notes { out += "  - \(note)\n" }
        }
        return out
    }

    func json(machine: [String: String]) -> String {
        let (figures, targets, notes) = state.withLock { ($0.figures, $0.targets, $0.notes) }
        var sections: [String: [String: Any]] = [:]
        var order: [String] = []
        for figure in figures {
            // The PostgreSQL run of a part goes in a section of its own: `bridge_postgres` beside `bridge`.
            let name = Self.jsonKey(figure.section) + (figure.column == .postgres ? "_postgres" : "")
            if sections[name] == nil { order.append(name) }
            sections[name, default: [:]][figure.key] = figure.value.isFinite ? figure.value : NSNull()
        }
        var object: [String: Any] = ["machine": machine]
        for name in order { object[name] = sections[name] }
        object["targets"] = targets.map { ["name": $0.name, "met": $0.met, "detail": $0.detail] }
        object["notes"] = notes
        let data = (try? JSONSerialization.data(withJSONObject: object, options: [.prettyPrinted, .sortedKeys])) ?? Data()
        return String(decoding: data, as: UTF8.self) + "\n"
    }

    /// The JSON key of each part's section (the table shows the titles).
    static let sectionKeys = [
        BridgeOnlyBenchmark.section: "bridge", ScaleBenchmark.section: "scale", FanInBenchmark.section: "fanin",
        RealServerBenchmark.section: "real", MatrixClientBenchmark.section: "client",
    ]

    private static func jsonKey(_ section: String) -> String {
        sectionKeys[section] ?? String(section.lowercased().map { $0.isLetter || $0.isNumber ? $0 : "_" })
            .split(separator: "_", omittingEmptySubsequences: true).joined(separator: "_")
    }

    static func format(_ value: Double) -> String {
        guard value.isFinite else { return "n/a" }
        let magnitude = abs(value)
        if magnitude >= 100 { return String(Int(value.rounded())) }
        if magnitude >= 10 { return String(format: "%.1f", value) }
        if magnitude >= 1 { return String(format: "%.2f", value) }
        return String(format: "%.3f", value)
    }
}

extension String {
    fileprivate func leftPadded(to width: Int) -> String {
        count >= width ? self : String(repeating: " ", count: width - count) + self
    }
}
