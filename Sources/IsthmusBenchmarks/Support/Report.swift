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

    /// Records one figure (`key` is its JSON name inside `section`).
    func add(_ section: String, _ key: String, _ label: String, _ value: Double, _ unit: String) {
        state.withLock { $0.figures.append(Figure(section: section, key: key, label: label, value: value, unit: unit)) }
        progress("\(section) · \(label): \(Self.format(value)) \(unit)")
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

    func value(_ section: String, _ key: String) -> Double? {
        state.withLock { $0.figures.last { $0.section == section && $0.key == key }?.value }
    }

    // MARK: Output

    func table(machine: [String: String]) -> String {
        let (figures, targets, notes) = state.withLock { ($0.figures, $0.targets, $0.notes) }
        var out = "Isthmus benchmarks — \(machine["cpu"] ?? "?"), \(machine["cores"] ?? "?") cores, \(machine["memory_gib"] ?? "?") GiB, "
            + "load \(machine["load_before"] ?? "?") before the run\n"
        let width = max(40, figures.map(\.label.count).max() ?? 40)
        var section = ""
        for figure in figures {
            if figure.section != section {
                section = figure.section
                out += "\n\(section)\n"
            }
            out += "  " + figure.label.padding(toLength: width, withPad: " ", startingAt: 0) + "  "
                + Self.format(figure.value).leftPadded(to: 10) + " " + figure.unit + "\n"
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
            if sections[figure.section] == nil { order.append(figure.section) }
            sections[figure.section, default: [:]][figure.key] = figure.value.isFinite ? figure.value : NSNull()
        }
        var object: [String: Any] = ["machine": machine]
        for name in order { object[Self.jsonKey(name)] = sections[name] }
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
