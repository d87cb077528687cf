import FoundationEssentials
import IsthmusCommon
import Synchronization
private import Curl

/// One media transfer over libcurl's easy interface, performed on a thread of its own (``DedicatedThread``): a GET
/// whose body is handed to a sink as it arrives, or a POST or PUT whose body is read from a file, on ``CurlEasy``.
///
/// Why not ``MatrixClient``'s multi-handle transport: that one holds each answer in memory and shares one thread
/// among all requests, while a media transfer must stream (the sink may block for backpressure, which only a
/// thread of its own can afford) and, for URLs from XMPP users, check each address before connecting.
///
/// Address check (``Request/refusesSpecialAddresses``): ``CurlEasy/checksAddresses(_:)`` sees the address libcurl is
/// about to connect to — after its own DNS lookup, for every redirect hop — and refuses loopback, private and other special
/// addresses (``AddressClassifier``). Checking the address actually connected to, rather than resolving the name
/// first, leaves no window for DNS rebinding. Proxies are switched off for such fetches (a proxy would be the
/// address checked). Only `http` and `https`, also after redirects.
public enum CurlEasyTransfer {
    /// What to fetch or send, and the limits.
    public struct Request: Sendable {
        public var url: String
        /// Extra header lines (`Authorization: Bearer …`).
        public var headers: [String] = []
        /// POST this file (its whole content) with this `Content-Type`; nil: GET.
        public var upload: (path: String, contentType: String)?
        /// Send ``upload`` with PUT instead of POST (XEP-0363 slots).
        public var putsUpload = false
        /// Refuse to connect to loopback/private/special addresses (URLs from XMPP users).
        public var refusesSpecialAddresses = false
        /// Follow up to 5 redirects (http/https only).
        public var followsRedirects = false
        public var connectTimeout: Duration = .seconds(10)
        /// The transfer is aborted when it moves fewer than 1 byte/s for this long (a stalled peer).
        public var stallTimeout: Duration = .seconds(30)
        /// The whole transfer at most.
        public var totalTimeout: Duration = .seconds(600)
        /// CA file for https (nil: libcurl's default store).
        public var caFile: String?

        public init(url: String) { self.url = url }
    }

    /// Why a transfer failed.
    public enum Failure: Error, Sendable, Equatable, CustomStringConvertible {
        /// The address was loopback, private or otherwise special (and the request refuses those).
        case refusedAddress(String)
        /// The sink or the head callback stopped the transfer.
        case aborted
        /// libcurl failed (DNS, connection, TLS, timeout, redirect to another scheme…).
        case transport(String)

        public var description: String {
            switch self {
            case .refusedAddress(let why): "refused address (\(why))"
            case .aborted: "aborted"
            case .transport(let why): why
            }
        }
    }

    /// The response head: status and headers (lower-case names; the last value wins) of the final response.
    public struct Head: Sendable, Equatable {
        public var status: Int
        public var headers: [String: String]
    }

    /// Performs `request` on the calling thread (blocking; call from a dedicated thread). `onHead` sees the final
    /// response head before the first body byte (or at the end for an empty body) and may stop the transfer by
    /// returning false; `onData` gets the body in chunks and may stop it likewise. Returns the head.
    public static func perform(_ request: Request, onHead: @escaping (Head) -> Bool, onData: @escaping (UnsafeRawBufferPointer) -> Bool) -> Result<Head, Failure> {
        guard let easy = CurlEasy() else { return .failure(.transport("curl_easy_init failed")) }
        let context = Context(onHead: onHead, onData: onData)
        easy.onHeader = { line in
            context.headerLine(String(decoding: line, as: UTF8.self))
            return true
        }
        easy.onBody = { chunk in
            guard context.deliverHead(), context.onData(chunk) else {
                context.stopped = true
                return false
            }
            return true
        }
        var headers = request.headers
        if let upload = request.upload { headers += ["Content-Type: \(upload.contentType)", "Expect:"] }
        easy.setHeaders(headers)
        easy.set(.url(request.url))
        easy.set(.protocols("http,https"))
        easy.set(.redirectProtocols("http,https"))
        easy.set(.followsRedirects(request.followsRedirects))
        easy.set(.maxRedirects(5))
        easy.set(.connectTimeout(request.connectTimeout))
        easy.set(.timeout(request.totalTimeout))
        easy.set(.lowSpeed(bytesPerSecond: 1, seconds: max(1, Int(request.stallTimeout.components.seconds))))
        if let caFile = request.caFile { easy.set(.caFile(caFile)) }
        if request.refusesSpecialAddresses {
            easy.set(.proxy(""))  // the checked address must be the peer's
            easy.checksAddresses { address in
                let verdict: AddressClassifier.Verdict = switch address {
                case .ipv4(let bytes): AddressClassifier.classify(ipv4: bytes)
                case .ipv6(let bytes): AddressClassifier.classify(ipv6: bytes)
                case .other(let family): .special("address family \(family)")
                }
                guard case .special(let why) = verdict else { return true }
                context.refusedBecause = why
                return false
            }
        }
        if let upload = request.upload, !easy.upload(file: upload.path, method: request.putsUpload ? .put : .post) {
            return .failure(.transport("cannot open \(upload.path)"))
        }
        let code = easy.perform()
        if let refused = context.refusedBecause { return .failure(.refusedAddress(refused)) }
        if context.stopped { return .failure(.aborted) }
        guard code == .ok else { return .failure(.transport(easy.message(for: code))) }
        guard context.deliverHead() else { return .failure(.aborted) }
        return .success(context.head ?? Head(status: 0, headers: [:]))
    }

    /// Runs ``perform(_:onHead:onData:)`` on a new dedicated thread and returns its result (the callbacks run there).
    public static func performDetached(_ request: Request, onHead: @escaping @Sendable (Head) -> Bool,
                                       onData: @escaping @Sendable (UnsafeRawBufferPointer) -> Bool) async -> Result<Head, Failure> {
        await withCheckedContinuation { continuation in
            do {
                try DedicatedThread.start(name: "isthmus-media") {
                    continuation.resume(returning: perform(request, onHead: onHead, onData: onData))
                }
            } catch {
                continuation.resume(returning: .failure(.transport("no thread for the transfer: \(error)")))
            }
        }
    }

    /// What the callbacks share during one transfer (its thread only).
    fileprivate final class Context {
        let onHead: (Head) -> Bool
        let onData: (UnsafeRawBufferPointer) -> Bool
        var status = 0
        var headers: [String: String] = [:]
        var head: Head?
        var headDelivered = false
        var stopped = false
        var refusedBecause: String?

        init(onHead: @escaping (Head) -> Bool, onData: @escaping (UnsafeRawBufferPointer) -> Bool) {
            self.onHead = onHead
            self.onData = onData
        }

        /// A header line: a status line starts a new head (after a redirect or a 100 Continue).
        func headerLine(_ line: String) {
            if line.hasPrefix("HTTP/") {
                let parts = line.split(separator: " ")
                status = parts.count > 1 ? Int(parts[1]) ?? 0 : 0
                headers = [:]
            } else if let colon = line.firstIndex(of: ":") {
                let name = line[..<colon].lowercased()
                let value = String(line[line.index(after: colon)...].filter { $0 != "\r" && $0 != "\n" && $0 != "\r\n" })
                    .trimmingWhitespace()
                headers[name] = value
            }
        }

        /// Hands the head over once; false stops the transfer.
        func deliverHead() -> Bool {
            guard !headDelivered else { return !stopped }
            headDelivered = true
            let final = Head(status: status, headers: headers)
            head = final
            if !onHead(final) { stopped = true }
            return !stopped
        }
    }
}
