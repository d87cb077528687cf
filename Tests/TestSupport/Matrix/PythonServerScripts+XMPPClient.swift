extension PythonServerScripts {
    /// A minimal XMPP client-to-server endpoint in Python (an implementation independent of ours) for the client
    /// connection's TLS and SASL: STARTTLS (`starttls`) or TLS from the first byte (`direct`), with `cert.pem`/`key.pem`
    /// from the scratch folder and ALPN `xmpp-client`; then SCRAM-SHA-1(-PLUS) with `tls-server-end-point` channel
    /// binding checked against its own certificate, a bind, and pings answered. Arguments: the mode, the user, the
    /// password. Events per connection N: `tls N VERSION ALPN`, `auth N MECHANISM`, `binding N ok|mismatch`,
    /// `sasl N ok|failed`, `bound N`, `ping N`.
    ///
    /// Mode `sasl2` (direct TLS): SASL2 (XEP-0388) with Bind2 and XEP-0198 inline and FAST (XEP-0484) offering
    /// HT-SHA-256-ENDP and -NONE, as trunk Prosody's mod_sasl2_fast does it: a token issued on `<request-token>`, an HT
    /// login checked (draft-schmaus-kitten-sasl-ht: HMAC of "Initiator" and the certificate's hash) and answered with
    /// the responder HMAC and a rotated token; a file `revoked` in the scratch folder makes it forget every token
    /// (`credentials-expired` then). More events: `from N JID`, `agent N ID`, `token N SECRET MECHANISM`,
    /// `ht N MECHANISM ok|refused COUNT`.
    public static let xmppClientServer = #"""
    import base64, hashlib, hmac, os, re, socket, ssl, sys, threading
    directory, mode, user, password = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4]
    lock = threading.Lock()
    def record(line):
        with lock:
            with open(os.path.join(directory, "events"), "a") as events:
                events.write(line + "\n")
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(os.path.join(directory, "cert.pem"), os.path.join(directory, "key.pem"))
    context.set_alpn_protocols(["xmpp-client"])
    # RFC 5929: the certificate's hash (its signature uses SHA-256).
    end_point = hashlib.sha256(ssl.PEM_cert_to_DER_cert(open(os.path.join(directory, "cert.pem")).read())).digest()
    SASL = "urn:ietf:params:xml:ns:xmpp-sasl"
    SASL2 = "urn:xmpp:sasl:2"
    tokens, issued = {}, [0]  # FAST: secret -> mechanism
    class Conn:
        def __init__(self, sock):
            self.sock, self.buf = sock, b""
        def expect(self, pattern):
            while True:
                match = re.search(pattern, self.buf, re.S)
                if match:
                    self.buf = self.buf[match.end():]
                    return match
                data = self.sock.recv(4096)
                if not data:
                    raise EOFError()
                self.buf += data
        def send(self, text):
            self.sock.sendall(text.encode())
    def open_stream(conn, number, features):
        header = conn.expect(rb"<stream:stream[^>]*>")
        sender = re.search(rb" from='([^']+)'", header.group(0))
        if sender:
            record("from %d %s" % (number, sender.group(1).decode()))
        conn.send("<?xml version='1.0'?><stream:stream xmlns='jabber:client' xmlns:stream='http://etherx.jabber.org/streams' "
                  "id='s%d' from='localhost' version='1.0'><stream:features>%s</stream:features>" % (number, features))
    def wrap(raw, number):
        conn = context.wrap_socket(raw, server_side=True)
        record("tls %d %s %s" % (number, conn.version(), conn.selected_alpn_protocol() or "none"))
        return Conn(conn)
    def handle(raw, number):
        try:
            conn = wrap(raw, number) if mode in ("direct", "sasl2") else Conn(raw)
            if mode == "starttls":
                open_stream(conn, number, "<starttls xmlns='urn:ietf:params:xml:ns:xmpp-tls'><required/></starttls>")
                conn.expect(rb"<starttls[^>]*/>")
                conn.send("<proceed xmlns='urn:ietf:params:xml:ns:xmpp-tls'/>")
                conn = wrap(raw, number)
            if mode == "sasl2":
                return sasl2(conn, number)
            open_stream(conn, number, "<mechanisms xmlns='%s'><mechanism>SCRAM-SHA-1-PLUS</mechanism><mechanism>SCRAM-SHA-1</mechanism>"
                        "</mechanisms><sasl-channel-binding xmlns='urn:xmpp:sasl-cb:0'><channel-binding type='tls-server-end-point'/>"
                        "</sasl-channel-binding>" % SASL)
            auth = conn.expect(rb"<auth[^>]*mechanism='([^']+)'[^>]*>([^<]*)</auth>")
            record("auth %d %s" % (number, auth.group(1).decode()))
            verifier = scram(conn, number, base64.b64decode(auth.group(2)), SASL)
            if not verifier:
                conn.send("<failure xmlns='%s'><not-authorized/></failure>" % SASL)
                return
            conn.send("<success xmlns='%s'>%s</success>" % (SASL, base64.b64encode(b"v=" + verifier).decode()))
            open_stream(conn, number, "<bind xmlns='urn:ietf:params:xml:ns:xmpp-bind'/>")
            iq = conn.expect(rb"<iq[^>]*id='([^']+)'[^>]*>.*?</iq>")
            conn.send("<iq type='result' id='%s'><bind xmlns='urn:ietf:params:xml:ns:xmpp-bind'><jid>%s@localhost/tls</jid></bind></iq>"
                      % (iq.group(1).decode(), user))
            record("bound %d" % number)
            while True:
                iq = conn.expect(rb"<iq[^>]*id='([^']+)'[^>]*>.*?</iq>")
                conn.send("<iq type='result' id='%s' from='localhost'/>" % iq.group(1).decode())
                record("ping %d" % number)
        except (EOFError, ssl.SSLError, OSError) as error:
            record("ended %d %s" % (number, type(error).__name__))
    def scram(conn, number, first, ns):
        """SCRAM-SHA-1(-PLUS) after client-first: the challenge, the proof and binding checked; the verifier, or None."""
        flag, authzid, bare = first.split(b",", 2)
        gs2 = flag + b"," + authzid + b","
        nonce = re.search(rb"r=([^,]+)", bare).group(1) + b"-server"
        salt, iterations = b"isthmus-salt", 4096
        server_first = b"r=%s,s=%s,i=%d" % (nonce, base64.b64encode(salt), iterations)
        conn.send("<challenge xmlns='%s'>%s</challenge>" % (ns, base64.b64encode(server_first).decode()))
        final = base64.b64decode(conn.expect(rb"<response[^>]*>([^<]*)</response>").group(1))
        without_proof, _, proof = final.rpartition(b",p=")
        binding = base64.b64decode(re.match(rb"c=([^,]+)", final).group(1))
        bound = binding == gs2 + (end_point if flag == b"p=tls-server-end-point" else b"")
        record("binding %d %s" % (number, "ok" if bound else "mismatch"))
        salted = hashlib.pbkdf2_hmac("sha1", password.encode(), salt, iterations)
        stored = hashlib.sha1(hmac.new(salted, b"Client Key", "sha1").digest()).digest()
        message = bare + b"," + server_first + b"," + without_proof
        signature = hmac.new(stored, message, "sha1").digest()
        client_key = bytes(a ^ b for a, b in zip(base64.b64decode(proof), signature))
        if not bound or hashlib.sha1(client_key).digest() != stored:
            record("sasl %d failed" % number)
            return None
        record("sasl %d ok" % number)
        return base64.b64encode(hmac.new(hmac.new(salted, b"Server Key", "sha1").digest(), message, "sha1").digest())
    def issue(number, mechanism):
        with lock:
            issued[0] += 1
            secret = "secret-token:fast-%d" % issued[0]
            tokens[secret] = mechanism
        record("token %d %s %s" % (number, secret, mechanism))
        return "<token xmlns='urn:xmpp:fast:0' expiry='2099-01-01T00:00:00Z' token='%s'/>" % secret
    def sasl2(conn, number):
        open_stream(conn, number, "<authentication xmlns='%s'><mechanism>SCRAM-SHA-1-PLUS</mechanism><mechanism>SCRAM-SHA-1</mechanism>"
                    "<inline><sm xmlns='urn:xmpp:sm:3'/><bind xmlns='urn:xmpp:bind:0'><inline><feature var='urn:xmpp:sm:3'/></inline>"
                    "</bind><fast xmlns='urn:xmpp:fast:0'><mechanism>HT-SHA-256-ENDP</mechanism><mechanism>HT-SHA-256-NONE</mechanism>"
                    "</fast></inline></authentication><sasl-channel-binding xmlns='urn:xmpp:sasl-cb:0'>"
                    "<channel-binding type='tls-server-end-point'/></sasl-channel-binding>" % SASL2)
        auth = conn.expect(rb"<authenticate[^>]*mechanism='([^']+)'[^>]*>(.*?)</authenticate>")
        mechanism, body = auth.group(1).decode(), auth.group(2)
        agent = re.search(rb"<user-agent[^>]*id='([^']+)'", body)
        record("agent %d %s" % (number, agent.group(1).decode() if agent else "none"))
        first = base64.b64decode(re.search(rb"<initial-response[^>]*>([^<]*)<", body).group(1))
        token = ""
        if mechanism.startswith("HT-"):
            if os.path.exists(os.path.join(directory, "revoked")):
                with lock:
                    tokens.clear()
            cb = end_point if mechanism == "HT-SHA-256-ENDP" else b""
            _, _, hashed = first.partition(b"\0")
            with lock:
                known = [t for t, m in tokens.items() if m == mechanism and hmac.compare_digest(
                    hmac.new(t.encode(), b"Initiator" + cb, "sha256").digest(), hashed)]
            count = re.search(rb"<fast[^>]*count='([0-9]+)'", body)
            verdict = "ok" if known else "refused"
            record("ht %d %s %s %s" % (number, mechanism, verdict, count.group(1).decode() if count else "none"))
            if not known:
                conn.send("<failure xmlns='%s'><credentials-expired xmlns='%s'/></failure>" % (SASL2, SASL))
                return
            data = hmac.new(known[0].encode(), b"Responder" + cb, "sha256").digest()
            token = issue(number, mechanism)  # rotated on every use
        else:
            record("auth %d %s" % (number, mechanism))
            verifier = scram(conn, number, first, SASL2)
            if not verifier:
                conn.send("<failure xmlns='%s'><not-authorized xmlns='%s'/></failure>" % (SASL2, SASL))
                return
            data = b"v=" + verifier
            requested = re.search(rb"<request-token[^>]*mechanism='([^']+)'", body)
            if requested:
                token = issue(number, requested.group(1).decode())
        enabled = "<enabled xmlns='urn:xmpp:sm:3' id='sm-%d' resume='true'/>" % number if b"<enable " in body else ""
        conn.send("<success xmlns='%s'><additional-data>%s</additional-data><authorization-identifier>%s@localhost/Isthmus~%d"
                  "</authorization-identifier><bound xmlns='urn:xmpp:bind:0'>%s</bound>%s</success><stream:features/>"
                  % (SASL2, base64.b64encode(data).decode(), user, number, enabled, token))
        record("bound %d" % number)
        while True:
            match = conn.expect(rb"<iq[^>]*id='([^']+)'[^>]*>.*?</iq>|</stream:stream>")
            if match.group(0) == b"</stream:stream>":
                conn.send("</stream:stream>")
                raise EOFError()
            conn.send("<iq type='result' id='%s' from='localhost'/>" % match.group(1).decode())
            record("ping %d" % number)
    listener = socket.socket()
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(("127.0.0.1", 0))
    listener.listen(16)
    print(listener.getsockname()[1], flush=True)
    number = 0
    while True:
        raw, _ = listener.accept()
        number += 1
        threading.Thread(target=handle, args=(raw, number), daemon=True).start()
    """#
}
