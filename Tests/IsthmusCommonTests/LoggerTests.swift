import Foundation
import IsthmusCommon
import Synchronization
import Testing

@Suite struct LoggerTests {
    @Test func dropsRecordsBelowItsLevel() {
        let sink = LogSink.memory()
        let logger = Logger(label: "test", level: .notice, sink: sink)
        logger.trace("trace")
        logger.debug("debug")
        logger.info("info")
        logger.notice("notice")
        logger.warning("warning")
        logger.error("error")
        logger.critical("critical")
        #expect(sink.records.map(\.message) == ["notice", "warning", "error", "critical"])
        #expect(sink.records.map(\.level) == [.notice, .warning, .error, .critical])
        #expect(sink.records.allSatisfy { $0.label == "test" })
    }

    @Test func doesNotBuildFilteredMessagesOrMetadata() {
        let built = Mutex(0)
        func expensive() -> String {
            built.withLock { $0 += 1 }
            return "expensive"
        }
        let logger = Logger(label: "test", level: .info, sink: .memory())
        logger.debug(expensive(), metadata: ["k": expensive()])
        #expect(built.withLock { $0 } == 0)
        logger.info(expensive(), metadata: ["k": expensive()])
        #expect(built.withLock { $0 } == 2)
    }

    @Test func mergesMetadataWithPerCallValuesWinning() {
        let sink = LogSink.memory()
        var logger = Logger(label: "bridge", metadata: ["matrix.room.id": "!a", "shared": "logger"], sink: sink)
        logger[metadataKey: "xmpp.muc"] = "room@muc.localhost"
        logger.with(label: "bridge.portal").with(["shared": "with"]).info("Joined", metadata: ["extra": "1"])
        logger.info("Plain", metadata: ["shared": "call"])
        let records = sink.records
        #expect(records.count == 2)
        #expect(records.first?.label == "bridge.portal")
        #expect(records.first?.metadata == [
            "matrix.room.id": "!a", "shared": "with", "xmpp.muc": "room@muc.localhost", "extra": "1",
        ])
        #expect(records.last?.label == "bridge")
        #expect(records.last?.metadata["shared"] == "call")
    }

    @Test func discardSinkKeepsNothing() {
        Logger(label: "x", level: .trace, sink: .discard).critical("gone")
        #expect(LogSink.discard.records.isEmpty)
        #expect(Logger.disabled.logLevel == .critical)
    }

    @Test func parsesLevelNames() {
        #expect(Logger.Level(name: "warning") == .warning)
        #expect(Logger.Level(name: "DEBUG") == .debug)
        #expect(Logger.Level(name: "warn") == nil)
        #expect(Logger.Level.allCases.map(\.description)
            == ["trace", "debug", "info", "notice", "warning", "error", "critical"])
        #expect(Logger.Level.trace < .critical)
    }
}
