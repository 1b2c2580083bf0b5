"""`GET /api/signing-key`: the public key a finished record's signature verifies with (issue 31
item 7; docs/organizer/records.md)."""
from __future__ import annotations

import base64
import json

import httpx

from referee.server.base import signing


def test_the_web_serves_the_key_that_verifies_records(web):
    """Issue 31 item 7: /api/signing-key answers the algorithm, key id and public key (base64
    and hex), the same key as GetSigningKey, and it verifies a finished match's record (the
    record.json the viewer publishes)."""
    mid, tokens = web.call(web.create(seats=3, seed=31))
    web.call(web.play(mid, tokens, seed=2), timeout=120)
    r = httpx.get(web.base + "/api/signing-key")
    assert r.status_code == 200
    body = r.json()
    raw = base64.b64decode(body["public_key_base64"])
    assert body["algorithm"] == "ed25519" and bytes.fromhex(body["public_key_hex"]) == raw
    assert body["key_id"] == web.service.signing_key.key_id == signing.key_id(raw)
    assert raw == web.service.signing_key.public_key
    record = httpx.get(f"{web.base}/matches/{mid}/record.json")
    assert record.status_code == 200
    assert signing.check_signature(json.loads(record.text), raw) is None
