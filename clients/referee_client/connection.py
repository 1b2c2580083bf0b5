"""Connecting to a referee: channels, bearer-token metadata, TLS and error reasons.

Everything here speaks only the wire protocol (the modules ``protoc`` generates from
``proto/referee/v1/*.proto``); nothing imports the referee's own code.

>>> channel = aio_channel("127.0.0.1:50051")             # plaintext, for loopback
>>> channel = aio_channel("referee.example.org:443", tls=TlsConfig(ca_file="ca.pem"))
>>> stub = RefereeStub(channel); await stub.GetView(req, metadata=bearer(token))
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import cast

import grpc

#: Trailing-metadata key the referee uses for its machine-readable reason (see referee.proto).
REASON_KEY = "referee-reason"

#: Channel options used for every channel the SDK makes. Messages from the referee carry every
#: legal move and a full view, so allow more than gRPC's 4 MiB default.
DEFAULT_OPTIONS: tuple[tuple[str, int], ...] = (
    ("grpc.max_receive_message_length", 32 * 1024 * 1024),
    ("grpc.max_send_message_length", 8 * 1024 * 1024),
)


@dataclass(frozen=True, slots=True)
class TlsConfig:
    """TLS settings. With no fields set, the system's root certificates are trusted.

    ``ca_file``: PEM bundle of the CA that signed the referee's certificate (a self-signed
    referee certificate works too). ``cert_file``/``key_file``: a client certificate, for
    referees that require mutual TLS. ``server_name``: override the name checked against the
    certificate (useful when connecting by IP address)."""

    ca_file: str | None = None
    cert_file: str | None = None
    key_file: str | None = None
    server_name: str | None = None

    def credentials(self) -> grpc.ChannelCredentials:
        def read(path: str | None) -> bytes | None:
            return Path(path).read_bytes() if path else None

        if bool(self.cert_file) != bool(self.key_file):
            raise ValueError("a client certificate needs both cert_file and key_file")
        return grpc.ssl_channel_credentials(
            root_certificates=read(self.ca_file),
            private_key=read(self.key_file),
            certificate_chain=read(self.cert_file),
        )

    def options(self) -> tuple[tuple[str, str], ...]:
        if self.server_name:
            return (("grpc.ssl_target_name_override", self.server_name),)
        return ()


def _options(tls: TlsConfig | None, extra: Sequence[tuple[str, object]] = ()) -> list:
    return [*DEFAULT_OPTIONS, *(tls.options() if tls else ()), *extra]


def aio_channel(
    address: str,
    *,
    tls: TlsConfig | None = None,
    options: Sequence[tuple[str, object]] = (),
) -> grpc.aio.Channel:
    """An asyncio channel to ``address`` (``host:port``). Plaintext unless ``tls`` is given."""
    if tls is not None:
        return grpc.aio.secure_channel(address, tls.credentials(), options=_options(tls, options))
    return grpc.aio.insecure_channel(address, options=_options(None, options))


def sync_channel(
    address: str,
    *,
    tls: TlsConfig | None = None,
    options: Sequence[tuple[str, object]] = (),
) -> grpc.Channel:
    """A blocking channel to ``address`` (``host:port``). Plaintext unless ``tls`` is given."""
    if tls is not None:
        return grpc.secure_channel(address, tls.credentials(), options=_options(tls, options))
    return grpc.insecure_channel(address, options=_options(None, options))


def bearer(token: str) -> tuple[tuple[str, str], ...]:
    """Call metadata carrying a seat or admin token: ``authorization: Bearer <token>``."""
    if not token:
        raise ValueError("an empty token was given; pass the seat token CreateMatch returned")
    return (("authorization", f"Bearer {token}"),)


class RefereeError(Exception):
    """A referee call failed. ``code`` is the gRPC status code, ``reason`` the referee's
    machine-readable reason (``NOT_YOUR_TURN``, ``STALE_STATE``, ``ILLEGAL_MOVE``, ...) when it
    sent one, ``details`` its human-readable message."""

    def __init__(self, code: grpc.StatusCode, details: str, reason: str = ""):
        self.code = code
        self.details = details
        self.reason = reason
        what = f"{code.name}" + (f"/{reason}" if reason and reason != code.name else "")
        super().__init__(f"{what}: {details}")

    @classmethod
    def from_rpc_error(cls, err: grpc.RpcError) -> RefereeError:
        code = err.code() if hasattr(err, "code") else grpc.StatusCode.UNKNOWN
        details = (err.details() if hasattr(err, "details") else None) or str(err)
        return cls(code, details, reason_of(err))


def reason_of(err: grpc.RpcError) -> str:
    """The ``referee-reason`` trailing metadata of a failed call, or ''."""
    try:
        trailers = err.trailing_metadata() or ()
    except Exception:  # noqa: BLE001 - some error objects carry no trailers at all
        return ""
    for item in trailers:
        key, value = (item.key, item.value) if hasattr(item, "key") else cast(tuple, item)
        if key == REASON_KEY:
            return value.decode() if isinstance(value, bytes) else str(value)
    return ""
