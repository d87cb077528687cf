@testable import IsthmusStore
import Testing

/// `?` → `$n` translation, pure: only placeholders in plain SQL text are numbered.
@Suite struct PostgresPlaceholdersTests {
    private func translate(_ sql: String) -> PostgresPlaceholders { PostgresPlaceholders(translating: sql) }

    @Test func numbersPlaceholdersInOrder() {
        #expect(translate("INSERT INTO t VALUES (?, ?, ?)") == expected("INSERT INTO t VALUES ($1, $2, $3)", 3))
        #expect(translate("SELECT 1") == expected("SELECT 1", 0))
        #expect(translate("?") == expected("$1", 1))
        #expect(translate("a=?AND b=?") == expected("a=$1AND b=$2", 2))
    }

    @Test func leavesQuotedTextAlone() {
        #expect(translate("SELECT '?', ?") == expected("SELECT '?', $1", 1))
        #expect(translate("SELECT 'it''s ?', ?") == expected("SELECT 'it''s ?', $1", 1))
        #expect(translate(#"SELECT E'\'?', ?"#) == expected(#"SELECT E'\'?', $1"#, 1))
        // Without the E prefix a backslash is an ordinary character (standard_conforming_strings).
        #expect(translate(#"SELECT '\', ?"#) == expected(#"SELECT '\', $1"#, 1))
        #expect(translate(#"SELECT "?" FROM "a""?" WHERE x = ?"#) == expected(#"SELECT "?" FROM "a""?" WHERE x = $1"#, 1))
    }

    @Test func leavesCommentsAlone() {
        #expect(translate("SELECT ? -- why?\n, ?") == expected("SELECT $1 -- why?\n, $2", 2))
        #expect(translate("SELECT /* a? /* b? */ c? */ ?") == expected("SELECT /* a? /* b? */ c? */ $1", 1))
        #expect(translate("SELECT ? -- trailing?") == expected("SELECT $1 -- trailing?", 1))
    }

    @Test func leavesDollarQuotesAlone() {
        #expect(translate("SELECT $$?$$, ?") == expected("SELECT $$?$$, $1", 1))
        #expect(translate("SELECT $fn$ a $$ ? $fn$, ?") == expected("SELECT $fn$ a $$ ? $fn$, $1", 1))
        // `$1` and identifiers with `$` open no dollar quote.
        #expect(translate("SELECT $1, a$b, ?") == expected("SELECT $1, a$b, $1", 1))
    }

    @Test func unterminatedQuotesSwallowTheRest() {
        #expect(translate("SELECT '?, ?") == expected("SELECT '?, ?", 0))
        #expect(translate("SELECT /* ?") == expected("SELECT /* ?", 0))
    }

    @Test func keepsMultibyteText() {
        #expect(translate("SELECT '日本?' || ? -- ü?") == expected("SELECT '日本?' || $1 -- ü?", 1))
    }

    private func expected(_ sql: String, _ count: Int) -> PostgresPlaceholders {
        PostgresPlaceholders(sql: sql, count: count)
    }
}
