import Foundation

/// A throwaway self-signed certificate and its key, made by the `openssl` tool in `directory` (valid two days).
/// Does process and file I/O.
public struct TestCertificate: Sendable {
    /// PEM files.
    public var certificate: String
    public var key: String

    /// `names`: the subject alternative names, e.g. `DNS:localhost,IP:127.0.0.1`.
    public init(names: String, in directory: TemporaryDirectory) throws {
        certificate = directory.path("cert.pem")
        key = directory.path("key.pem")
        let openssl = Process()
        openssl.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        openssl.arguments = ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", key, "-out", certificate,
                             "-days", "2", "-subj", "/CN=isthmus-test", "-addext", "subjectAltName=\(names)"]
        openssl.standardOutput = FileHandle.nullDevice
        openssl.standardError = FileHandle.nullDevice
        try openssl.run()
        guard openssl.waitForExit(timeout: 30), openssl.terminationStatus == 0 else {
            throw ScriptedPythonServer.Failure(description: "openssl req failed")
        }
    }
}
