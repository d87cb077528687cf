// swift-tools-version:6.0
import PackageDescription

/// Isthmus: an XMPP MUC ↔ Matrix room bridge (XEP-0114 component + Matrix application service).
///
/// Layout — one target per concern (docs/architecture.md draws the arrows):
/// - `C*` targets are Debian C libraries, each imported privately by one Swift file, so no C type leaves it; libxml2 by
///   two, one per parser (`XMLStream`'s push parser, `MessageFormatting`'s HTML parser).
/// - `IsthmusCommon`: logging, typed ids (JIDs, Matrix ids, the ghost namespace), digests (OpenSSL), the running-services
///   registry, shared small types.
/// - `IsthmusConfig`: YAML config decoding and validation (libyaml).
/// - `IsthmusMetrics`: the metrics registry and the Prometheus text format (no sockets).
/// - `IsthmusStore`: the store (one actor) on SQLite or PostgreSQL (libpq), migrations, one file per table.
/// - `XMLStream`: libxml2 push parser and serializer (no sockets).
/// - `XMPP`: stanza model, namespaces, socket-free state machines for the component and MUC.
/// - `Network`: POSIX TCP sockets with a poll thread, feeding async streams; TLS (OpenSSL); SRV lookups (libresolv).
/// - `XMPPComponent`: the component connection actor and MUC/MAM operations (drives `XMPP` over `Network`).
/// - `MessageFormatting`: Matrix HTML ↔ XEP-0393 styling converters (libxml2's HTML parser; pure functions).
/// - `MatrixCrypto`: Olm and Megolm (Matrix end-to-end encryption) in Swift over OpenSSL 3, unpadded base64, canonical
///   JSON and its signatures, sealed pickles (no I/O; only its `CryptoPrimitives.swift` imports OpenSSL).
/// - `Matrix`: event models, transaction decoding, appservice routing (no sockets).
/// - `MatrixAppService`: the libmicrohttpd listener and transaction handling; what a transaction does, and whether it
///   was processed already, it asks its `AppServiceHandler` (no store).
/// - `Curl`: libcurl behind `CurlEasy` and `CurlMulti`.
/// - `MatrixClient`: the client-server API over `CurlMulti` (one I/O thread, kept-alive connections, HTTP/2).
/// - `MatrixAccount`: an ordinary account's session (client mode): the session machine (refresh, soft logout, login
///   again) and the keeper that performs it, keeping the session through a `SessionVault` (no store).
/// - `Media`: signed media links, ranges, the SSRF address check, media types, streaming transfers over `CurlEasy`.
/// - `Bridge`: portals, DMs, link management, media and avatars, self-service, high availability, the bridge service.
/// - `IsthmusCLI`: the command-line interface; `isthmus` is a thin executable over it.
let package = Package(
    name: "Isthmus",
    platforms: [.macOS(.v14)],
    products: [
        .executable(name: "isthmus", targets: ["isthmus"]),
    ],
    targets: [
        // MARK: C libraries (Debian packages)
        .systemLibrary(name: "CLibXML2", path: "Sources/CLibXML2", pkgConfig: "libxml-2.0", providers: [.apt(["libxml2-dev"])]),
        .systemLibrary(name: "CSQLite", path: "Sources/CSQLite", pkgConfig: "sqlite3", providers: [.apt(["libsqlite3-dev"])]),
        .systemLibrary(name: "COpenSSL", path: "Sources/COpenSSL", pkgConfig: "openssl", providers: [.apt(["libssl-dev"])]),
        .systemLibrary(name: "CMicroHTTPD", path: "Sources/CMicroHTTPD", pkgConfig: "libmicrohttpd", providers: [.apt(["libmicrohttpd-dev"])]),
        .systemLibrary(name: "CYAML", path: "Sources/CYAML", pkgConfig: "yaml-0.1", providers: [.apt(["libyaml-dev"])]),
        .systemLibrary(name: "CCurl", path: "Sources/CCurl", pkgConfig: "libcurl", providers: [.apt(["libcurl4-openssl-dev"])]),
        /// libpq: only IsthmusStore's PostgresConnection.swift imports it, so nothing else knows which store backend runs.
        .systemLibrary(name: "CPostgres", path: "Sources/CPostgres", pkgConfig: "libpq", providers: [.apt(["libpq-dev"])]),
        /// glibc's resolver, libresolv (headers in libc6-dev): only Network's SRVResolver.swift imports it (SRV lookups).
        .systemLibrary(name: "CResolv", path: "Sources/CResolv", providers: [.apt(["libc6-dev"])]),

        // MARK: Libraries
        .target(name: "IsthmusCommon", dependencies: ["COpenSSL"]),
        .target(name: "IsthmusConfig", dependencies: ["IsthmusCommon", "CYAML"]),
        .target(name: "IsthmusMetrics"),
        .target(name: "IsthmusStore", dependencies: ["IsthmusCommon", "CSQLite", "CPostgres"]),
        .target(name: "XMLStream", dependencies: ["CLibXML2"]),
        .target(name: "XMPP", dependencies: ["XMLStream", "IsthmusCommon"]),
        .target(name: "Network", dependencies: ["IsthmusCommon", "COpenSSL", "CResolv"]),
        .target(name: "XMPPComponent", dependencies: ["XMPP", "Network", "IsthmusCommon"]),
        .target(name: "XMPPClient", dependencies: ["XMPP", "Network", "IsthmusCommon"]),
        .target(name: "MessageFormatting", dependencies: ["CLibXML2", "IsthmusCommon"]),
        .target(name: "Matrix", dependencies: ["IsthmusCommon"]),
        .target(name: "MatrixCrypto", dependencies: ["COpenSSL", "IsthmusCommon"]),
        .target(name: "MatrixAppService", dependencies: ["Matrix", "IsthmusCommon", "CMicroHTTPD"]),
        .target(name: "Curl", dependencies: ["CCurl"]),
        .target(name: "MatrixClient", dependencies: ["Matrix", "IsthmusCommon", "Curl"]),
        .target(name: "MatrixAccount", dependencies: ["MatrixClient", "Matrix", "IsthmusCommon"]),
        .target(name: "Media", dependencies: ["IsthmusCommon", "Curl"]),
        .target(name: "Bridge", dependencies: [
            "IsthmusCommon", "IsthmusConfig", "IsthmusMetrics", "IsthmusStore", "XMPP", "XMPPComponent", "XMPPClient",
            "Matrix", "MatrixAppService", "MatrixClient", "MatrixAccount", "MatrixCrypto", "MessageFormatting", "Media",
        ]),
        .target(name: "IsthmusCLI", dependencies: [
            "IsthmusCommon", "IsthmusConfig", "IsthmusStore", "XMPP", "XMPPComponent", "XMPPClient",
            "Matrix", "MatrixAppService", "MatrixClient", "MatrixAccount", "MatrixCrypto", "Bridge",
        ]),
        .executableTarget(name: "isthmus", dependencies: ["IsthmusCLI"]),
        /// `swift run -c release isthmus-bench …`: benchmark commands that print figures (never timed assertions).
        .executableTarget(name: "isthmus-bench", dependencies: [
            "IsthmusCommon", "IsthmusStore", "XMLStream", "XMPP", "XMPPComponent", "Network",
            "Matrix", "MatrixAppService", "MatrixClient", "Bridge", "IsthmusFakes", "Media",
        ], path: "Sources/IsthmusBenchmarks"),

        // MARK: Tests
        /// Loopback fakes shared by the tests (through TestSupport) and `isthmus-bench`: the behavioural fake MUC service
        /// (XEP-0114), the scriptable and the answering homeserver, the test XMPP client (c2s) with its deadline-bound
        /// waits, a raw HTTP client, the config of a bridge between them.
        .target(name: "IsthmusFakes", dependencies: ["IsthmusCommon", "Network", "XMLStream", "XMPP", "MatrixAppService"],
                path: "Tests/IsthmusFakes"),
        .target(name: "TestSupport", dependencies: [
            "IsthmusCommon", "IsthmusConfig", "IsthmusStore", "XMLStream", "XMPP", "Network", "Matrix",
            "MatrixAppService", "MatrixClient", "IsthmusFakes",
        ], path: "Tests/TestSupport"),
        .testTarget(name: "IsthmusCommonTests", dependencies: ["IsthmusCommon", "TestSupport"]),
        .testTarget(name: "IsthmusConfigTests", dependencies: ["IsthmusConfig", "TestSupport"]),
        .testTarget(name: "IsthmusMetricsTests", dependencies: ["IsthmusMetrics"]),
        .testTarget(name: "IsthmusStoreTests", dependencies: ["IsthmusStore", "TestSupport"]),
        .testTarget(name: "IsthmusCLITests", dependencies: ["IsthmusCLI", "MatrixAccount", "TestSupport"]),
        .testTarget(name: "TestBedTests", dependencies: ["TestSupport"]),
        .testTarget(name: "XMLStreamTests", dependencies: ["XMLStream", "TestSupport"]),
        .testTarget(name: "XMPPTests", dependencies: ["XMPP", "XMPPComponent", "XMPPClient", "Network", "TestSupport"]),
        /// Real Prosody from the test bed (XCTest: runs sequentially).
        .testTarget(name: "XMPPRealServerTests", dependencies: ["XMPP", "XMPPComponent", "XMPPClient", "Network", "IsthmusCLI", "TestSupport"]),
        .testTarget(name: "MessageFormattingTests", dependencies: ["MessageFormatting", "IsthmusCommon"]),
        .testTarget(name: "MatrixTests", dependencies: [
            "Matrix", "MatrixAppService", "MatrixClient", "MatrixAccount", "IsthmusStore", "TestSupport",
        ]),
        /// Real Synapse from the test bed (XCTest: runs sequentially).
        .testTarget(name: "MatrixRealServerTests", dependencies: [
            "Matrix", "MatrixAppService", "MatrixClient", "MatrixAccount", "IsthmusStore", "IsthmusCLI", "TestSupport",
        ]),
        /// Fixed vectors (RFCs, libolm's tests) and differential tests against vodozemac (PyPI, in the venv of
        /// scripts/install-deps), driven through scripts/lib/vodozemac_oracle.py.
        .testTarget(name: "MatrixCryptoTests", dependencies: ["MatrixCrypto", "TestSupport"]),
        .testTarget(name: "MediaTests", dependencies: ["Media", "IsthmusCommon", "TestSupport"]),
        .testTarget(name: "BridgeTests", dependencies: ["Bridge", "IsthmusConfig", "MatrixAccount", "MatrixCrypto", "MessageFormatting", "Media", "IsthmusFakes", "TestSupport"]),
        /// The whole bridge against real Prosody and Synapse, driven through the CLI (XCTest: runs sequentially).
        .testTarget(name: "EndToEndTests", dependencies: ["Bridge", "IsthmusCLI", "MatrixCrypto", "TestSupport"]),
    ]
)

// MARK: Fuzz harnesses (only with ISTHMUS_FUZZ=1)
/// libFuzzer harnesses, one per untrusted input (`Fuzz/<Name>/`, seeds in `Fuzz/Corpus/<Name>/`). They exist only when
/// `ISTHMUS_FUZZ=1`, so `swift build --build-tests` never compiles them; `scripts/fuzz` builds them in `.build-fuzz`
/// with `-sanitize=fuzzer,address` (each harness's `@main` hands its `LLVMFuzzerTestOneInput` to libFuzzer's driver).
if Context.environment["ISTHMUS_FUZZ"] == "1" {
    package.targets.append(.target(name: "CLibFuzzer", path: "Fuzz/CLibFuzzer"))
    package.targets.append(.target(name: "FuzzSupport", dependencies: ["CLibFuzzer"], path: "Fuzz/Support"))
    let harnesses: [(String, [Target.Dependency])] = [
        ("fuzz-xml-stream", ["XMLStream"]),
        ("fuzz-appservice-request", ["MatrixAppService", "Matrix", "IsthmusCommon"]),
        ("fuzz-homeserver-response", ["MatrixClient", "Matrix", "IsthmusCommon"]),
        ("fuzz-config", ["IsthmusConfig", "IsthmusCommon", "Bridge"]),
        ("fuzz-formatting", ["MessageFormatting", "IsthmusCommon"]),
        ("fuzz-identifiers", ["IsthmusCommon", "Bridge"]),
    ]
    for (name, dependencies) in harnesses {
        package.targets.append(.executableTarget(name: name, dependencies: dependencies + ["FuzzSupport"], path: "Fuzz/\(name)"))
    }
}

// MARK: ThreadSanitizer support (only with ISTHMUS_SANITIZE=thread)
/// `scripts/sanitize thread` links a shim into the test binary that tells TSan about Synchronization.Mutex's
/// futex slow path (see Tests/CTSanMutexShim/TSanMutexShim.c); without it every contended lock is a false race.
if Context.environment["ISTHMUS_SANITIZE"] == "thread" {
    package.targets.append(.target(name: "CTSanMutexShim", path: "Tests/CTSanMutexShim"))
    package.targets.first { $0.name == "TestSupport" }?.dependencies.append("CTSanMutexShim")
}
