extension PythonServerScripts {
    /// A line-based server for the TLS client (`TLSStream`), with `cert.pem`/`key.pem` from the scratch folder and ALPN
    /// `xmpp-client`. Arguments: the highest TLS version (`1.2`, `1.3` or `any`), then `starttls` (per connection, read a
    /// plaintext line; `starttls` is answered `proceed`, then TLS starts; anything else is answered `no` and the
    /// connection closed) or `direct` (TLS from the first byte). Inside TLS every line is echoed in upper case.
    /// Events: `accept N`, `plain N LINE`, then `tls N VERSION ALPN` (ALPN `none` when not agreed) or
    /// `handshake-failed N REASON`, then `echo N LINE` per line.
    public static let startTLSServer = #"""
    import os, socket, ssl, sys, threading
    directory, maximum, mode = sys.argv[1], sys.argv[2], sys.argv[3]
    lock = threading.Lock()
    def record(line):
        with lock:
            with open(os.path.join(directory, "events"), "a") as events:
                events.write(line + "\n")
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(os.path.join(directory, "cert.pem"), os.path.join(directory, "key.pem"))
    context.set_alpn_protocols(["xmpp-client"])
    if maximum == "1.2":
        context.maximum_version = ssl.TLSVersion.TLSv1_2
    elif maximum == "1.3":
        context.maximum_version = ssl.TLSVersion.TLSv1_3
    listener = socket.socket()
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(("127.0.0.1", 0))
    listener.listen(128)
    def read_plain_line(raw):
        # A byte at a time: nothing after the line may be taken from the socket before TLS wraps it.
        line = b""
        while not line.endswith(b"\n"):
            data = raw.recv(1)
            if not data:
                return None
            line += data
        return line.decode().strip()
    def handle(raw, number):
        try:
            if mode == "starttls":
                line = read_plain_line(raw)
                if line is None:
                    raw.close()
                    return
                record("plain %d %s" % (number, line))
                if line != "starttls":
                    raw.sendall(b"no\n")
                    raw.close()
                    return
                raw.sendall(b"proceed\n")
            try:
                conn = context.wrap_socket(raw, server_side=True)
            except (ssl.SSLError, OSError) as error:
                record("handshake-failed %d %s" % (number, getattr(error, "reason", None) or error))
                raw.close()
                return
            record("tls %d %s %s" % (number, conn.version(), conn.selected_alpn_protocol() or "none"))
            stream = conn.makefile("rb")
            while True:
                line = stream.readline()
                if not line:
                    break
                record("echo %d %s" % (number, line.decode().strip()))
                conn.sendall(line.upper())
            conn.close()
        except (ssl.SSLError, OSError):
            pass
    print(listener.getsockname()[1], flush=True)
    number = 0
    while True:
        raw, _ = listener.accept()
        number += 1
        record("accept %d" % number)
        threading.Thread(target=handle, args=(raw, number), daemon=True).start()
    """#
}
