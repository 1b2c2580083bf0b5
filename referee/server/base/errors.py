"""gRPC errors with a machine-readable reason: the ``referee-reason`` trailing metadata key and a
google.rpc.ErrorInfo (domain "referee.v1") in the rich status details."""
from __future__ import annotations

from typing import cast

import grpc
from google.protobuf import any_pb2
from google.protobuf.message import Message
from google.rpc import error_details_pb2, status_pb2
from grpc_status import rpc_status

from referee.v1 import referee_pb2 as pb

DOMAIN = "referee.v1"
REASON_KEY = "referee-reason"

#: Longest error message sent. The message travels twice in the trailers (grpc-message and the
#: rich status), and a client-supplied value echoed whole could push them past the client's
#: metadata limit, turning the answer into RESOURCE_EXHAUSTED.
MAX_MESSAGE_CHARS = 300

#: The one mapping of reason names (the ``referee-reason`` trailer) to the protocol's Reason
#: values (MoveResult.reason). A refusal never carries REASON_UNSPECIFIED: a name outside the
#: enum is a referee bug, which ``wire.refusal`` logs and sends as INTERNAL (issue 31 item 3).
REASON_VALUES: dict[str, pb.Reason] = {
    name: cast("pb.Reason", pb.Reason.Value(name)) for name in pb.Reason.keys()}  # noqa: SIM118


def reason_value(name: str, default: pb.Reason = pb.REASON_UNSPECIFIED) -> pb.Reason:
    return REASON_VALUES.get(name, default)


def clip(value: object, limit: int = 24) -> str:
    """A client-supplied value for an error message: quoted, at most ``limit`` characters of it
    (then an ellipsis), so an 8 KB id never comes back in full."""
    text = value if isinstance(value, str) else str(value)
    if len(text) > limit:
        return repr(text[:limit]) + "…"
    return repr(text)

def prefix(value: str, limit: int = 64) -> str:
    """A client-supplied id echoed in a message field (not quoted): its first ``limit``
    characters, then an ellipsis when there were more."""
    return value if len(value) <= limit else value[:limit] + "…"


def not_a(message_type: type[Message]) -> str:
    """The message for bytes that do not parse as ``message_type`` (no parser detail: it names
    no Python exception and quotes none of the bytes)."""
    return (f"malformed request: the bytes are not a {message_type.DESCRIPTOR.full_name} message"
            " (strings, notes too, must be UTF-8)")

#: reason -> gRPC status code
FAILED_PRECONDITION_REASONS = ("NOT_YOUR_TURN", "STALE_STATE", "ILLEGAL_MOVE", "MATCH_OVER",
                               "SEAT_ABANDONED")


class RefereeError(Exception):
    """Raised inside handlers; turned into a gRPC status by the handler wrapper."""

    def __init__(self, code: grpc.StatusCode, reason: str, message: str):
        if len(message) > MAX_MESSAGE_CHARS:
            message = message[: MAX_MESSAGE_CHARS - 1] + "…"
        super().__init__(message)
        self.code = code
        self.reason = reason
        self.message = message

    def trailing_metadata(self) -> tuple[tuple[str, str | bytes], ...]:
        info = error_details_pb2.ErrorInfo(reason=self.reason, domain=DOMAIN)
        detail = any_pb2.Any()
        detail.Pack(info)
        status = rpc_status.to_status(
            status_pb2.Status(code=self.code.value[0], message=self.message, details=[detail])
        )
        return tuple(status.trailing_metadata) + ((REASON_KEY, self.reason),)


def malformed(message: str) -> RefereeError:
    return RefereeError(grpc.StatusCode.INVALID_ARGUMENT, "MALFORMED", message)


def wrong_game(message: str) -> RefereeError:
    """A move (or a request) of another game than the match's: a Goa move sent to a Batavia
    match. INVALID_ARGUMENT like MALFORMED, with its own reason so a bot can tell that it
    joined the wrong match from a bug in its move building (issue 31 item 4)."""
    return RefereeError(grpc.StatusCode.INVALID_ARGUMENT, "WRONG_GAME", message)


def unauthenticated(message: str = "missing or unknown token") -> RefereeError:
    return RefereeError(grpc.StatusCode.UNAUTHENTICATED, "UNAUTHENTICATED", message)


def token_replaced(message: str) -> RefereeError:
    return RefereeError(grpc.StatusCode.UNAUTHENTICATED, "TOKEN_REPLACED", message)


def permission_denied(message: str) -> RefereeError:
    return RefereeError(grpc.StatusCode.PERMISSION_DENIED, "PERMISSION_DENIED", message)


def not_found(message: str) -> RefereeError:
    return RefereeError(grpc.StatusCode.NOT_FOUND, "NOT_FOUND", message)


def exhausted(message: str) -> RefereeError:
    return RefereeError(grpc.StatusCode.RESOURCE_EXHAUSTED, "RESOURCE_EXHAUSTED", message)


def already_exists(message: str) -> RefereeError:
    return RefereeError(grpc.StatusCode.ALREADY_EXISTS, "ALREADY_EXISTS", message)


def request_id_reused(message: str) -> RefereeError:
    """CreateMatch: this admin used the request_id for a different request."""
    return RefereeError(grpc.StatusCode.ALREADY_EXISTS, "REQUEST_ID_REUSED", message)


def bad_invite(message: str) -> RefereeError:
    """RegisterBot into a league: no invite code, or one that is unknown, used up or expired."""
    return RefereeError(grpc.StatusCode.PERMISSION_DENIED, "BAD_INVITE", message)


def bad_archive(message: str) -> RefereeError:
    """UploadBot: the archive is refused (the message names the first problem)."""
    return RefereeError(grpc.StatusCode.INVALID_ARGUMENT, "BAD_ARCHIVE", message)


def precondition(reason: str, message: str) -> RefereeError:
    return RefereeError(grpc.StatusCode.FAILED_PRECONDITION, reason, message)


def store_unavailable(message: str) -> RefereeError:
    """The store cannot commit or read now (database away, disk full, file not writable):
    nothing changed; call again, the referee recovers by itself once the store is back."""
    return RefereeError(grpc.StatusCode.UNAVAILABLE, "STORE_UNAVAILABLE", message)


#: the reason of a call refused by a referee that is draining (SIGTERM, a rolling restart): it
#: takes no new match, stream or move and hands its matches on; the caller calls again (through
#: the proxy, another referee or the same one once restarted answers). Not a move's refusal
#: reason (no MoveResult carries it): a move sent meanwhile ends its stream with this status.
DRAINING = "DRAINING"


def draining(message: str = "this referee is restarting (draining); call again") -> RefereeError:
    """UNAVAILABLE / DRAINING: retried by the SDK and the kits like any UNAVAILABLE."""
    return RefereeError(grpc.StatusCode.UNAVAILABLE, DRAINING, message)


def internal(message: str = "internal error") -> RefereeError:
    """A failure of the referee's own (a bug, logged): nothing the caller sent caused it."""
    return RefereeError(grpc.StatusCode.INTERNAL, "INTERNAL", message)


def not_owner(message: str) -> RefereeError:
    """The match is run by another referee process sharing the store (its lease was taken
    over): call again, and the one that runs it answers (behind a proxy the call is routed
    there; a bot's SDK retries UNAVAILABLE)."""
    return RefereeError(grpc.StatusCode.UNAVAILABLE, "NOT_OWNER", message)


def upload_quota(message: str) -> RefereeError:
    """UploadBot (and the web's upload): a limit the organizer set on a bot's versions (its
    daily count, its stored bytes) is reached; the message names the limit, its value and when
    the count frees up (issue 31, item 4)."""
    return RefereeError(grpc.StatusCode.RESOURCE_EXHAUSTED, "UPLOAD_QUOTA", message)


# ---------------------------------------------------------------------- the lobby (issue 33)
def bad_time_policy(message: str) -> RefereeError:
    """A lobby seek's time policy outside the lobby's bounds, or one that times nothing
    (docs/bot/lobby.md lists the bounds)."""
    return RefereeError(grpc.StatusCode.INVALID_ARGUMENT, "BAD_TIME_POLICY", message)


def seek_limit(message: str) -> RefereeError:
    """A cap of open seeks is reached (per player, per address, per referee)."""
    return RefereeError(grpc.StatusCode.RESOURCE_EXHAUSTED, "SEEK_LIMIT", message)


def bot_busy(message: str) -> RefereeError:
    """A challenged bot plays as many lobby matches as it takes at once."""
    return RefereeError(grpc.StatusCode.RESOURCE_EXHAUSTED, "BOT_BUSY", message)


def bad_invitation(message: str) -> RefereeError:
    """An invitation secret that is used (each is good for one seat), expired or unknown."""
    return RefereeError(grpc.StatusCode.PERMISSION_DENIED, "BAD_INVITATION", message)


def seek_closed(message: str) -> RefereeError:
    """A seek that is filled, cancelled or expired: nothing can be done to it any more."""
    return RefereeError(grpc.StatusCode.FAILED_PRECONDITION, "SEEK_CLOSED", message)


def not_challengeable(message: str) -> RefereeError:
    """A known bot that accepts no challenge now (for this game)."""
    return RefereeError(grpc.StatusCode.FAILED_PRECONDITION, "NOT_CHALLENGEABLE", message)


def already_seated(message: str) -> RefereeError:
    """JoinSeek by an identity that holds a seat of the seek already."""
    return RefereeError(grpc.StatusCode.FAILED_PRECONDITION, "ALREADY_SEATED", message)
