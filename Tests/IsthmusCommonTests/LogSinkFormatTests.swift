import Foundation
import IsthmusCommon
import Synchronization
import Testing

@Suite struct LogSinkFormatTests {
    /// 2025-11-29T12:00:00.123Z
    let date = Date(timeIntervalSince1970: 1_764_417_600.123)

    @Test func formatsTimestampLevelLabelAndMessage() {
        let record = LogRecord(date: date, level: .info, label: "xmpp.component", message: "Connected")
        #expect(LogSink.format(record) == "2025-11-29T12:00:00.123Z info xmpp.component: Connected")
    }

    @Test func formatsMillisecondsWithoutLosingOne() {
        // Regression: the fraction was computed by subtracting Doubles and truncated (….123 printed as ….122).
        let record = LogRecord(date: Date(timeIntervalSince1970: 0.001), level: .debug, label: "l", message: "m")
        #expect(LogSink.format(record) == "1970-01-01T00:00:00.001Z debug l: m")
        let late = LogRecord(date: Date(timeIntervalSince1970: 4_102_444_799.999), level: .error, label: "l", message: "m")
        #expect(LogSink.format(late) == "2099-12-31T23:59:59.999Z error l: m")
    }

    @Test func sortsMetadataByKey() {
        let record = LogRecord(date: date, level: .warning, label: "bridge", message: "Dropped",
                               metadata: ["xmpp.stanza.id": "s1", "matrix.room.id": "!r", "a": "1"])
        #expect(LogSink.format(record)
            == "2025-11-29T12:00:00.123Z warning bridge: Dropped a=1 matrix.room.id=!r xmpp.stanza.id=s1")
    }

    @Test func quotesValuesThatWouldBreakTheLine() {
        let record = LogRecord(date: date, level: .error, label: "t", message: "M", metadata: [
            "space": "two words", "quote": "say \"hi\"", "newline": "line1\nline2", "equals": "a=b",
            "empty": "", "tab": "a\tb", "plain": "C:\\path",
        ])
        #expect(LogSink.format(record) == """
            2025-11-29T12:00:00.123Z error t: M empty="" equals="a=b" newline="line1\\nline2" plain=C:\\path \
            quote="say \\"hi\\"" space="two words" tab="a\tb"
            """)
        #expect(!LogSink.format(record).contains("\n"))
    }
}
