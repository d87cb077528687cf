import IsthmusMetrics
import IsthmusStore

extension BridgeMetrics {
    /// Adds the store's counters (``StoreActivity``), read at each scrape: `isthmus_store_calls_total`,
    /// `isthmus_store_thread_wakeups_total`, `isthmus_store_statements_total`, `isthmus_store_commits_total`,
    /// `isthmus_store_round_trips_total`.
    /// Divided by `isthmus_messages_total` they say what a bridged message costs the store (`scripts/bench` prints it).
    public func observe(store activity: StoreActivity) {
        registry.collect {
            let now = activity.snapshot()
            func family(_ name: String, _ help: String, _ value: Int) -> PrometheusExposition.Family {
                .init(name: name, help: help, kind: .counter, samples: [.init(value: .number(Double(value)))])
            }
            return [
                family("isthmus_store_calls_total", "Calls run on the store's thread (each a hop there from the caller's thread).", now.calls),
                family("isthmus_store_thread_wakeups_total", "Times the store's thread was woken from sleep by a call.", now.wakeups),
                family("isthmus_store_statements_total", "SQL statements sent to the database (transactions' BEGIN and COMMIT not included).",
                       now.statements),
                family("isthmus_store_commits_total", "Store transactions committed.", now.commits),
                family("isthmus_store_round_trips_total",
                       "PostgreSQL exchanges the store waited for (a statement, BEGIN, COMMIT, or a pipelined transaction); 0 on SQLite.",
                       now.roundTrips),
            ]
        }
    }
}
