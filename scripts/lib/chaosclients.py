"""Test clients for scripts/chaos: an XMPP c2s client and a Matrix client, both stdlib only.

Hand-written rather than slixmpp / matrix-nio: the chaos run needs only login, a MUC join, groupchat sends and a MAM
read on one side and sends plus /messages on the other, and keeping it to the standard library lets the script run on
any python3 without the Synapse venv (the same reason scripts/lib/testbed.py's Matrix client is stdlib only).
"""
import base64
import itertools
import json
import socket
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
import xml.etree.ElementTree as ET

from testbed import Matrix as TestBedMatrix
from xml.sax.saxutils import escape, quoteattr

STREAM = "http://etherx.jabber.org/streams"
CLIENT = "jabber:client"
MUC_USER = "http://jabber.org/protocol/muc#user"
MAM = "urn:xmpp:mam:2"
RSM = "http://jabber.org/protocol/rsm"
FORWARD = "urn:xmpp:forward:0"


class ClientError(Exception):
    """A test client could not do what it was asked (connection lost, refused, no answer in time)."""


class XMPPClient:
    """One c2s connection (plain TCP, SASL PLAIN: the test bed allows both on loopback). A reader thread parses the
    stream; answers to our IQs and MAM results are kept, everything else is dropped. Not reconnecting by itself."""

    def __init__(self, port, user, password, domain="localhost", timeout=10):
        self.domain = domain
        self.timeout = timeout
        self.lock = threading.Condition()
        self.answers = {}       # iq id -> element
        self.mam = {}           # query id -> [element]
        self.presences = []     # self-presences and presence errors of joins
        self.closed = False
        self.ids = itertools.count(1)
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=timeout)
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self._open_stream()
        features = self._next_stanza()
        if features is None or features.tag != f"{{{STREAM}}}features":
            raise ClientError("no stream features")
        credentials = base64.b64encode(b"\0" + user.encode() + b"\0" + password.encode()).decode()
        self._write(f"<auth xmlns='urn:ietf:params:xml:ns:xmpp-sasl' mechanism='PLAIN'>{credentials}</auth>")
        outcome = self._next_stanza()
        if outcome is None or not outcome.tag.endswith("}success"):
            raise ClientError(f"SASL PLAIN refused for {user}")
        self._open_stream()
        self._next_stanza()  # features
        self._write("<iq type='set' id='bind'><bind xmlns='urn:ietf:params:xml:ns:xmpp-bind'>"
                    f"<resource>chaos-{time.monotonic_ns() % 1000000}</resource></bind></iq>")
        bound = self._next_stanza()
        jid = bound.find(".//{urn:ietf:params:xml:ns:xmpp-bind}jid") if bound is not None else None
        if jid is None:
            raise ClientError("resource binding failed")
        self.jid = jid.text
        self.sock.settimeout(None)
        self.reader = threading.Thread(target=self._read_loop, daemon=True)
        self.reader.start()

    # MARK: Stream

    def _open_stream(self):
        self.parser = ET.XMLPullParser(events=("start", "end"))
        self.depth = 0
        self.root = None
        self.pending = []
        self._write(f"<?xml version='1.0'?><stream:stream xmlns='{CLIENT}' xmlns:stream='{STREAM}' "
                    f"to='{self.domain}' version='1.0'>")

    def _write(self, text):
        try:
            self.sock.sendall(text.encode())
        except OSError as error:
            self._mark_closed()
            raise ClientError(f"write failed: {error}")

    def _feed(self, data):
        self.parser.feed(data)
        for event, element in self.parser.read_events():
            if event == "start":
                if self.depth == 0:
                    self.root = element
                self.depth += 1
            else:
                self.depth -= 1
                if self.depth == 1:
                    self.pending.append(element)
                    self.root.remove(element)

    def _next_stanza(self):
        while not self.pending:
            data = self.sock.recv(65536)
            if not data:
                return None
            self._feed(data)
        return self.pending.pop(0)

    def _read_loop(self):
        try:
            while True:
                stanza = self._next_stanza()
                if stanza is None:
                    break
                self._dispatch(stanza)
        except (OSError, ET.ParseError):
            pass
        self._mark_closed()

    def _mark_closed(self):
        with self.lock:
            self.closed = True
            self.lock.notify_all()

    def _dispatch(self, stanza):
        tag = stanza.tag.split("}")[-1]
        with self.lock:
            if tag == "iq" and stanza.get("type") in ("result", "error"):
                self.answers[stanza.get("id")] = stanza
            elif tag == "message":
                result = stanza.find(f"{{{MAM}}}result")
                if result is not None and result.get("queryid") in self.mam:
                    self.mam[result.get("queryid")].append(result)
            elif tag == "presence":
                codes = {status.get("code") for status in stanza.iter(f"{{{MUC_USER}}}status")}
                if stanza.get("type") == "error" or "110" in codes:
                    self.presences.append(stanza)
            self.lock.notify_all()

    def _wait(self, what, predicate, timeout=None):
        deadline = time.monotonic() + (timeout or self.timeout)
        with self.lock:
            while True:
                found = predicate()
                if found is not None:
                    return found
                if self.closed:
                    raise ClientError(f"connection closed while waiting for {what}")
                left = deadline - time.monotonic()
                if left <= 0:
                    raise ClientError(f"no {what} within {timeout or self.timeout} s")
                self.lock.wait(left)

    def iq(self, to, payload, kind="set", timeout=None):
        """Sends an IQ and returns its answer (raises on an error answer)."""
        iq_id = f"q{next(self.ids)}"
        self._write(f"<iq type='{kind}' id='{iq_id}' to={quoteattr(to)}>{payload}</iq>")
        answer = self._wait(f"answer to {iq_id}", lambda: self.answers.pop(iq_id, None), timeout)
        if answer.get("type") == "error":
            raise ClientError(f"{to} answered an error: {ET.tostring(answer).decode()[:300]}")
        return answer

    # MARK: MUC

    def join(self, room, nick, timeout=None):
        """Joins `room` as `nick` without history; submits the instant-room form when the join created the room."""
        full = f"{room}/{nick}"
        self._write(f"<presence to={quoteattr(full)}><x xmlns='http://jabber.org/protocol/muc'>"
                    "<history maxstanzas='0'/></x></presence>")

        def answered():
            for index, presence in enumerate(self.presences):
                if presence.get("from") == full:
                    return self.presences.pop(index)
            return None
        presence = self._wait(f"self-presence in {room}", answered, timeout)
        if presence.get("type") == "error":
            raise ClientError(f"join of {room} refused")
        codes = {status.get("code") for status in presence.iter(f"{{{MUC_USER}}}status")}
        if "201" in codes:
            self.iq(room, "<query xmlns='http://jabber.org/protocol/muc#owner'><x xmlns='jabber:x:data' type='submit'/></query>")

    def groupchat(self, room, body, message_id):
        self._write(f"<message type='groupchat' to={quoteattr(room)} id={quoteattr(message_id)}>"
                    f"<body>{escape(body)}</body></message>")

    def archive(self, room, page=100, timeout=30):
        """Every groupchat message of `room`'s archive (XEP-0313), oldest first, as (nick, body) pairs."""
        messages, after = [], None
        while True:
            query_id = f"mam{next(self.ids)}"
            with self.lock:
                self.mam[query_id] = []
            rsm = f"<set xmlns='{RSM}'><max>{page}</max>" + (f"<after>{escape(after)}</after>" if after else "") + "</set>"
            answer = self.iq(room, f"<query xmlns='{MAM}' queryid='{query_id}'>{rsm}</query>", timeout=timeout)
            with self.lock:
                results = self.mam.pop(query_id)
            for result in results:
                message = result.find(f"{{{FORWARD}}}forwarded/{{{CLIENT}}}message")
                body = message.find(f"{{{CLIENT}}}body") if message is not None else None
                if body is not None and message.get("type") == "groupchat":
                    messages.append((message.get("from", "").partition("/")[2], body.text or ""))
            fin = answer.find(f"{{{MAM}}}fin")
            last = fin.find(f"{{{RSM}}}set/{{{RSM}}}last") if fin is not None else None
            if fin is None or fin.get("complete") == "true" or last is None or not results:
                return messages
            after = last.text

    def close(self):
        try:
            self.sock.sendall(b"</stream:stream>")
        except OSError:
            pass
        try:
            self.sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        self.sock.close()


class MatrixClient(TestBedMatrix):
    """A Matrix user on the client-server API (password login, as the test bed's), with timeouts per call."""

    def __init__(self, base, user, password):
        super().__init__(base, user, password)
        self.user_id = self.call("GET", "/_matrix/client/v3/account/whoami")["user_id"]

    def call(self, method, path, body=None, timeout=30):
        data = json.dumps(body).encode() if body is not None else (b"{}" if method in ("POST", "PUT") else None)
        request = urllib.request.Request(self.base + path, method=method, data=data)
        request.add_header("Content-Type", "application/json")
        if self.token:
            request.add_header("Authorization", "Bearer " + self.token)
        with urllib.request.urlopen(request, timeout=timeout) as answer:
            return json.load(answer)

    def send(self, room, body, txn):
        """PUT /send with transaction id `txn`: retrying with the same id is idempotent (Synapse keeps txn ids)."""
        path = (f"/_matrix/client/v3/rooms/{urllib.parse.quote(room)}/send/m.room.message/"
                f"{urllib.parse.quote(txn)}")
        return self.call("PUT", path, {"msgtype": "m.text", "body": body})["event_id"]

    def timeline(self, room):
        """Every m.room.message of `room` in timeline order, as (sender, body) pairs."""
        events, token = [], None
        while True:
            query = {"dir": "f", "limit": "500"}
            if token:
                query["from"] = token
            answer = self.call("GET", f"/_matrix/client/v3/rooms/{urllib.parse.quote(room)}/messages?"
                               + urllib.parse.urlencode(query))
            for event in answer.get("chunk", []):
                if event.get("type") == "m.room.message":
                    events.append((event.get("sender"), event.get("content", {}).get("body", "")))
            if not answer.get("chunk") or not answer.get("end"):
                return events
            token = answer["end"]


def transient(error):
    """Whether `error` is a server being away (restart) rather than a refusal."""
    if isinstance(error, urllib.error.HTTPError):
        return error.code >= 500 or error.code == 429
    return isinstance(error, (urllib.error.URLError, OSError, ClientError, TimeoutError, ConnectionError))
