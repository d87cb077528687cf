import Synchronization

/// The metric families of one process, rendered for a scrape in the order they were registered. Thread-safe.
///
/// Families hand out one child per combination of label values (``CounterFamily/labels(_:)``); callers may keep a
/// child and update it without any lookup. Values live in atomics or small mutexes that are held only for the
/// update or the read — never across an `await`. Collectors (``collect(_:)``) add families computed at scrape time
/// (the process's own figures from /proc, gauges read from elsewhere).
public final class MetricsRegistry: Sendable {
    private enum Entry: Sendable {
        case counter(CounterFamily)
        case gauge(GaugeFamily)
        case histogram(HistogramFamily)
        case collector(@Sendable () -> [PrometheusExposition.Family])
    }

    private let entries = Mutex<[Entry]>([])

    public init() {}

    /// Registers a counter family (`name` should end in `_total`).
    public func counter(_ name: String, help: String, labels: [String] = []) -> CounterFamily {
        let family = CounterFamily(name: name, help: help, labelNames: labels)
        entries.withLock { $0.append(.counter(family)) }
        return family
    }

    /// Registers a gauge family.
    public func gauge(_ name: String, help: String, labels: [String] = []) -> GaugeFamily {
        let family = GaugeFamily(name: name, help: help, labelNames: labels)
        entries.withLock { $0.append(.gauge(family)) }
        return family
    }

    /// Registers a histogram family with these bucket upper bounds (ascending; `+Inf` is implied).
    public func histogram(_ name: String, help: String, labels: [String] = [], buckets: [Double]) -> HistogramFamily {
        let family = HistogramFamily(name: name, help: help, labelNames: labels, upperBounds: buckets.sorted())
        entries.withLock { $0.append(.histogram(family)) }
        return family
    }

    /// Adds families computed at each scrape by `body` (it runs on the scraping thread; keep it quick).
    public func collect(_ body: @escaping @Sendable () -> [PrometheusExposition.Family]) {
        entries.withLock { $0.append(.collector(body)) }
    }

    /// Every family's current values.
    public func families() -> [PrometheusExposition.Family] {
        let entries = self.entries.withLock { $0 }
        return entries.flatMap { entry -> [PrometheusExposition.Family] in
            switch entry {
            case .counter(let family): [family.snapshot()]
            case .gauge(let family): [family.snapshot()]
            case .histogram(let family): [family.snapshot()]
            case .collector(let body): body()
            }
        }
    }

    /// The scrape answer's text.
    public func exposition() -> String { PrometheusExposition.render(families()) }
}

/// Children by label values, created on first use; rendered sorted by their label values.
final class Children<Child: Sendable>: Sendable {
    let labelNames: [String]
    private let children = Mutex<[[String]: Child]>([:])
    private let make: @Sendable () -> Child

    init(labelNames: [String], make: @escaping @Sendable () -> Child) {
        self.labelNames = labelNames
        self.make = make
        if labelNames.isEmpty { _ = child([]) }   // a family without labels always shows its one sample
    }

    func child(_ values: [String]) -> Child {
        precondition(values.count == labelNames.count, "expected label values for \(labelNames)")
        return children.withLock { children in
            if let child = children[values] { return child }
            let child = make()
            children[values] = child
            return child
        }
    }

    func all() -> [(labels: [(name: String, value: String)], child: Child)] {
        let pairs = children.withLock { $0.map { ($0.key, $0.value) } }
        return pairs.sorted { $0.0.lexicographicallyPrecedes($1.0) }.map { values, child in
            (Array(zip(labelNames, values)).map { (name: $0.0, value: $0.1) }, child)
        }
    }
}

/// A monotonically increasing count. Lock-free.
public final class Counter: Sendable {
    private let count = Atomic<UInt64>(0)

    public func increment(by amount: UInt64 = 1) {
        count.wrappingAdd(amount, ordering: .relaxed)
    }

    public var value: UInt64 { count.load(ordering: .relaxed) }
}

/// A value that goes up and down.
public final class Gauge: Sendable {
    private let current = Mutex<Double>(0)

    public func set(_ value: Double) { current.withLock { $0 = value } }
    public func add(_ amount: Double) { current.withLock { $0 += amount } }
    public var value: Double { current.withLock { $0 } }
}

/// Observations counted into buckets, with their sum.
public final class Histogram: Sendable {
    private let state: Mutex<PrometheusExposition.HistogramValue>

    init(upperBounds: [Double]) {
        state = Mutex(PrometheusExposition.HistogramValue(upperBounds: upperBounds,
                                                          bucketCounts: Array(repeating: 0, count: upperBounds.count + 1), sum: 0))
    }

    public func observe(_ value: Double) {
        state.withLock { state in
            let index = state.upperBounds.firstIndex { value <= $0 } ?? state.upperBounds.count
            state.bucketCounts[index] += 1
            state.sum += value
        }
    }

    /// Observes a duration in seconds.
    public func observe(_ duration: Duration) {
        let (seconds, attoseconds) = duration.components
        observe(Double(seconds) + Double(attoseconds) / 1e18)
    }

    public var value: PrometheusExposition.HistogramValue { state.withLock { $0 } }
}

/// A counter per combination of label values.
public final class CounterFamily: Sendable {
    public let name: String
    public let help: String
    private let children: Children<Counter>

    init(name: String, help: String, labelNames: [String]) {
        self.name = name
        self.help = help
        children = Children(labelNames: labelNames) { Counter() }
    }

    /// The counter for these label values (in the family's label order), created at 0 on first use.
    public func labels(_ values: String...) -> Counter { children.child(values) }

    func snapshot() -> PrometheusExposition.Family {
        .init(name: name, help: help, kind: .counter,
              samples: children.all().map { .init(labels: $0.labels, value: .number(Double($0.child.value))) })
    }
}

/// A gauge per combination of label values.
public final class GaugeFamily: Sendable {
    public let name: String
    public let help: String
    private let children: Children<Gauge>

    init(name: String, help: String, labelNames: [String]) {
        self.name = name
        self.help = help
        children = Children(labelNames: labelNames) { Gauge() }
    }

    /// The gauge for these label values, created at 0 on first use.
    public func labels(_ values: String...) -> Gauge { children.child(values) }

    func snapshot() -> PrometheusExposition.Family {
        .init(name: name, help: help, kind: .gauge,
              samples: children.all().map { .init(labels: $0.labels, value: .number($0.child.value)) })
    }
}

/// A histogram per combination of label values, all with the same buckets.
public final class HistogramFamily: Sendable {
    public let name: String
    public let help: String
    private let children: Children<Histogram>

    init(name: String, help: String, labelNames: [String], upperBounds: [Double]) {
        self.name = name
        self.help = help
        children = Children(labelNames: labelNames) { Histogram(upperBounds: upperBounds) }
    }

    /// The histogram for these label values, created empty on first use.
    public func labels(_ values: String...) -> Histogram { children.child(values) }

    func snapshot() -> PrometheusExposition.Family {
        .init(name: name, help: help, kind: .histogram,
              samples: children.all().map { .init(labels: $0.labels, value: .histogram($0.child.value)) })
    }
}
