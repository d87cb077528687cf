import FoundationEssentials
import IsthmusCommon
import Synchronization
#if canImport(Glibc)
import Glibc
#endif
private import CCurl

/// One media transfer over libcurl's easy interface, performed on a thread of its own (``DedicatedThread``): a GET
/// whose body is handed to a sink as it arrives, or a POST or PUT whose body is read from a file. The only file of this
/// target that imports libcurl; no libcurl type leaves it.
///
/// Why not ``MatrixClient``'s multi-handle transport: that one holds each answer in memory and shares one thread
/// among all requests, while a media transfer must stream (the sink may block for backpressure, which only a
/// thread of its own can afford) and, for URLs from XMPP users, check each address before connecting.
///
/// Address check (``Request/refusesSpecialAddresses``): `CURLOPT_OPENSOCKETFUNCTION` sees the address libcurl is about
/// to connect to — after its own DNS lookup, for every redirect hop — and refuses loopback, private and other special
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
        _ = globalInit
        guard let handle = curl_easy_init() else { return .failure(.transport("curl_easy_init failed")) }
        defer { curl_easy_cleanup(handle) }
        let context = Context(onHead: onHead, onData: onData, refusesSpecialAddresses: request.refusesSpecialAddresses)
        return withExtendedLifetime(context) {
            let opaque = Unmanaged.passUnretained(context).toOpaque()
            var list: UnsafeMutablePointer<curl_slist>?
            for line in request.headers { list = curl_slist_append(list, line) }
            if request.upload != nil {
                list = curl_slist_append(list, "Content-Type: \(request.upload!.contentType)")
                list = curl_slist_append(list, "Expect:")
            }
            defer { curl_slist_free_all(list) }
            var file: UnsafeMutablePointer<FILE>?
            defer { if let file { fclose(file) } }
            _ = isthmus_curl_easy_setopt_string(handle, CURLOPT_URL, request.url)
            _ = isthmus_curl_easy_setopt_long(handle, CURLOPT_NOSIGNAL, 1)
            _ = isthmus_curl_easy_setopt_string(handle, CURLOPT_PROTOCOLS_STR, "http,https")
            _ = isthmus_curl_easy_setopt_string(handle, CURLOPT_REDIR_PROTOCOLS_STR, "http,https")
            _ = isthmus_curl_easy_setopt_long(handle, CURLOPT_FOLLOWLOCATION, request.followsRedirects ? 1 : 0)
            _ = isthmus_curl_easy_setopt_long(handle, CURLOPT_MAXREDIRS, 5)
            _ = isthmus_curl_easy_setopt_long(handle, CURLOPT_CONNECTTIMEOUT_MS, milliseconds(request.connectTimeout))
            _ = isthmus_curl_easy_setopt_long(handle, CURLOPT_TIMEOUT_MS, milliseconds(request.totalTimeout))
            _ = isthmus_curl_easy_setopt_long(handle, CURLOPT_LOW_SPEED_LIMIT, 1)
            _ = isthmus_curl_easy_setopt_long(handle, CURLOPT_LOW_SPEED_TIME, max(1, milliseconds(request.stallTimeout) / 1000))
            _ = isthmus_curl_easy_setopt_slist(handle, CURLOPT_HTTPHEADER, list)
            _ = isthmus_curl_easy_setopt_pointer(handle, CURLOPT_HEADERDATA, opaque)
            _ = isthmus_curl_easy_setopt_callback(handle, CURLOPT_HEADERFUNCTION, headerCallback)
            _ = isthmus_curl_easy_setopt_pointer(handle, CURLOPT_WRITEDATA, opaque)
            _ = isthmus_curl_easy_setopt_callback(handle, CURLOPT_WRITEFUNCTION, writeCallback)
            if let caFile = request.caFile { _ = isthmus_curl_easy_setopt_string(handle, CURLOPT_CAINFO, caFile) }
            if request.refusesSpecialAddresses {
                _ = isthmus_curl_easy_setopt_string(handle, CURLOPT_PROXY, "")  // the checked address must be the peer's
                _ = isthmus_curl_easy_setopt_pointer(handle, CURLOPT_OPENSOCKETDATA, opaque)
                _ = isthmus_curl_easy_setopt_opensocket(handle, openSocketCallback)
            }
            if let upload = request.upload {
                guard let opened = fopen(upload.path, "rb") else { return .failure(.transport("cannot open \(upload.path)")) }
                file = opened
                var status = stat()
                _ = fstat(fileno(opened), &status)
                _ = isthmus_curl_easy_setopt_pointer(handle, CURLOPT_READDATA, UnsafeMutableRawPointer(opened))
                if request.putsUpload {
                    _ = isthmus_curl_easy_setopt_long(handle, CURLOPT_UPLOAD, 1)
                    _ = isthmus_curl_easy_setopt_offset(handle, CURLOPT_INFILESIZE_LARGE, curl_off_t(status.st_size))
                } else {
                    _ = isthmus_curl_easy_setopt_long(handle, CURLOPT_POST, 1)
                    _ = isthmus_curl_easy_setopt_offset(handle, CURLOPT_POSTFIELDSIZE_LARGE, curl_off_t(status.st_size))
                }
            }
            var errorBuffer = [CChar](repeating: 0, count: Int(isthmus_curl_error_size()))
            let code = errorBuffer.withUnsafeMutableBufferPointer { buffer in
                _ = isthmus_curl_easy_setopt_pointer(handle, CURLOPT_ERRORBUFFER, buffer.baseAddress)
                return curl_easy_perform(handle)
            }
            _ = isthmus_curl_easy_setopt_pointer(handle, CURLOPT_ERRORBUFFER, nil)
            if let refused = context.refusedBecause { return .failure(.refusedAddress(refused)) }
            if context.stopped { return .failure(.aborted) }
            guard code == CURLE_OK else {
                let detail = String(decoding: errorBuffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
                return .failure(.transport(detail.isEmpty ? String(cString: curl_easy_strerror(code)) : detail))
            }
            guard context.deliverHead() else { return .failure(.aborted) }
            return .success(context.head ?? Head(status: 0, headers: [:]))
        }
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

    private static let globalInit: Void = { _ = curl_global_init(isthmus_curl_global_default()) }()

    private static func milliseconds(_ duration: Duration) -> Int {
        let (seconds, attoseconds) = duration.components
        return Int(seconds) * 1000 + Int(attoseconds / 1_000_000_000_000_000)
    }

    /// What the C callbacks share during one transfer (its thread only).
    fileprivate final class Context {
        let onHead: (Head) -> Bool
        let onData: (UnsafeRawBufferPointer) -> Bool
        let refusesSpecialAddresses: Bool
        var status = 0
        var headers: [String: String] = [:]
        var head: Head?
        var headDelivered = false
        var stopped = false
        var refusedBecause: String?

        init(onHead: @escaping (Head) -> Bool, onData: @escaping (UnsafeRawBufferPointer) -> Bool, refusesSpecialAddresses: Bool) {
            self.onHead = onHead
            self.onData = onData
            self.refusesSpecialAddresses = refusesSpecialAddresses
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

private let headerCallback: isthmus_curl_data_callback = { data, size, count, context in
    guard let data, let context else { return 0 }
    let length = size * count
    let line = String(decoding: UnsafeRawBufferPointer(start: data, count: length), as: UTF8.self)
    Unmanaged<CurlEasyTransfer.Context>.fromOpaque(context).takeUnretainedValue().headerLine(line)
    return length
}

private let writeCallback: isthmus_curl_data_callback = { data, size, count, context in
    guard let data, let context else { return 0 }
    let length = size * count
    let transfer = Unmanaged<CurlEasyTransfer.Context>.fromOpaque(context).takeUnretainedValue()
    guard transfer.deliverHead(), transfer.onData(UnsafeRawBufferPointer(start: data, count: length)) else {
        transfer.stopped = true
        return 0
    }
    return length
}

/// Checks the address libcurl is about to connect to, then opens the socket as libcurl would.
private let openSocketCallback: isthmus_curl_opensocket_callback = { context, _, address in
    guard let context, let address else { return isthmus_curl_socket_bad() }
    let transfer = Unmanaged<CurlEasyTransfer.Context>.fromOpaque(context).takeUnretainedValue()
    let verdict: AddressClassifier.Verdict
    // `addr` is declared as a 16-byte `struct sockaddr`, but libcurl stores the whole `sockaddr_in6` there: read it
    // through the original pointer, not a copy of the field.
    let socketAddress = UnsafeRawPointer(address) + MemoryLayout<curl_sockaddr>.offset(of: \curl_sockaddr.addr)!
    switch address.pointee.family {
    case AF_INET:
        let inet = socketAddress.loadUnaligned(as: sockaddr_in.self)
        verdict = withUnsafeBytes(of: inet.sin_addr) { AddressClassifier.classify(ipv4: Array($0)) }
    case AF_INET6:
        let inet6 = socketAddress.loadUnaligned(as: sockaddr_in6.self)
        verdict = withUnsafeBytes(of: inet6.sin6_addr) { AddressClassifier.classify(ipv6: Array($0)) }
    default:
        verdict = .special("address family \(address.pointee.family)")
    }
    if case .special(let why) = verdict, transfer.refusesSpecialAddresses {
        transfer.refusedBecause = why
        return isthmus_curl_socket_bad()
    }
    return socket(address.pointee.family, address.pointee.socktype, address.pointee.protocol)
}
