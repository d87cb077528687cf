import Foundation
import IsthmusCommon
import Testing

/// JSON lines, per-module levels and log files that are reopened after rotation.
struct LogOutputTests {
    let date = Date(timeIntervalSince1970: 1_764_417_600.123456)   // 2025-11-29T12:00:00.123456Z

    @Test func jsonLineHasTimeLevelLoggerMessageAndSortedMetadata() {
        let record = LogRecord(date: date, level: .warning, label: "xmpp.component", message: "Link \"down\"",
                               metadata: ["xmpp.server": "127.0.0.1:5347", "error": "a\\b\nc\u{1}", "message": "clash"])
        #expect(LogSink.format(record, as: .json) == #"""
            {"time":"2025-11-29T12:00:00.123456Z","level":"warning","logger":"xmpp.component","message":"Link \"down\"","error":"a\\b\nc\u0001","metadata.message":"clash","xmpp.server":"127.0.0.1:5347"}
            """#)
    }

    @Test func jsonLineParsesAsJSON() throws {
        let record = LogRecord(date: date, level: .info, label: "bridge", message: "tab\there ünï 😀", metadata: ["k": "\r\u{7f}"])
        let object = try JSONSerialization.jsonObject(with: Data(LogSink.format(record, as: .json).utf8)) as? [String: String]
        #expect(object == ["time": "2025-11-29T12:00:00.123456Z", "level": "info", "logger": "bridge",
                           "message": "tab\there ünï 😀", "k": "\r\u{7f}"])
    }

    @Test func levelsMatchTheLabelAndItsDottedPrefixesLongestFirst() {
        let levels = LogLevels(default: .info, modules: ["xmpp": .warning, "xmpp.component": .debug])
        #expect(levels.level(for: "xmpp.component") == .debug)
        #expect(levels.level(for: "xmpp.component.stream") == .debug)
        #expect(levels.level(for: "xmpp.link") == .warning)
        #expect(levels.level(for: "xmpp") == .warning)
        #expect(levels.level(for: "xmppish") == .info)
        #expect(levels.level(for: "matrix.client") == .info)
    }

    @Test func aSinkLevelTableDecidesForEveryLoggerAndCanChange() {
        let sink = LogSink.memory()
        let component = Logger(label: "xmpp.component", level: .info, sink: sink)
        let client = Logger(label: "matrix.client", level: .info, sink: sink)
        sink.configure(format: .text, levels: LogLevels(default: .warning, modules: ["xmpp": .debug]))
        component.debug("shown")
        client.info("hidden")
        client.warning("shown too")
        sink.configure(levels: LogLevels(default: .info))
        component.debug("hidden now")
        client.info("shown now")
        #expect(sink.records.map(\.message) == ["shown", "shown too", "shown now"])
    }

    @Test func aFileSinkAppendsAndReopensAfterTheFileWasMoved() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("log-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let path = folder.appendingPathComponent("isthmus.log").path
        let sink = try LogSink.file(path)
        sink.configure(format: .json, levels: nil)
        let logger = Logger(label: "t", sink: sink)
        logger.info("one")
        try FileManager.default.moveItem(atPath: path, toPath: path + ".1")
        logger.info("two")            // still into the moved file
        try sink.reopen()
        logger.info("three")          // into a new file at the path
        let rotated = try String(contentsOfFile: path + ".1", encoding: .utf8).split(separator: "\n")
        let current = try String(contentsOfFile: path, encoding: .utf8).split(separator: "\n")
        #expect(rotated.count == 2 && rotated.allSatisfy { $0.contains("\"logger\":\"t\"") })
        #expect(current.count == 1 && current[0].contains("\"message\":\"three\""))
    }

    @Test func aFileThatCannotBeOpenedIsAnError() {
        #expect(throws: LogFileError.self) { try LogSink.file("/nonexistent-folder/isthmus.log") }
    }
}
