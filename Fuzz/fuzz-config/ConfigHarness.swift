import Bridge
import FuzzSupport
import IsthmusCommon
@testable import IsthmusConfig

/// The YAML config reader on arbitrary text (an operator's file may be anything: a typo, a binary, a YAML bomb).
/// libyaml parses; ``YAMLNode`` builds the tree; ``Config/parse(_:baseDirectory:environment:)`` validates.
///
/// Properties: nothing crashes or hangs; a refusal is a ``ConfigError`` whose description names the problem; an
/// accepted config holds the invariants the rest of the bridge relies on (non-empty tokens and domains, valid ports,
/// a ghost namespace and naming the bridge can build).
@main enum Harness { static func main() { runFuzzer(fuzzConfig) } }

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzConfig(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    var input = FuzzInput(data, size)
    let text = String(decoding: input.rest(), as: UTF8.self)
    let environment = ["ISTHMUS_AS_TOKEN": "as-token", "ISTHMUS_HS_TOKEN": "hs-token", "ISTHMUS_COMPONENT_SECRET": "secret"]
    do {
        let config = try Config.parse(text, baseDirectory: "/etc/isthmus", environment: environment)
        guard !config.appservice.asToken.isEmpty, !config.appservice.hsToken.isEmpty, !config.xmpp.componentSecret.isEmpty,
              !config.xmpp.componentDomain.isEmpty, (1...65535).contains(config.appservice.listen.port),
              databaseLocationHolds(config.database.location)
        else { fuzzFailure("accepted a config that breaks an invariant: \(config)") }
        // `check-config` accepting a file that `serve` then refuses would be a lie.
        guard GhostNamespace(prefix: config.appservice.ghostPrefix, serverName: config.matrix.serverName,
                             botLocalpart: config.appservice.botLocalpart) != nil,
              BridgeNaming(componentDomain: config.xmpp.componentDomain, botNick: config.xmpp.botNick) != nil
        else { fuzzFailure("accepted a config the bridge cannot run with: \(config)") }
        for warning in config.warnings { _ = warning.description }
    } catch {
        guard !error.description.isEmpty else { fuzzFailure("a refusal without a description") }
    }
    return 0
}

/// A SQLite store is an absolute path (relative ones resolve against the config's folder); a PostgreSQL one has a pool.
private func databaseLocationHolds(_ location: DatabaseLocation) -> Bool {
    switch location {
    case .sqlite(let path): path.hasPrefix("/")
    case .postgres(_, let poolSize): poolSize >= 1
    }
}
