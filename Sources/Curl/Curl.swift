import FoundationEssentials
#if canImport(Glibc)
import Glibc
#endif
private import CCurl

// The only file that imports libcurl (`CCurl`): ``CurlEasy`` (one transfer), ``CurlMulti`` (transfers driven together
// by one thread) and ``CurlCode``. No libcurl type leaves it.

/// A libcurl result code (`CURLcode`), with the ones callers tell apart.
public struct CurlCode: RawRepresentable, Hashable, Sendable {
    public let rawValue: UInt32
    public init(rawValue: UInt32) { self.rawValue = rawValue }
    fileprivate init(_ code: CURLcode) { rawValue = code.rawValue }

    public static let ok = CurlCode(CURLE_OK)
    public static let couldNotResolveHost = CurlCode(CURLE_COULDNT_RESOLVE_HOST)
    public static let couldNotResolveProxy = CurlCode(CURLE_COULDNT_RESOLVE_PROXY)
    public static let couldNotConnect = CurlCode(CURLE_COULDNT_CONNECT)
    public static let timedOut = CurlCode(CURLE_OPERATION_TIMEDOUT)
    /// The peer's certificate or its chain was not accepted (verification, CA file, issuer, pinning, status, CRL).
    public static let certificateRefused: Set<CurlCode> = [
        CurlCode(CURLE_PEER_FAILED_VERIFICATION), CurlCode(CURLE_SSL_CACERT_BADFILE), CurlCode(CURLE_SSL_ISSUER_ERROR),
        CurlCode(CURLE_SSL_PINNEDPUBKEYNOTMATCH), CurlCode(CURLE_SSL_INVALIDCERTSTATUS), CurlCode(CURLE_SSL_CRL_BADFILE),
    ]
    /// TLS itself failed (handshake, client certificate, ciphers, engines).
    public static let tlsFailed: Set<CurlCode> = [
        CurlCode(CURLE_SSL_CONNECT_ERROR), CurlCode(CURLE_SSL_CERTPROBLEM), CurlCode(CURLE_SSL_CIPHER),
        CurlCode(CURLE_SSL_ENGINE_NOTFOUND), CurlCode(CURLE_SSL_ENGINE_SETFAILED), CurlCode(CURLE_SSL_ENGINE_INITFAILED),
        CurlCode(CURLE_USE_SSL_FAILED),
    ]
    /// The request cannot be made as given (URL, scheme, option or build).
    public static let unusableRequest: Set<CurlCode> = [
        CurlCode(CURLE_URL_MALFORMAT), CurlCode(CURLE_UNSUPPORTED_PROTOCOL), CurlCode(CURLE_NOT_BUILT_IN),
        CurlCode(CURLE_BAD_FUNCTION_ARGUMENT), CurlCode(CURLE_UNKNOWN_OPTION), CurlCode(CURLE_FAILED_INIT),
    ]

    /// libcurl's generic text for the code (`curl_easy_strerror`).
    public var text: String { String(cString: curl_easy_strerror(CURLcode(rawValue))) }
}

/// One libcurl easy handle: the options of one transfer, its callbacks and its error text. Used by one thread at a
/// time. `CURLOPT_NOSIGNAL` is always on (the process has other threads).
public final class CurlEasy {
    /// An option of the next transfer (`curl_easy_setopt`).
    public enum Option {
        case url(String)
        /// `CURLOPT_PROTOCOLS_STR`, e.g. `http,https`.
        case protocols(String)
        /// `CURLOPT_REDIR_PROTOCOLS_STR`.
        case redirectProtocols(String)
        case followsRedirects(Bool)
        case maxRedirects(Int)
        case connectTimeout(Duration)
        /// The whole transfer at most (`CURLOPT_TIMEOUT_MS`).
        case timeout(Duration)
        /// Abort when fewer than `bytesPerSecond` move for `seconds` (`CURLOPT_LOW_SPEED_*`).
        case lowSpeed(bytesPerSecond: Int, seconds: Int)
        case caFile(String)
        case caDirectory(String)
        /// `""`: no proxy, whatever the environment says.
        case proxy(String)
        /// HTTP/2 over TLS when the server offers it (ALPN), HTTP/1.1 otherwise.
        case http2OverTLS
        /// Wait for a connection that can multiplex rather than open another (`CURLOPT_PIPEWAIT`).
        case waitsToMultiplex
        case suppressesConnectHeaders
        /// A connection of its own, never a reused one (`CURLOPT_FRESH_CONNECT`).
        case freshConnection
        case get
        /// POST `body` (copied), or send it with the method set by ``customMethod(_:)``.
        case postFields(Data)
        /// `CURLOPT_CUSTOMREQUEST`.
        case customMethod(String)
    }

    /// How ``upload(file:method:)`` sends its file.
    public enum UploadMethod { case post, put }

    /// The address libcurl is about to connect to (see ``checksAddresses(_:)``).
    public enum PeerAddress {
        case ipv4([UInt8])
        case ipv6([UInt8])
        case other(family: Int32)
    }

    /// Each response header line as received (status lines included); false aborts the transfer.
    public var onHeader: ((UnsafeRawBufferPointer) -> Bool)?
    /// Each chunk of the body; false aborts the transfer.
    public var onBody: ((UnsafeRawBufferPointer) -> Bool)?
    fileprivate var allowsAddress: ((PeerAddress) -> Bool)?
    fileprivate let handle: UnsafeMutableRawPointer
    private let errorBuffer: UnsafeMutablePointer<CChar>
    private var headerList: UnsafeMutablePointer<curl_slist>?
    private var uploadFile: UnsafeMutablePointer<FILE>?

    /// Nil when libcurl cannot create a handle (out of memory).
    public init?() {
        _ = Self.globalInit
        guard let handle = curl_easy_init() else { return nil }
        self.handle = handle
        errorBuffer = .allocate(capacity: Int(isthmus_curl_error_size()))
        errorBuffer.initialize(repeating: 0, count: Int(isthmus_curl_error_size()))
        installDefaults()
    }

    deinit {
        curl_easy_cleanup(handle)
        curl_slist_free_all(headerList)
        if let uploadFile { fclose(uploadFile) }
        errorBuffer.deallocate()
    }

    /// `curl_global_init` before the first handle, once per process.
    private static let globalInit: Void = { _ = curl_global_init(isthmus_curl_global_default()) }()

    /// Forgets every option, callback, header and upload file of the last transfer (`curl_easy_reset`); connections and
    /// the DNS and TLS session caches stay.
    public func reset() {
        curl_easy_reset(handle)
        onHeader = nil
        onBody = nil
        allowsAddress = nil
        curl_slist_free_all(headerList)
        headerList = nil
        if let uploadFile { fclose(uploadFile) }
        uploadFile = nil
        installDefaults()
    }

    private func installDefaults() {
        errorBuffer[0] = 0
        let context = Unmanaged.passUnretained(self).toOpaque()
        _ = isthmus_curl_easy_setopt_pointer(handle, CURLOPT_ERRORBUFFER, errorBuffer)
        _ = isthmus_curl_easy_setopt_long(handle, CURLOPT_NOSIGNAL, 1)
        _ = isthmus_curl_easy_setopt_callback(handle, CURLOPT_HEADERFUNCTION, headerTrampoline)
        _ = isthmus_curl_easy_setopt_pointer(handle, CURLOPT_HEADERDATA, context)
        _ = isthmus_curl_easy_setopt_callback(handle, CURLOPT_WRITEFUNCTION, bodyTrampoline)
        _ = isthmus_curl_easy_setopt_pointer(handle, CURLOPT_WRITEDATA, context)
    }

    /// Sets one option; returns libcurl's verdict.
    @discardableResult
    public func set(_ option: Option) -> CurlCode {
        let code: CURLcode
        switch option {
        case .url(let url): code = isthmus_curl_easy_setopt_string(handle, CURLOPT_URL, url)
        case .protocols(let list): code = isthmus_curl_easy_setopt_string(handle, CURLOPT_PROTOCOLS_STR, list)
        case .redirectProtocols(let list): code = isthmus_curl_easy_setopt_string(handle, CURLOPT_REDIR_PROTOCOLS_STR, list)
        case .followsRedirects(let follows): code = isthmus_curl_easy_setopt_long(handle, CURLOPT_FOLLOWLOCATION, follows ? 1 : 0)
        case .maxRedirects(let count): code = isthmus_curl_easy_setopt_long(handle, CURLOPT_MAXREDIRS, count)
        case .connectTimeout(let duration):
            code = isthmus_curl_easy_setopt_long(handle, CURLOPT_CONNECTTIMEOUT_MS, Self.milliseconds(duration))
        case .timeout(let duration): code = isthmus_curl_easy_setopt_long(handle, CURLOPT_TIMEOUT_MS, Self.milliseconds(duration))
        case .lowSpeed(let bytesPerSecond, let seconds):
            let limit = isthmus_curl_easy_setopt_long(handle, CURLOPT_LOW_SPEED_LIMIT, bytesPerSecond)
            code = limit != CURLE_OK ? limit : isthmus_curl_easy_setopt_long(handle, CURLOPT_LOW_SPEED_TIME, seconds)
        case .caFile(let path): code = isthmus_curl_easy_setopt_string(handle, CURLOPT_CAINFO, path)
        case .caDirectory(let path): code = isthmus_curl_easy_setopt_string(handle, CURLOPT_CAPATH, path)
        case .proxy(let proxy): code = isthmus_curl_easy_setopt_string(handle, CURLOPT_PROXY, proxy)
        case .http2OverTLS: code = isthmus_curl_easy_setopt_long(handle, CURLOPT_HTTP_VERSION, CURL_HTTP_VERSION_2TLS)
        case .waitsToMultiplex: code = isthmus_curl_easy_setopt_long(handle, CURLOPT_PIPEWAIT, 1)
        case .suppressesConnectHeaders: code = isthmus_curl_easy_setopt_long(handle, CURLOPT_SUPPRESS_CONNECT_HEADERS, 1)
        case .freshConnection: code = isthmus_curl_easy_setopt_long(handle, CURLOPT_FRESH_CONNECT, 1)
        case .get: code = isthmus_curl_easy_setopt_long(handle, CURLOPT_HTTPGET, 1)
        case .postFields(let body):
            let size = isthmus_curl_easy_setopt_offset(handle, CURLOPT_POSTFIELDSIZE_LARGE, curl_off_t(body.count))
            if size != CURLE_OK {
                code = size
            } else if body.isEmpty {
                code = isthmus_curl_easy_setopt_string(handle, CURLOPT_COPYPOSTFIELDS, "")
            } else {
                code = body.withUnsafeBytes { bytes in
                    isthmus_curl_easy_setopt_pointer(handle, CURLOPT_COPYPOSTFIELDS, UnsafeMutableRawPointer(mutating: bytes.baseAddress))
                }
            }
        case .customMethod(let method): code = isthmus_curl_easy_setopt_string(handle, CURLOPT_CUSTOMREQUEST, method)
        }
        return CurlCode(code)
    }

    /// Sends these header lines (`Name: value`; `Name:` drops a header libcurl would add). Replaces earlier ones.
    @discardableResult
    public func setHeaders(_ lines: [String]) -> CurlCode {
        curl_slist_free_all(headerList)
        headerList = nil
        for line in lines { headerList = curl_slist_append(headerList, line) }
        return CurlCode(isthmus_curl_easy_setopt_slist(handle, CURLOPT_HTTPHEADER, headerList))
    }

    /// Sends the file at `path`, whole, as the request body. False when it cannot be opened. Does file I/O.
    public func upload(file path: String, method: UploadMethod) -> Bool {
        guard let file = fopen(path, "rb") else { return false }
        uploadFile = file
        var status = stat()
        _ = fstat(fileno(file), &status)
        _ = isthmus_curl_easy_setopt_pointer(handle, CURLOPT_READDATA, UnsafeMutableRawPointer(file))
        switch method {
        case .put:
            _ = isthmus_curl_easy_setopt_long(handle, CURLOPT_UPLOAD, 1)
            _ = isthmus_curl_easy_setopt_offset(handle, CURLOPT_INFILESIZE_LARGE, curl_off_t(status.st_size))
        case .post:
            _ = isthmus_curl_easy_setopt_long(handle, CURLOPT_POST, 1)
            _ = isthmus_curl_easy_setopt_offset(handle, CURLOPT_POSTFIELDSIZE_LARGE, curl_off_t(status.st_size))
        }
        return true
    }

    /// Asks `allows` about every address libcurl is about to connect to (`CURLOPT_OPENSOCKETFUNCTION`: after its own
    /// DNS lookup, for every redirect hop); false refuses the connection.
    public func checksAddresses(_ allows: @escaping (PeerAddress) -> Bool) {
        allowsAddress = allows
        _ = isthmus_curl_easy_setopt_pointer(handle, CURLOPT_OPENSOCKETDATA, Unmanaged.passUnretained(self).toOpaque())
        _ = isthmus_curl_easy_setopt_opensocket(handle, openSocketTrampoline)
    }

    /// Performs the transfer on the calling thread (blocking).
    public func perform() -> CurlCode { CurlCode(curl_easy_perform(handle)) }

    /// The last response's status code (0 before any).
    public var responseCode: Int {
        var status = 0
        _ = isthmus_curl_easy_getinfo_long(handle, CURLINFO_RESPONSE_CODE, &status)
        return status
    }

    /// The HTTP version of the last response: `2`, `1.1` or `1.0`.
    public var responseHTTPVersion: String {
        var version = 0
        _ = isthmus_curl_easy_getinfo_long(handle, CURLINFO_HTTP_VERSION, &version)
        return version == CURL_HTTP_VERSION_2_0 ? "2" : version == CURL_HTTP_VERSION_1_0 ? "1.0" : "1.1"
    }

    /// What went wrong, in libcurl's words: the error buffer's text of the last transfer, else ``CurlCode/text``.
    public func message(for code: CurlCode) -> String {
        let detail = String(decoding: UnsafeRawBufferPointer(start: errorBuffer, count: strlen(errorBuffer)), as: UTF8.self)
        if !detail.isEmpty { return detail.hasSuffix("\n") ? String(detail.dropLast()) : detail }
        return code.text
    }

    private static func milliseconds(_ duration: Duration) -> Int {
        Int(duration.components.seconds) * 1000 + Int(duration.components.attoseconds / 1_000_000_000_000_000)
    }
}

/// libcurl's multi handle: drives every added ``CurlEasy`` on the one thread that calls ``perform()`` and ``poll(milliseconds:)``.
/// Connections are the multi handle's: kept alive, reused, and multiplexed over HTTP/2 where the server offers it
/// (`CURLPIPE_MULTIPLEX`). Only ``wakeup()`` may be called from another thread.
public final class CurlMulti {
    private let multi: UnsafeMutableRawPointer
    private var transfers: [UnsafeMutableRawPointer: CurlEasy] = [:]

    /// `maxConnections`: to one host, and kept open in all.
    public init(maxConnections: Int) {
        multi = curl_multi_init()
        _ = isthmus_curl_multi_setopt_long(multi, CURLMOPT_PIPELINING, isthmus_curl_pipe_multiplex())
        _ = isthmus_curl_multi_setopt_long(multi, CURLMOPT_MAX_HOST_CONNECTIONS, maxConnections)
        _ = isthmus_curl_multi_setopt_long(multi, CURLMOPT_MAXCONNECTS, maxConnections)
    }

    deinit { curl_multi_cleanup(multi) }

    /// Starts `easy`'s transfer; it is kept until ``remove(_:)``.
    public func add(_ easy: CurlEasy) {
        transfers[easy.handle] = easy
        _ = curl_multi_add_handle(multi, easy.handle)
    }

    /// Stops `easy`'s transfer (finished or not) and lets it go.
    public func remove(_ easy: CurlEasy) {
        _ = curl_multi_remove_handle(multi, easy.handle)
        transfers[easy.handle] = nil
    }

    /// Moves every transfer as far as it can without waiting (`curl_multi_perform`).
    public func perform() {
        var running: Int32 = 0
        _ = curl_multi_perform(multi, &running)
    }

    /// Waits up to `milliseconds` for activity on any transfer or for ``wakeup()`` (`curl_multi_poll`).
    public func poll(milliseconds: Int32) {
        _ = curl_multi_poll(multi, nil, 0, milliseconds, nil)
    }

    /// Ends a ``poll(milliseconds:)`` now or the next one at once. Any thread.
    public func wakeup() {
        _ = curl_multi_wakeup(multi)
    }

    /// The transfers that finished since the last call, with their results; each stays added until removed.
    public func finished() -> [(CurlEasy, CurlCode)] {
        var done: [(CurlEasy, CurlCode)] = []
        var left: Int32 = 0
        while let message = curl_multi_info_read(multi, &left) {
            guard message.pointee.msg == CURLMSG_DONE, let handle = message.pointee.easy_handle,
                  let easy = transfers[handle] else { continue }
            done.append((easy, CurlCode(message.pointee.data.result)))
        }
        return done
    }
}

private let headerTrampoline: isthmus_curl_data_callback = { data, size, count, context in
    let easy = Unmanaged<CurlEasy>.fromOpaque(context!).takeUnretainedValue()
    let length = size * count
    guard let data, let onHeader = easy.onHeader else { return length }
    return onHeader(UnsafeRawBufferPointer(start: data, count: length)) ? length : 0
}

private let bodyTrampoline: isthmus_curl_data_callback = { data, size, count, context in
    let easy = Unmanaged<CurlEasy>.fromOpaque(context!).takeUnretainedValue()
    let length = size * count
    guard let data, let onBody = easy.onBody else { return length }
    return onBody(UnsafeRawBufferPointer(start: data, count: length)) ? length : 0
}

/// Asks the handle's check about the address, then opens the socket as libcurl would.
private let openSocketTrampoline: isthmus_curl_opensocket_callback = { context, _, address in
    guard let context, let address else { return isthmus_curl_socket_bad() }
    let easy = Unmanaged<CurlEasy>.fromOpaque(context).takeUnretainedValue()
    // `addr` is declared as a 16-byte `struct sockaddr`, but libcurl stores the whole `sockaddr_in6` there: read it
    // through the original pointer, not a copy of the field.
    let socketAddress = UnsafeRawPointer(address) + MemoryLayout<curl_sockaddr>.offset(of: \curl_sockaddr.addr)!
    let peer: CurlEasy.PeerAddress
    switch address.pointee.family {
    case AF_INET:
        let inet = socketAddress.loadUnaligned(as: sockaddr_in.self)
        peer = withUnsafeBytes(of: inet.sin_addr) { .ipv4(Array($0)) }
    case AF_INET6:
        let inet6 = socketAddress.loadUnaligned(as: sockaddr_in6.self)
        peer = withUnsafeBytes(of: inet6.sin6_addr) { .ipv6(Array($0)) }
    default:
        peer = .other(family: address.pointee.family)
    }
    if let allows = easy.allowsAddress, !allows(peer) { return isthmus_curl_socket_bad() }
    return socket(address.pointee.family, address.pointee.socktype, address.pointee.protocol)
}
