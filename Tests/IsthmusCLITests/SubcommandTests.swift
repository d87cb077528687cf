import Foundation
import IsthmusConfig
import TestSupport
import Testing

@Suite struct SubcommandTests {
    let directory: TemporaryDirectory
    let configPath: String
    let registration: String

    init() throws {
        directory = try TemporaryDirectory()
        configPath = try directory.write(ConfigFixture.minimal, to: "isthmus.yaml")
        registration = try Config.load(path: configPath, environment: [:]).registrationYAML()
    }

    @Test(arguments: [
        ["-c", "CONFIG", "registration"],
        ["registration", "-c", "CONFIG"],
        ["--config", "CONFIG", "registration"],
        ["--config=CONFIG", "registration"],
        ["registration", "--config=CONFIG"],
    ])
    func registrationWithConfigAnywhere(_ arguments: [String]) async {
        let result = await isthmus(arguments.map { $0.replacingOccurrences(of: "CONFIG", with: configPath) })
        #expect(result.status == 0)
        #expect(result.stdout == registration)
        #expect(result.stderr == "")
    }

    @Test func configFromTheEnvironment() async {
        let result = await isthmus("registration", environment: ["ISTHMUS_CONFIG": configPath])
        #expect(result.status == 0)
        #expect(result.stdout == registration)
    }

    @Test func optionWinsOverTheEnvironment() async {
        let result = await isthmus("check-config", "-c", configPath,
                                   environment: ["ISTHMUS_CONFIG": directory.path("absent.yaml")])
        #expect(result.status == 0)
        #expect(result.stdout.hasPrefix("Config OK: \(configPath)\n"))
    }

    @Test func secretsFromTheEnvironmentReachTheRegistration() async {
        let result = await isthmus("registration", "-c", configPath, environment: ["ISTHMUS_AS_TOKEN": "from-env"])
        #expect(result.status == 0)
        #expect(result.stdout.contains("\nas_token: 'from-env'\n"))
    }

    @Test func checkConfigOK() async {
        let result = await isthmus("check-config", "--config", configPath)
        #expect(result.status == 0)
        #expect(result.stdout == "Config OK: \(configPath)\nXMPP: component bridge.localhost via 127.0.0.1:5347\n")
        #expect(result.stderr == "")
    }

    @Test(arguments: [
        ("", "(server: from SRV of example.org, else example.org:5222; tls: starttls)"),
        ("    server_host: xmpp.example.org\n", "(server: xmpp.example.org:5222; tls: starttls)"),
    ])
    func checkConfigSaysWhereTheAccountsServerIs(_ host: String, _ expected: String) async throws {
        let minimal = ConfigFixture.minimal
        let client = "xmpp:\n  mode: client\n  client:\n    jid: relay@example.org\n    password: x\n" + host
        let path = try directory.write(String(minimal[..<minimal.range(of: "xmpp:\n")!.lowerBound]) + client, to: "client.yaml")
        let result = await isthmus("check-config", "-c", path)
        #expect(result.status == 0)
        #expect(result.stdout.contains("XMPP: client mode, as relay@example.org \(expected); "), "\(result.stdout)")
    }

    @Test func checkConfigPrintsWarningsForUnknownKeys() async throws {
        let path = try directory.write(ConfigFixture.minimal + "loging:\n  level: debug\n", to: "typo.yaml")
        let result = await isthmus("check-config", "-c", path)
        #expect(result.status == 0)
        #expect(result.stdout.hasPrefix("Config OK: \(path)\n"))
        #expect(result.output.errorLines == [
            "Warning: config warning in \(path) at line 12, column 1: unknown key 'loging' (ignored)",
        ])
    }

    @Test(arguments: ["check-config", "registration"])
    func badConfigExits1WithOneLine(_ subcommand: String) async throws {
        let path = try directory.write(ConfigFixture.minimal + "  server_port: abc\n", to: "bad.yaml")
        let result = await isthmus(subcommand, "-c", path)
        #expect(result.status == 1)
        #expect(result.stdout == "")
        #expect(result.output.errorLines == [
            "Error: config error in \(path) at line 12, column 16: 'xmpp.server_port': expected an integer",
        ])
    }

    @Test func missingConfigFileExits1() async {
        let path = directory.path("absent.yaml")
        let result = await isthmus("check-config", "-c", path)
        #expect(result.status == 1)
        #expect(result.output.errorLines == ["Error: config error: cannot read \(path): no such file"])
    }

    @Test func missingSecretNamesTheVariable() async throws {
        let path = try directory.write(
            ConfigFixture.minimal.replacingOccurrences(of: "  hs_token: hs-secret\n", with: ""), to: "nosecret.yaml")
        let result = await isthmus("registration", "-c", path)
        #expect(result.status == 1)
        #expect(result.output.errorLines == [
            "Error: config error in \(path) at line 4, column 1: missing required key 'appservice.hs_token' (or set ISTHMUS_HS_TOKEN)",
        ])
    }

    @Test func logLevelIsAccepted() async {
        let result = await isthmus("--log-level", "debug", "check-config", "-c", configPath)
        #expect(result.status == 0)
        #expect(result.stdout.hasPrefix("Config OK: \(configPath)\n"))
    }
}
