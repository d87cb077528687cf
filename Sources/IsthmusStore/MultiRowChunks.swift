/// How a statement over many rows is split (an inbox transaction's events, a burst's receipts): chunks of 64, 32, 16,
/// 8, 4, 2 and 1 rows, the largest that fits first. Each chunk is one statement (a round trip on PostgreSQL), and a
/// connection caches at most seven forms of it, one per size; a run of up to 127 rows takes at most seven statements.
enum MultiRowChunks {
    static let sizes = [64, 32, 16, 8, 4, 2, 1]

    /// `count` placeholders for an `IN (…)` list: `?, ?, ?`.
    static func placeholders(_ count: Int) -> String {
        Array(repeating: "?", count: count).joined(separator: ", ")
    }

    /// `rows` cut into chunks of those sizes, in order.
    static func split<Row>(_ rows: [Row]) -> [ArraySlice<Row>] {
        var chunks: [ArraySlice<Row>] = []
        var rest = rows[...]
        while !rest.isEmpty {
            let size = sizes.first { $0 <= rest.count }!
            chunks.append(rest.prefix(size))
            rest = rest.dropFirst(size)
        }
        return chunks
    }
}
