#!/usr/bin/env python3
"""A Matrix user with end-to-end encryption, for Isthmus's encrypted-room end-to-end tests: matrix-nio 0.26 (PyPI,
with vodozemac: an Olm/Megolm implementation independent of Isthmus's) behind a line protocol.

One JSON request per line on stdin, one JSON answer per line on stdout. The first line written is
{"ready": true, "nio": VERSION}, or {"ready": false, "error": ...} when nio's encryption cannot be imported.
An answer is {"ok": true, ...} or {"ok": false, "error": "ExceptionType: text"}. Requests:
  login {homeserver, user, password, store, device_name?}
                                                 → {user_id, device_id}; its device keys are uploaded, and the
                                                   account's earlier devices of that name deleted
  create_dm {invite, encrypted}                  → {room_id}: a direct chat as Element starts one
  join {room}                                    → {}: joins a room it was invited to (and syncs)
  rotate {room}                                  → {}: drops its outbound room key there; the next send shares a new one
  forwarded_keys {}                              → {count}: room keys sent again on another user's key request
  wait_joined {room, user, timeout}              → {} once `user` joined `room` and its devices are known
  send {room, body}                              → {event_id}: encrypted when the room is (keys shared with every device)
  messages {room, timeout, count, sender}        → {messages: [{sender, body, decrypted, event_id, notice}]} once `count`
                                                   from `sender` (text messages and notices)
  undecryptable {room}                           → {events: [event_id…]}: encrypted events nio could not decrypt
  send_file {room, data, name, mimetype, msgtype?, body?}
                                                 → {event_id, mxc, encrypted_file}: `data` (base64) uploaded and sent as an
                                                   m.image (an image/ mimetype) or m.file, `msgtype` overriding; `body` is
                                                   `name` unless given (a caption: then `filename` is). In an encrypted room
                                                   as Element does (Matrix spec "Sending encrypted attachments"): the upload
                                                   is AES-256-CTR ciphertext and the content has `file` {url, key, iv,
                                                   hashes, v} instead of `url`
  media {room, timeout, count, sender}           → {media: [{sender, event_id, msgtype, body, decrypted, encrypted_file,
                                                   plain_url, data, ciphertext_equals_plaintext, error}]} once `count` from
                                                   `sender` (m.image, m.file, m.audio, m.video): `decrypted` the event came
                                                   encrypted; `encrypted_file`/`plain_url` the content had `file`/`url`; `data`
                                                   (base64) the bytes downloaded from the homeserver, decrypted with `file`'s
                                                   key when it has one (its SHA-256 checked), null with `error` saying why
                                                   when that failed; `ciphertext_equals_plaintext` whether the stored bytes are
                                                   those bytes as they are
  send_raw {room, type, content}                 → {event_id}: any event as it is, encrypted when the room is, as Element
                                                   does (an m.reaction too, which nio alone would send in the clear);
                                                   `m.relates_to` is copied in the clear beside the ciphertext
  redact {room, event_id, reason?}               → {event_id}: a redaction (never encrypted)
  events {room, timeout, count, sender?, types?} → {events: [{event_id, sender, type, content, decrypted, redacted}]} once
                                                   `count` timeline events (from `sender`, of one of `types`) came: every
                                                   timeline event nio saw in the room, in order, as decrypted where it
                                                   could be (`type` and `content` the decrypted ones, `m.relates_to`
                                                   included; an event it could not decrypt stays `m.room.encrypted`, its
                                                   decryption tried again at each request); `decrypted` it came encrypted
                                                   and was decrypted; `redacted` a redaction of it was seen or it came
                                                   redacted

Between requests the client keeps syncing, as a running client does, and answers a key request (`m.room_key_request`)
from another user's device when its own outbound session was shared with that device, as Element (matrix-rust-sdk)
does: the session goes back as `m.forwarded_room_key` over Olm. nio alone answers only its own user's devices.
"""
import asyncio
import base64
import importlib.metadata
import io
import json
import logging
import sys
import time
import urllib.parse
import urllib.request
import uuid

DEVICE_NAME = "isthmus e2e (nio)"


async def main() -> None:
    # nio warns about every event it cannot decrypt (a test user's earlier rooms are full of them): errors only.
    logging.getLogger("nio").setLevel(logging.ERROR)
    try:
        from nio import AsyncClient, AsyncClientConfig, MegolmEvent, RoomMessageNotice, RoomMessageText, RoomPreset
        from nio import BadEvent, DownloadResponse, Event, RedactedEvent, RedactionEvent, UnknownBadEvent, UploadResponse
        from nio import Api, RoomSendResponse
        from nio.crypto.attachments import decrypt_attachment
        from nio.events.room_events import RoomEncryptedMedia, RoomMessageMedia
        import nio.crypto  # noqa: F401  (fails without vodozemac)
    except ImportError as error:
        print(json.dumps({"ready": False, "error": f"cannot import nio with encryption: {error}"}), flush=True)
        return
    print(json.dumps({"ready": True, "nio": importlib.metadata.version("matrix-nio")}), flush=True)

    state = {"client": None, "messages": {}, "undecryptable": {}, "media": {}, "downloads": {}, "timeline": {}, "redacted": {}}

    def on_message(room, event):
        state["messages"].setdefault(room.room_id, []).append({
            "sender": event.sender, "body": event.body, "decrypted": bool(getattr(event, "decrypted", False)),
            "event_id": event.event_id, "notice": isinstance(event, RoomMessageNotice)})

    def on_megolm(room, event):
        state["undecryptable"].setdefault(room.room_id, []).append(event.event_id)

    def timeline_entry(event):
        """One timeline event as the `events` answer has it, from what nio made of it: for a decrypted event nio's
        `source` is the decrypted JSON (the clear `m.relates_to` merged in when the ciphertext had none); a MegolmEvent is
        one it could not decrypt."""
        source = getattr(event, "source", {}) or {}
        redacted = isinstance(event, RedactedEvent) or "redacted_because" in (source.get("unsigned") or {})
        return {"event_id": source.get("event_id"), "sender": source.get("sender"), "type": source.get("type"),
                "content": source.get("content") or {}, "decrypted": bool(getattr(event, "decrypted", False)),
                "redacted": redacted, "megolm": event if isinstance(event, MegolmEvent) else None}

    def on_timeline(room, event):
        """Every timeline event (any type, and the ones nio found malformed), for `events`; a redaction marks its target."""
        entry = timeline_entry(event)
        if entry["event_id"] is None:
            return
        state["timeline"].setdefault(room.room_id, {})[entry["event_id"]] = entry
        if isinstance(event, RedactionEvent) or entry["type"] == "m.room.redaction":
            target = getattr(event, "redacts", None) or entry["content"].get("redacts") or \
                (getattr(event, "source", {}) or {}).get("redacts")
            if target:
                state["redacted"].setdefault(room.room_id, set()).add(target)

    def retry_undecryptable(client, room_id):
        """Tries again to decrypt what nio could not (its room key may have come since)."""
        entries = state["timeline"].get(room_id, {})
        for event_id, entry in list(entries.items()):
            if entry["megolm"] is None:
                continue
            try:
                decrypted = client.decrypt_event(entry["megolm"])
            except Exception:  # still no key: it stays m.room.encrypted
                continue
            entries[event_id] = {**timeline_entry(decrypted), "event_id": event_id}

    media_types = ("m.image", "m.file", "m.audio", "m.video")

    def on_media(room, event):
        """Media messages as their content came: nio makes an encrypted event's m.image a RoomEncryptedImage only when its
        content has `file`; one with `url` instead fails that schema and comes as a BadEvent, kept here too."""
        source = getattr(event, "source", {}) or {}
        content = source.get("content", {})
        if source.get("type") != "m.room.message" or content.get("msgtype") not in media_types:
            return
        state["media"].setdefault(room.room_id, []).append({
            "sender": event.sender, "event_id": event.event_id, "content": content,
            "decrypted": bool(getattr(event, "decrypted", False))})

    async def download(client, mxc):
        """The stored bytes of `mxc`: nio 0.26 downloads from the authenticated /_matrix/client/v1/media endpoint
        (Synapse 1.163 serves new uploads only there); the same request by hand when nio's answer is an error."""
        response = await client.download(mxc=mxc)
        if isinstance(response, DownloadResponse):
            return response.body
        parsed = urllib.parse.urlparse(mxc)
        url = f"{client.homeserver}/_matrix/client/v1/media/download/{parsed.netloc}/{parsed.path.lstrip('/')}"
        request = urllib.request.Request(url, headers={"Authorization": f"Bearer {client.access_token}"})
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(None, lambda: urllib.request.urlopen(request, timeout=30).read())

    async def describe(client, seen):
        """One received media message as the `media` answer has it, its file downloaded (once) and decrypted."""
        content = seen["content"]
        file = content.get("file") if isinstance(content.get("file"), dict) else None
        if seen["event_id"] not in state["downloads"]:
            try:
                if file is not None:
                    stored = await download(client, file["url"])
                    plain = decrypt_attachment(stored, file["key"]["k"], file["hashes"]["sha256"], file["iv"])
                else:
                    stored = await download(client, content["url"])
                    plain = stored
                state["downloads"][seen["event_id"]] = {"data": base64.b64encode(plain).decode(), "error": None,
                                                        "ciphertext_equals_plaintext": stored == plain}
            except Exception as error:  # told in the answer: the Swift side asserts on it
                state["downloads"][seen["event_id"]] = {"data": None, "error": f"{type(error).__name__}: {error}",
                                                        "ciphertext_equals_plaintext": False}
        return {"sender": seen["sender"], "event_id": seen["event_id"], "msgtype": content.get("msgtype"),
                "body": content.get("body"), "decrypted": seen["decrypted"], "encrypted_file": "file" in content,
                "plain_url": "url" in content, **state["downloads"][seen["event_id"]]}

    async def send_as_element(client, room_id, event_type, content):
        """Sends an event as Element does: in an encrypted room every event type is encrypted. nio 0.26's room_send
        sends `m.reaction` in the clear (a pre-MSC1849 rule), so a reaction is encrypted here the way room_send encrypts
        the rest (members loaded, the room key shared, `m.relates_to` copied beside the ciphertext by `encrypt`)."""
        room = client.rooms.get(room_id)
        if event_type != "m.reaction" or room is None or not room.encrypted:
            return await client.room_send(room_id, event_type, content, ignore_unverified_devices=True)
        if not room.members_synced:
            await client.joined_members(room_id)
            if client.should_query_keys:
                await client.keys_query()
        if client.olm.should_share_group_session(room_id):
            await client.share_group_session(room_id, ignore_unverified_devices=True)
        encrypted_type, encrypted = client.encrypt(room_id, event_type, content)
        method, path, data = Api.room_send(client.access_token, room_id, encrypted_type, encrypted, uuid.uuid4())
        return await client._send(RoomSendResponse, method, path, data, (room_id,))

    async def forget_earlier_devices(client, user, password, name):
        """Deletes the devices of this name that earlier runs of this script left on the account: a test bed's user otherwise collects
        one per test, every message's room key goes to all of them, and nio then sends it in several requests at once —
        which Synapse 1.163's appservice to-device stream can race past (a message to a ghost skipped)."""
        listed = await client.devices()
        earlier = [d.id for d in getattr(listed, "devices", []) if d.id != client.device_id and d.display_name == name]
        if not earlier:
            return
        first = await client.delete_devices(earlier)
        session = getattr(first, "session", None)
        if session is not None:
            await client.delete_devices(earlier, auth={"type": "m.login.password", "session": session, "password": password,
                                                       "identifier": {"type": "m.id.user", "user": user}})

    async def sync(client):
        response = await client.sync(timeout=500, full_state=False)
        if hasattr(response, "transport_response") and not hasattr(response, "next_batch"):
            raise RuntimeError(f"sync failed: {response}")
        if client.should_upload_keys:
            await client.keys_upload()
        if client.should_query_keys:
            await client.keys_query()
        if client.outgoing_to_device_messages:
            await client.send_to_device_messages()

    def answer_key_requests_of_other_users(client):
        """nio queues every key request and, for another user's device, drops it (`_collect_single_key_share`). Element
        (matrix-rust-sdk) shares the session again when its outbound session went to that device: so does this."""
        olm = client.olm
        own = olm._collect_single_key_share

        def collect(event):
            if event.sender == client.user_id:
                return own(event)
            outbound = olm.outbound_group_sessions.get(event.room_id)
            if outbound is None or outbound.id != event.session_id \
                    or (event.sender, event.requesting_device_id) not in outbound.users_shared_with:
                return True
            group = olm.inbound_group_store.get(event.room_id, event.sender_key, event.session_id)
            try:
                device = olm.device_store[event.sender][event.requesting_device_id]
            except KeyError:
                return True
            session = olm.session_store.get(device.curve25519)
            if group is not None and session is not None:
                olm.outgoing_to_device_messages.append(olm._encrypt_forwarding_key(event.room_id, group, session, device))
                state["forwarded"] = state.get("forwarded", 0) + 1
            return True

        olm._collect_single_key_share = collect

    async def keep_syncing(lock):
        """Syncs between requests (a request holds the lock for all it does)."""
        while True:
            await asyncio.sleep(0.2)
            async with lock:
                if state["client"] is not None:
                    try:
                        await sync(state["client"])
                    except Exception:  # retried at the next turn; a request's own sync reports its errors
                        pass

    async def handle(r):
        op = r["op"]
        client = state["client"]
        if op == "login":
            config = AsyncClientConfig(encryption_enabled=True, store_sync_tokens=True)
            client = AsyncClient(r["homeserver"], r["user"], store_path=r["store"], config=config)
            name = r.get("device_name", DEVICE_NAME)
            response = await client.login(r["password"], device_name=name)
            if not getattr(response, "access_token", None):
                raise RuntimeError(f"login failed: {response}")
            await forget_earlier_devices(client, r["user"], r["password"], name)
            client.add_event_callback(on_message, (RoomMessageText, RoomMessageNotice))
            client.add_event_callback(on_megolm, (MegolmEvent,))
            client.add_event_callback(on_media, (RoomEncryptedMedia, RoomMessageMedia, BadEvent))
            client.add_event_callback(on_timeline, (Event, BadEvent, UnknownBadEvent))
            answer_key_requests_of_other_users(client)
            state["client"] = client
            await sync(client)
            return {"user_id": client.user_id, "device_id": client.device_id}
        if op == "create_dm":
            initial = [{"type": "m.room.encryption", "state_key": "", "content": {"algorithm": "m.megolm.v1.aes-sha2"}}] \
                if r.get("encrypted", True) else []
            response = await client.room_create(is_direct=True, invite=[r["invite"]], preset=RoomPreset.trusted_private_chat,
                                                initial_state=initial)
            if not getattr(response, "room_id", None):
                raise RuntimeError(f"createRoom failed: {response}")
            await sync(client)
            return {"room_id": response.room_id}
        if op == "join":
            response = await client.join(r["room"])
            if not getattr(response, "room_id", None):
                raise RuntimeError(f"join failed: {response}")
            await sync(client)
            return {}
        if op == "rotate":
            client.invalidate_outbound_session(r["room"])
            return {}
        if op == "wait_joined":
            deadline = time.monotonic() + r.get("timeout", 30)
            while time.monotonic() < deadline:
                await sync(client)
                room = client.rooms.get(r["room"])
                if room is not None and r["user"] in room.users and r["user"] not in room.invited_users \
                        and list(client.device_store.active_user_devices(r["user"])):
                    return {}
            raise TimeoutError(f"{r['user']} did not join {r['room']} with a known device")
        if op == "send":
            await sync(client)
            response = await client.room_send(r["room"], "m.room.message", {"msgtype": "m.text", "body": r["body"]},
                                              ignore_unverified_devices=True)
            if not getattr(response, "event_id", None):
                raise RuntimeError(f"send failed: {response}")
            return {"event_id": response.event_id}
        if op == "messages":
            deadline = time.monotonic() + r.get("timeout", 30)
            while True:
                found = [m for m in state["messages"].get(r["room"], []) if m["sender"] == r["sender"]]
                if len(found) >= r.get("count", 1) or time.monotonic() >= deadline:
                    return {"messages": found}
                await sync(client)
        if op == "send_file":
            await sync(client)
            data = base64.b64decode(r["data"])
            room = client.rooms.get(r["room"])
            if room is None:
                raise ValueError(f"{r['room']} is not a room of {client.user_id}'s")
            encrypt = room.encrypted
            uploaded, keys = await client.upload(io.BytesIO(data), content_type=r["mimetype"], filename=r["name"],
                                                 encrypt=encrypt, filesize=len(data))
            if not isinstance(uploaded, UploadResponse):
                raise RuntimeError(f"upload failed: {uploaded}")
            msgtype = r.get("msgtype") or ("m.image" if r["mimetype"].startswith("image/") else "m.file")
            content = {"msgtype": msgtype, "body": r.get("body") or r["name"],
                       "info": {"mimetype": r["mimetype"], "size": len(data)}}
            if r.get("body") is not None:
                content["filename"] = r["name"]
            if encrypt:
                content["file"] = {"url": uploaded.content_uri, "key": keys["key"], "iv": keys["iv"],
                                   "hashes": keys["hashes"], "v": keys["v"]}
            else:
                content["url"] = uploaded.content_uri
            response = await client.room_send(r["room"], "m.room.message", content, ignore_unverified_devices=True)
            if not getattr(response, "event_id", None):
                raise RuntimeError(f"send failed: {response}")
            return {"event_id": response.event_id, "mxc": uploaded.content_uri, "encrypted_file": encrypt}
        if op == "media":
            deadline = time.monotonic() + r.get("timeout", 30)
            while True:
                found = [m for m in state["media"].get(r["room"], []) if m["sender"] == r["sender"]]
                if len(found) >= r.get("count", 1) or time.monotonic() >= deadline:
                    return {"media": [await describe(client, m) for m in found]}
                await sync(client)
        if op == "send_raw":
            await sync(client)
            response = await send_as_element(client, r["room"], r["type"], r["content"])
            if not getattr(response, "event_id", None):
                raise RuntimeError(f"send failed: {response}")
            return {"event_id": response.event_id}
        if op == "redact":
            response = await client.room_redact(r["room"], r["event_id"], reason=r.get("reason"))
            if not getattr(response, "event_id", None):
                raise RuntimeError(f"redact failed: {response}")
            return {"event_id": response.event_id}
        if op == "events":
            deadline = time.monotonic() + r.get("timeout", 30)
            types = r.get("types")
            while True:
                retry_undecryptable(client, r["room"])
                redacted = state["redacted"].get(r["room"], set())
                found = [{"event_id": e["event_id"], "sender": e["sender"], "type": e["type"], "content": e["content"],
                          "decrypted": e["decrypted"], "redacted": e["redacted"] or e["event_id"] in redacted}
                         for e in state["timeline"].get(r["room"], {}).values()
                         if r.get("sender") in (None, e["sender"]) and (types is None or e["type"] in types)]
                if len(found) >= r.get("count", 1) or time.monotonic() >= deadline:
                    return {"events": found}
                await sync(client)
        if op == "forwarded_keys":
            return {"count": state.get("forwarded", 0)}
        if op == "undecryptable":
            await sync(client)
            return {"events": state["undecryptable"].get(r["room"], [])}
        raise ValueError(f"unknown op {op}")

    loop = asyncio.get_running_loop()
    lock = asyncio.Lock()
    background = asyncio.create_task(keep_syncing(lock))
    while True:
        line = await loop.run_in_executor(None, sys.stdin.readline)
        if not line:
            break
        async with lock:
            try:
                answer = {"ok": True, **(await handle(json.loads(line)))}
            except Exception as error:  # every failure is an answer: the Swift side asserts on it
                answer = {"ok": False, "error": f"{type(error).__name__}: {error}"}
        print(json.dumps(answer), flush=True)
    background.cancel()
    if state["client"] is not None:
        await state["client"].close()


if __name__ == "__main__":
    asyncio.run(main())
