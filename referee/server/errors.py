"""gRPC errors with a machine-readable reason: the ``referee-reason`` trailing metadata key and a
google.rpc.ErrorInfo (domain "referee.v1") in the rich status details."""
from __future__ import annotations

import grpc
from google.protobuf import any_pb2
from google.rpc import error_details_pb2, status_pb2
from grpc_status import rpc_status

DOMAIN = "referee.v1"
REASON_KEY = "referee-reason"

#: reason -> gRPC status code
FAILED_PRECONDITION_REASONS = ("NOT_YOUR_TURN", "STALE_STATE", "ILLEGAL_MOVE", "MATCH_OVER")


class RefereeError(Exception):
    """Raised inside handlers; turned into a gRPC status by the handler wrapper."""

    def __init__(self, code: grpc.StatusCode, reason: str, message: str):
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


def unauthenticated(message: str = "missing or unknown token") -> RefereeError:
    return RefereeError(grpc.StatusCode.UNAUTHENTICATED, "UNAUTHENTICATED", message)


def permission_denied(message: str) -> RefereeError:
    return RefereeError(grpc.StatusCode.PERMISSION_DENIED, "PERMISSION_DENIED", message)


def not_found(message: str) -> RefereeError:
    return RefereeError(grpc.StatusCode.NOT_FOUND, "NOT_FOUND", message)


def exhausted(message: str) -> RefereeError:
    return RefereeError(grpc.StatusCode.RESOURCE_EXHAUSTED, "RESOURCE_EXHAUSTED", message)


def precondition(reason: str, message: str) -> RefereeError:
    return RefereeError(grpc.StatusCode.FAILED_PRECONDITION, reason, message)
