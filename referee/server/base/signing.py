"""Signed match records (issue 31 item 7; docs/organizer/records.md).

A finished record is signed once, when the match ends (never per move), with the referee's
Ed25519 key (the ``cryptography`` package). The key is made on the first start in
``<data-dir>/record-signing.key`` (PKCS#8 PEM, mode 0600) and kept; the public key is served
by ``GetSigningKey`` and the web's ``/api/signing-key``. Several referees on one store sign
with one key, as they derive bound seats' tokens from one ``bot-seats.key``: the store keeps
the key's id (never the key), and a referee with another key refuses to start.

**What is signed.** ``canonical(record)``: the record JSON without its ``signature`` member,
encoded as ``json.dumps(record, sort_keys=True, separators=(",", ":"), ensure_ascii=True,
allow_nan=False)`` in UTF-8 (keys sorted, no whitespace, every non-ASCII character escaped as
``\\uXXXX``). Every other field is covered: moves, notes, times, timeout flags, seat names,
versions, the seed and its salt. The record then gains::

    "signature": {"algorithm": "ed25519", "key_id": "<16 hex>", "value": "<base64>"}

``key_id`` is the first 16 hex digits of the SHA-256 of the raw 32-byte public key."""
from __future__ import annotations

import base64
import binascii
import hashlib
import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

ALGORITHM = "ed25519"
KEY_FILE = "record-signing.key"
#: the store's settings row naming the key every referee on it signs with
SETTING = "record_signing_key_id"


def canonical(record: dict[str, Any]) -> bytes:
    """The bytes a record's signature covers: the record without ``signature``, as JSON with
    sorted keys, no whitespace and ASCII only. The record is first taken through JSON once, so
    that what is signed in memory is exactly what a reader of the file gets (tuples become
    lists, integer keys strings)."""
    doc = json.loads(json.dumps(record, allow_nan=False))
    doc.pop("signature", None)
    return json.dumps(doc, sort_keys=True, separators=(",", ":"), ensure_ascii=True,
                      allow_nan=False).encode("utf-8")


def key_id(public_raw: bytes) -> str:
    return hashlib.sha256(public_raw).hexdigest()[:16]


def _raw(public: Ed25519PublicKey) -> bytes:
    return public.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)


@dataclass(frozen=True)
class RecordSigner:
    """The referee's record-signing key."""

    private: Ed25519PrivateKey
    public_raw: bytes
    key_id: str
    path: Path

    def sign(self, record: dict[str, Any]) -> dict[str, Any]:
        """``record`` with its ``signature`` member (a new dict; the record is not changed)."""
        value = self.private.sign(canonical(record))
        return {**record, "signature": {"algorithm": ALGORITHM, "key_id": self.key_id,
                                        "value": base64.b64encode(value).decode("ascii")}}

    def public_json(self) -> dict[str, str]:
        """What ``/api/signing-key`` answers."""
        return {"algorithm": ALGORITHM, "key_id": self.key_id,
                "public_key_base64": base64.b64encode(self.public_raw).decode("ascii"),
                "public_key_hex": self.public_raw.hex()}


def load_signer(data_dir: str | Path) -> RecordSigner:
    """The key in ``<data-dir>/record-signing.key``, made (0600) when there is none. Never
    replaced: an unreadable key file is an OSError naming it (the records it signed verify only
    with it)."""
    path = Path(data_dir) / KEY_FILE
    if not path.exists():
        pem = Ed25519PrivateKey.generate().private_bytes(
            serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption())
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f".{KEY_FILE}.{os.getpid()}.tmp")
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "wb") as f:
            f.write(pem)
            f.flush()
            os.fsync(f.fileno())
        try:
            os.link(tmp, path)  # never over a key another process made meanwhile
        except FileExistsError:
            pass
        except OSError:  # a file system without hard links: a rename, if still none
            if not path.exists():
                os.replace(tmp, path)
        finally:
            tmp.unlink(missing_ok=True)
    try:
        key = serialization.load_pem_private_key(path.read_bytes(), password=None)
    except (OSError, ValueError, TypeError) as exc:
        raise OSError(f"cannot read the record-signing key {path}: {exc}") from None
    if not isinstance(key, Ed25519PrivateKey):
        raise OSError(f"{path} is not an Ed25519 private key")
    raw = _raw(key.public_key())
    return RecordSigner(key, raw, key_id(raw), path)


def check_shared(signer: RecordSigner, store: Any) -> None:
    """Every referee on a store signs with one key: the first one's id is kept in the store's
    settings (the key itself never leaves the data directory); another key refuses the start."""
    if store.shared_value(SETTING, signer.key_id) != signer.key_id:
        raise OSError(f"{signer.path} is not the record-signing key the other referees on this "
                      "store use: copy the first referee's record-signing.key into every "
                      "referee's data directory")


# ---------------------------------------------------------------------------- verification
def public_key_from(data: bytes) -> bytes:
    """A raw 32-byte Ed25519 public key from what a ``--public-key`` file may hold: a PEM
    public key, a PEM private key (a data directory's ``record-signing.key``), the raw 32
    bytes, or 64 hex digits or base64 of them on one line. ValueError if it is none of these."""
    text = data.strip()
    if text.startswith(b"-----BEGIN"):
        if b"PRIVATE KEY" in text:
            private = serialization.load_pem_private_key(text, password=None)
            if not isinstance(private, Ed25519PrivateKey):
                raise ValueError("not an Ed25519 private key")
            return _raw(private.public_key())
        public = serialization.load_pem_public_key(text)
        if not isinstance(public, Ed25519PublicKey):
            raise ValueError("not an Ed25519 public key")
        return _raw(public)
    if len(data) == 32:
        return data
    candidates = []
    try:
        candidates.append(bytes.fromhex(text.decode("ascii")))
    except (UnicodeDecodeError, ValueError):
        pass
    try:
        candidates.append(base64.b64decode(text, validate=True))
    except (binascii.Error, ValueError):
        pass
    for raw in candidates:
        if len(raw) == 32:
            return raw
    raise ValueError("not an Ed25519 public key (PEM, 32 raw bytes, hex or base64)")


def check_signature(record: dict[str, Any], public_raw: bytes) -> str | None:
    """None when ``record``'s signature is the given key's over every field of the record,
    else why not (one line)."""
    sig = record.get("signature")
    if not isinstance(sig, dict):
        return "the record has no signature block"
    if sig.get("algorithm") != ALGORITHM:
        return f"unknown signature algorithm {str(sig.get('algorithm'))[:24]!r}"
    want = key_id(public_raw)
    if sig.get("key_id") != want:
        return (f"the record names key {str(sig.get('key_id'))[:24]}, the key given is {want} "
                "(the record was signed by another referee, or its key id was edited)")
    try:
        value = base64.b64decode(str(sig.get("value")), validate=True)
        body = canonical(record)
    except (binascii.Error, ValueError, TypeError) as exc:
        return f"the signature cannot be read: {exc}"
    try:
        Ed25519PublicKey.from_public_bytes(public_raw).verify(value, body)
    except InvalidSignature:
        return "the signature does not match: the record was changed after it was signed"
    return None


def fetch_public_key(address: str, timeout_s: float = 10.0) -> bytes:
    """The public key a running referee serves (``GetSigningKey``, no token), over plain gRPC.
    OSError when it cannot be reached or answers no Ed25519 key."""
    import grpc

    from referee.v1 import referee_pb2 as pb
    from referee.v1 import referee_pb2_grpc

    with grpc.insecure_channel(address) as channel:
        try:
            got = referee_pb2_grpc.RefereeStub(channel).GetSigningKey(
                pb.GetSigningKeyRequest(), timeout=timeout_s)
        except grpc.RpcError as exc:
            raise OSError(f"GetSigningKey at {address}: {exc.code().name}: {exc.details()}") \
                from None
    if got.algorithm != ALGORITHM or len(got.public_key) != 32:
        raise OSError(f"{address} serves no Ed25519 key ({got.algorithm!r})")
    return bytes(got.public_key)
