import Foundation
import IsthmusCommon
import IsthmusConfig
import TestSupport
import Testing

@Suite struct ConfigLoadTests {
    @Test func theExampleFileLoads() throws {
        let config = try Config.load(path: ConfigFixture.examplePath, environment: [:])
        #expect(config.warnings.isEmpty)
        #expect(config.matrix.homeserverURL == URL(string: "http://127.0.0.1:8008"))
        #expect(config.matrix.serverName == "localhost")
        #expect(config.appservice.listen == HostPort(host: "127.0.0.1", port: 29331))
        #expect(config.appservice.asToken == "change-me-as-token")
        #expect(config.xmpp.componentDomain == "bridge.localhost")
        #expect(config.database.path == ConfigFixture.repositoryRoot.appendingPathComponent("config/isthmus.sqlite").path)
    }

    /// The example's commented PostgreSQL alternative, switched on in place of `path:`, is a valid config (the `&` of
    /// its second URL parameter included).
    @Test func theExamplesPostgreSQLAlternativeLoads() throws {
        let example = try String(contentsOfFile: ConfigFixture.examplePath, encoding: .utf8)
        let switched = example.replacingOccurrences(of: "\n  path: isthmus.sqlite\n", with: "\n")
            .replacingOccurrences(of: "\n  # url: ", with: "\n  url: ")
            .replacingOccurrences(of: "\n  # pool_size: 2\n", with: "\n  pool_size: 2\n")
        let directory = try TemporaryDirectory()
        let config = try Config.load(path: try directory.write(switched, to: "isthmus.yaml"), environment: [:])
        #expect(config.warnings.isEmpty)
        let url = try #require(PostgresURL(
            "postgresql://isthmus:secret@db.example.org:5432/isthmus?sslmode=verify-full&sslrootcert=/etc/isthmus/db-ca.pem"))
        #expect(config.database.location == .postgres(url: url, poolSize: 2))
    }

    @Test func theExampleFileDocumentsEveryKeyOfTheFullFixture() throws {
        let example = try String(contentsOfFile: ConfigFixture.examplePath, encoding: .utf8)
        for line in ConfigFixture.full.split(separator: "\n") {
            let key = line.split(separator: ":", maxSplits: 1)[0]
            #expect(example.contains("\n\(key):"), "example lacks \(key)")
        }
    }

    @Test func resolvesRelativePathsAgainstTheFilesFolder() throws {
        let directory = try TemporaryDirectory()
        let path = try directory.write(ConfigFixture.full, to: "etc/isthmus.yaml")
        let config = try Config.load(path: path, environment: [:])
        #expect(config.database.path == directory.url.appendingPathComponent("etc/data/bridge.sqlite").standardizedFileURL.path)
    }

    @Test func errorsNameTheFile() throws {
        let directory = try TemporaryDirectory()
        let path = try directory.write(ConfigFixture.minimal + "  server_port: abc\n", to: "isthmus.yaml")
        do {
            _ = try Config.load(path: path, environment: [:])
            Issue.record("loaded a file with a wrong type")
        } catch {
            #expect(error.description == "config error in \(path) at line 12, column 16: 'xmpp.server_port': expected an integer")
            #expect(error.file == path)
        }
    }

    @Test func warningsNameTheFile() throws {
        let directory = try TemporaryDirectory()
        let path = try directory.write(ConfigFixture.minimal + "loging:\n  level: debug\n", to: "isthmus.yaml")
        let config = try Config.load(path: path, environment: [:])
        #expect(config.warnings.map(\.description) == [
            "config warning in \(path) at line 12, column 1: unknown key 'loging' (ignored)",
        ])
    }

    @Test func unknownFile() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("absent.yaml")
        #expect(throws: ConfigError(.unreadable(path: path, reason: "no such file"))) {
            try Config.load(path: path, environment: [:])
        }
        #expect(ConfigError(.unreadable(path: path, reason: "no such file")).description
            == "config error: cannot read \(path): no such file")
    }

    @Test func folderInsteadOfFile() throws {
        let directory = try TemporaryDirectory()
        #expect(throws: ConfigError(.unreadable(path: directory.path, reason: "permission denied or not a file"))) {
            try Config.load(path: directory.path, environment: [:])
        }
    }

    @Test func notUTF8() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("latin1.yaml")
        try Data([0x6d, 0x3a, 0x20, 0xe9, 0x0a]).write(to: URL(fileURLWithPath: path))
        #expect(throws: ConfigError(.unreadable(path: path, reason: "not UTF-8 text"))) {
            try Config.load(path: path, environment: [:])
        }
    }
}
