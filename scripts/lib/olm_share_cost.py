#!/usr/bin/env python3
"""What one device per ghost costs a Matrix client (issue 30): the first message a Matrix user sends in an encrypted
room bridged to a MUC of N occupants shares its room key with N ghost devices — N one-time keys claimed, N new Olm
sessions, N Olm messages. This measures the client-side crypto with vodozemac 0.10 (the library Element uses) and
the size of the to-device payload, on this machine. Usage: olm_share_cost.py [N] (default 200).
"""
import base64
import json
import sys
import time

import vodozemac as v


def main() -> None:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 200
    ghosts = []
    for _ in range(n):
        account = v.Account()
        account.generate_one_time_keys(1)
        ghosts.append((account.curve25519_key, next(iter(account.one_time_keys.values()))))
    sender = v.Account()
    group = v.GroupSession()
    room_key = {"type": "m.room_key", "content": {"algorithm": "m.megolm.v1.aes-sha2", "room_id": "!" + "r" * 43 + ":example.org",
                                                  "session_id": group.session_id, "session_key": group.session_key.to_base64()},
                "sender": "@alice:example.org", "sender_device": "ABCDEFGHIJ", "keys": {"ed25519": sender.ed25519_key.to_base64()},
                "recipient": "@_xmpp_" + "x" * 60 + ":example.org", "recipient_keys": {"ed25519": "k" * 43}}
    plaintext = json.dumps(room_key).encode()
    start = time.perf_counter()
    messages = {}
    for index, (identity, one_time) in enumerate(ghosts):
        session = sender.create_outbound_session(identity, one_time)
        kind, body = session.encrypt(plaintext).to_parts()
        messages[f"DEVICE{index}"] = {"algorithm": "m.olm.v1.curve25519-aes-sha2", "sender_key": sender.curve25519_key.to_base64(),
                                      "ciphertext": {identity.to_base64(): {"type": kind, "body": base64.b64encode(body).decode().rstrip("=")}}}
    elapsed = time.perf_counter() - start
    payload = len(json.dumps({"messages": {"@_xmpp_ghost:example.org": messages}}).encode())
    print(json.dumps({"devices": n, "crypto_ms": round(elapsed * 1000, 1), "per_device_ms": round(elapsed * 1000 / n, 3),
                      "to_device_bytes": payload, "per_device_bytes": payload // n}))


if __name__ == "__main__":
    main()
