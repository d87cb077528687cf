#!/usr/bin/env python3
"""The vodozemac oracle of MatrixCryptoTests: drives vodozemac (PyPI, the Rust Olm/Megolm that Element uses) for
the Swift tests, which compare it with Isthmus's own Olm and Megolm.

Line protocol: one JSON request per line on stdin, one JSON answer per line on stdout. The first line written is
{"ready": true, "vodozemac": VERSION}, or {"ready": false, "error": ...} when vodozemac cannot be imported.
Objects (accounts, sessions) live in this process under names the caller chooses. Bytes travel as unpadded
base64, as Matrix writes them. An answer is {"ok": true, ...} or {"ok": false, "error": "ExceptionType: text"}.
"""
import base64
import importlib.metadata
import json
import sys


def b64encode(data: bytes) -> str:
    return base64.b64encode(data).decode().rstrip("=")


def b64decode(text: str) -> bytes:
    return base64.b64decode(text + "=" * (-len(text) % 4))


def main() -> None:
    try:
        import vodozemac as v
    except ImportError as error:
        print(json.dumps({"ready": False, "error": f"cannot import vodozemac: {error}"}), flush=True)
        return
    print(json.dumps({"ready": True, "vodozemac": importlib.metadata.version("vodozemac")}), flush=True)

    objects = {}

    def olm_message(request):
        return v.AnyOlmMessage.from_parts(request["type"], b64decode(request["body"]))

    def handle(r):
        op = r["op"]
        if op == "account.new":
            account = objects[r["name"]] = v.Account()
            return {"curve25519": account.curve25519_key.to_base64(), "ed25519": account.ed25519_key.to_base64()}
        if op == "account.one_time_keys":
            account = objects[r["name"]]
            account.generate_one_time_keys(r["count"])
            keys = {key_id: key.to_base64() for key_id, key in account.one_time_keys.items()}
            account.mark_keys_as_published()
            return {"keys": keys}
        if op == "account.fallback_key":
            account = objects[r["name"]]
            account.generate_fallback_key()
            keys = {key_id: key.to_base64() for key_id, key in account.fallback_key.items()}
            account.mark_keys_as_published()
            return {"keys": keys}
        if op == "account.sign":
            return {"signature": objects[r["name"]].sign(b64decode(r["message"])).to_base64()}
        if op == "account.outbound":
            session = objects[r["session"]] = objects[r["name"]].create_outbound_session(
                v.Curve25519PublicKey.from_base64(r["identity_key"]), v.Curve25519PublicKey.from_base64(r["one_time_key"]))
            return {"session_id": session.session_id}
        if op == "account.inbound":
            pre_key = olm_message(r).to_pre_key()
            if pre_key is None:
                raise ValueError("not a pre-key message")
            session, plaintext = objects[r["name"]].create_inbound_session(
                v.Curve25519PublicKey.from_base64(r["identity_key"]), pre_key)
            objects[r["session"]] = session
            return {"session_id": session.session_id, "plaintext": b64encode(plaintext)}
        if op == "session.encrypt":
            message_type, body = objects[r["session"]].encrypt(b64decode(r["plaintext"])).to_parts()
            return {"type": message_type, "body": b64encode(body)}
        if op == "session.decrypt":
            return {"plaintext": b64encode(objects[r["session"]].decrypt(olm_message(r)))}
        if op == "session.matches":
            pre_key = olm_message(r).to_pre_key()
            return {"matches": pre_key is not None and objects[r["session"]].session_matches(pre_key)}
        if op == "group.new":
            group = objects[r["name"]] = v.GroupSession()
            return {"session_id": group.session_id, "session_key": group.session_key.to_base64()}
        if op == "group.encrypt":
            group = objects[r["name"]]
            message = group.encrypt(b64decode(r["plaintext"]))
            return {"ciphertext": message.to_base64(), "message_index": message.message_index()}
        if op == "group.session_key":
            group = objects[r["name"]]
            return {"session_key": group.session_key.to_base64(), "message_index": group.message_index}
        if op == "inbound.new":
            inbound = objects[r["name"]] = v.InboundGroupSession(v.SessionKey(r["session_key"]))
            return {"session_id": inbound.session_id, "first_known_index": inbound.first_known_index}
        if op == "inbound.import":
            inbound = objects[r["name"]] = v.InboundGroupSession.import_session(v.ExportedSessionKey(r["exported"]))
            return {"session_id": inbound.session_id, "first_known_index": inbound.first_known_index}
        if op == "inbound.decrypt":
            decrypted = objects[r["name"]].decrypt(v.MegolmMessage.from_base64(r["ciphertext"]))
            return {"plaintext": b64encode(decrypted.plaintext), "message_index": decrypted.message_index}
        if op == "inbound.export":
            exported = objects[r["name"]].export_at(r["index"])
            return {"exported": None if exported is None else exported.to_base64()}
        if op == "ed25519.verify":
            try:
                v.Ed25519PublicKey.from_base64(r["key"]).verify_signature(
                    b64decode(r["message"]), v.Ed25519Signature.from_base64(r["signature"]))
                return {"valid": True}
            except v.SignatureException:
                return {"valid": False}
        raise ValueError(f"unknown op {op}")

    for line in sys.stdin:
        try:
            answer = {"ok": True, **handle(json.loads(line))}
        except Exception as error:  # every failure is an answer: the Swift side asserts on it
            answer = {"ok": False, "error": f"{type(error).__name__}: {error}"}
        print(json.dumps(answer), flush=True)


if __name__ == "__main__":
    main()
