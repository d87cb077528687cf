/// Rewrites the store's SQLite-style `?` placeholders into PostgreSQL's numbered `$1`, `$2`, … Pure; no I/O.
///
/// Only a `?` in plain SQL text counts. Untouched: string literals (`'…'` with `''`, `E'…'` with backslash escapes),
/// quoted identifiers (`"…"`), dollar-quoted bodies (`$$…$$`, `$tag$…$tag$`), `--` line comments and nested `/* */`
/// comments. (PostgreSQL's own JSON operators `?`, `?|` and `?&` therefore cannot be written in store SQL; use the
/// function forms such as `jsonb_exists`.) The lexical rules are PostgreSQL's, "SQL Syntax → Lexical Structure" (4.1).
/// Hand-written because libpq offers no such rewrite and the scan is small.
struct PostgresPlaceholders: Equatable {
    /// The statement with `$n` placeholders.
    let sql: String
    /// How many placeholders it has.
    let count: Int

    /// An already translated statement (for tests).
    init(sql: String, count: Int) {
        self.sql = sql
        self.count = count
    }

    /// Translates `sql`.
    init(translating sql: String) {
        let bytes = Array(sql.utf8)
        var output: [UInt8] = []
        output.reserveCapacity(bytes.count + 16)
        var count = 0
        var index = 0
        while index < bytes.count {
            let byte = bytes[index]
            let previous: UInt8? = index > 0 ? bytes[index - 1] : nil
            let skipTo: Int
            switch byte {
            case UInt8(ascii: "?"):
                count += 1
                output.append(UInt8(ascii: "$"))
                output.append(contentsOf: String(count).utf8)
                index += 1
                continue
            case UInt8(ascii: "'"):
                let escapes = previous.map { ($0 == UInt8(ascii: "E") || $0 == UInt8(ascii: "e"))
                    && !(index >= 2 && Self.isIdentifierByte(bytes[index - 2])) } ?? false
                skipTo = Self.endOfQuoted(bytes, from: index, quote: byte, backslashEscapes: escapes)
            case UInt8(ascii: "\""):
                skipTo = Self.endOfQuoted(bytes, from: index, quote: byte, backslashEscapes: false)
            case UInt8(ascii: "-") where index + 1 < bytes.count && bytes[index + 1] == UInt8(ascii: "-"):
                skipTo = bytes[index...].firstIndex(of: UInt8(ascii: "\n")).map { $0 + 1 } ?? bytes.count
            case UInt8(ascii: "/") where index + 1 < bytes.count && bytes[index + 1] == UInt8(ascii: "*"):
                skipTo = Self.endOfBlockComment(bytes, from: index)
            case UInt8(ascii: "$") where !(previous.map(Self.isIdentifierByte) ?? false):
                skipTo = Self.endOfDollarQuoted(bytes, from: index) ?? index + 1
            default:
                skipTo = index + 1
            }
            output.append(contentsOf: bytes[index..<skipTo])
            index = skipTo
        }
        self.sql = String(decoding: output, as: UTF8.self)
        self.count = count
    }

    /// Letters, digits, `_`, `$` and any non-ASCII byte continue an identifier or keyword.
    private static func isIdentifierByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
             UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "_"), UInt8(ascii: "$"), 0x80...:
            return true
        default:
            return false
        }
    }

    /// The index after the closing quote of a literal opened at `start` (a doubled quote stays inside); the end of
    /// the text when it is unterminated (the server then reports the error).
    private static func endOfQuoted(_ bytes: [UInt8], from start: Int, quote: UInt8, backslashEscapes: Bool) -> Int {
        var index = start + 1
        while index < bytes.count {
            let byte = bytes[index]
            if backslashEscapes && byte == UInt8(ascii: "\\") {
                index += 2
            } else if byte == quote {
                if index + 1 < bytes.count && bytes[index + 1] == quote { index += 2 } else { return index + 1 }
            } else {
                index += 1
            }
        }
        return bytes.count
    }

    /// The index after the `*/` that closes the comment opened at `start`; PostgreSQL's block comments nest.
    private static func endOfBlockComment(_ bytes: [UInt8], from start: Int) -> Int {
        var depth = 0
        var index = start
        while index + 1 < bytes.count {
            if bytes[index] == UInt8(ascii: "/") && bytes[index + 1] == UInt8(ascii: "*") {
                depth += 1
                index += 2
            } else if bytes[index] == UInt8(ascii: "*") && bytes[index + 1] == UInt8(ascii: "/") {
                depth -= 1
                index += 2
                if depth == 0 { return index }
            } else {
                index += 1
            }
        }
        return bytes.count
    }

    /// When a dollar quote (`$$` or `$tag$`, the tag an identifier without `$`) opens at `start`: the index after its
    /// closing twin (the end of the text when unterminated). Nil when `$` starts no dollar quote (e.g. `$1`).
    private static func endOfDollarQuoted(_ bytes: [UInt8], from start: Int) -> Int? {
        var index = start + 1
        while index < bytes.count && bytes[index] != UInt8(ascii: "$") {
            let byte = bytes[index]
            let isDigit = byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9")
            guard isIdentifierByte(byte), !(index == start + 1 && isDigit) else { return nil }
            index += 1
        }
        guard index < bytes.count else { return nil }
        let tag = bytes[start...index]
        var search = index + 1
        while search + tag.count <= bytes.count {
            if bytes[search] == UInt8(ascii: "$") && bytes[search..<(search + tag.count)].elementsEqual(tag) {
                return search + tag.count
            }
            search += 1
        }
        return bytes.count
    }
}
