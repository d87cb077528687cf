/// The Python servers the HTTP client is tested against (run by ``ScriptedPythonServer``). Each records what it sees in
/// `events`: `accept N` per TCP connection, then what happened on it.
public enum PythonServerScripts {
    /// Shared by the scripts: the listening socket, the `events` file, and the JSON body naming connection and stream.
    private static let prelude = #"""
    import json, os, socket, sys, threading
    directory = sys.argv[1]
    lock = threading.Lock()
    def record(line):
        with lock:
            with open(os.path.join(directory, "events"), "a") as events:
                events.write(line + "\n")
    def answer_body(connection, stream):
        return json.dumps({"joined_rooms": ["!c%ds%d:localhost" % (connection, stream)], "user_id": "@bot:localhost",
                           "room_id": "!new:localhost", "event_id": "$c%ds%d" % (connection, stream)}).encode()
    listener = socket.socket()
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(("127.0.0.1", 0))
    listener.listen(128)
    def read_request(stream):
        line = stream.readline()
        if not line:
            return None
        headers = {}
        while True:
            header = stream.readline()
            if header in (b"\r\n", b"\n", b""):
                break
            name, _, value = header.decode().partition(":")
            headers[name.strip().lower()] = value.strip()
        length = int(headers.get("content-length") or 0)
        if length:
            stream.read(length)
        method, target, _ = line.decode().split(" ", 2)
        return method, target
    def send_answer(conn, body):
        conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n" % len(body) + body)
    def serve_forever(handle):
        print(listener.getsockname()[1], flush=True)
        number = 0
        while True:
            raw, _ = listener.accept()
            number += 1
            record("accept %d" % number)
            threading.Thread(target=handle, args=(raw, number), daemon=True).start()

    """#

    /// HTTPS with `cert.pem`/`key.pem` in the scratch folder; argument `h2` offers HTTP/2 by ALPN (answered with the
    /// `h2` library), `http1` only HTTP/1.1. Keeps connections alive; answers every request with ``prelude``'s body.
    /// Events: `accept N`, then `tls N PROTOCOL` or `handshake-failed N`, and `request N METHOD TARGET`.
    public static let tlsServer = prelude + #"""
    import ssl
    offer_h2 = sys.argv[2] == "h2"
    if offer_h2:
        import h2.config, h2.connection, h2.events   # Debian's python3-h2
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(os.path.join(directory, "cert.pem"), os.path.join(directory, "key.pem"))
    context.set_alpn_protocols(["h2", "http/1.1"] if offer_h2 else ["http/1.1"])
    def serve_http1(conn, number):
        stream = conn.makefile("rb")
        while True:
            request = read_request(stream)
            if request is None:
                return
            record("request %d %s %s" % (number, request[0], request[1]))
            send_answer(conn, answer_body(number, 0))
    def serve_h2(conn, number):
        session = h2.connection.H2Connection(config=h2.config.H2Configuration(client_side=False))
        session.initiate_connection()
        conn.sendall(session.data_to_send())
        requests = {}
        while True:
            data = conn.recv(65536)
            if not data:
                return
            for event in session.receive_data(data):
                if isinstance(event, h2.events.RequestReceived):
                    requests[event.stream_id] = dict(event.headers)
                elif isinstance(event, h2.events.DataReceived):
                    session.acknowledge_received_data(event.flow_controlled_length, event.stream_id)
                elif isinstance(event, h2.events.StreamEnded):
                    headers = requests.pop(event.stream_id, {})
                    method = headers.get(b":method", b"?").decode()
                    path = headers.get(b":path", b"?").decode()
                    record("request %d %s %s h2-stream %d" % (number, method, path, event.stream_id))
                    body = answer_body(number, event.stream_id)
                    session.send_headers(event.stream_id, [(":status", "200"), ("content-type", "application/json"),
                                                           ("content-length", str(len(body)))])
                    session.send_data(event.stream_id, body, end_stream=True)
                elif isinstance(event, h2.events.ConnectionTerminated):
                    return
            conn.sendall(session.data_to_send())
    def handle(raw, number):
        try:
            conn = context.wrap_socket(raw, server_side=True)
        except (ssl.SSLError, OSError):
            record("handshake-failed %d" % number)
            raw.close()
            return
        protocol = conn.selected_alpn_protocol() or "http/1.1"
        record("tls %d %s" % (number, protocol))
        try:
            (serve_h2 if protocol == "h2" else serve_http1)(conn, number)
        except (ssl.SSLError, OSError):
            pass
        finally:
            conn.close()
    serve_forever(handle)
    """#

    /// Plain HTTP/1.1 that answers the first request on each connection and then, per the argument:
    /// `keep` answers the next ones too; `drop-reused` reads the next request whole and closes without an answer
    /// (a server closing an idle keep-alive connection just as a request arrives); `silent` never answers at all.
    /// Events: `accept N`, `answered N METHOD TARGET`, `dropped N METHOD TARGET`, `unanswered N METHOD TARGET`.
    public static let plainServer = prelude + #"""
    mode = sys.argv[2]
    def handle(conn, number):
        stream = conn.makefile("rb")
        served = 0
        try:
            while True:
                request = read_request(stream)
                if request is None:
                    return
                served += 1
                if mode == "silent":
                    record("unanswered %d %s %s" % (number, request[0], request[1]))
                    continue
                if served > 1 and mode == "drop-reused":
                    record("dropped %d %s %s" % (number, request[0], request[1]))
                    conn.shutdown(socket.SHUT_RDWR)
                    return
                record("answered %d %s %s" % (number, request[0], request[1]))
                send_answer(conn, answer_body(number, 0))
        except OSError:
            pass
        finally:
            conn.close()
    serve_forever(handle)
    """#

    /// An HTTP proxy that only does `CONNECT` (as for `https://` through `HTTPS_PROXY`), tunnelling to 127.0.0.1.
    /// Events: `accept N`, `CONNECT host:port` (or another method, refused with 405).
    public static let connectProxy = prelude + #"""
    def pipe(source, target):
        try:
            while True:
                data = source.recv(65536)
                if not data:
                    break
                target.sendall(data)
        except OSError:
            pass
        finally:
            try:
                target.shutdown(socket.SHUT_WR)
            except OSError:
                pass
    def handle(client, number):
        head = b""
        while b"\r\n\r\n" not in head:
            data = client.recv(4096)
            if not data:
                client.close()
                return
            head += data
        method, target, _ = head.split(b"\r\n")[0].decode().split(" ", 2)
        record("%s %s" % (method, target))
        if method != "CONNECT":
            client.sendall(b"HTTP/1.1 405 Method Not Allowed\r\nContent-Length: 0\r\n\r\n")
            client.close()
            return
        port = int(target.rsplit(":", 1)[1])
        upstream = socket.create_connection(("127.0.0.1", port))
        client.sendall(b"HTTP/1.1 200 Connection established\r\n\r\n")
        threading.Thread(target=pipe, args=(client, upstream), daemon=True).start()
        pipe(upstream, client)
    serve_forever(handle)
    """#
}
