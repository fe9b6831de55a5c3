"""Exceptions of the transport, and the one place where exceptions become wire errors."""

from __future__ import annotations

import logging
import secrets
from typing import Any

from acp_bindings.errors import InternalError, RpcError

__all__ = ["ConnectionClosedError", "error_object_for"]


class ConnectionClosedError(Exception):
    """The connection ended (input closed, output broken or shut down).

    Raised by outbound calls that can no longer complete: a pending ``send_request`` when
    the input ends, and any send after the writer stopped. It is a local condition, not a
    wire error, so it is not an :class:`RpcError`.
    """

    def __init__(self, message: str = "The connection is closed") -> None:
        super().__init__(message)


def _single_leaf(exc: BaseException) -> BaseException:
    """Unwrap exception groups that hold exactly one exception (task groups wrap errors)."""
    while isinstance(exc, BaseExceptionGroup) and len(exc.exceptions) == 1:
        exc = exc.exceptions[0]
    return exc


def error_object_for(exc: BaseException, *, method: str, logger: logging.Logger) -> dict[str, Any]:
    """The JSON-RPC error object for a handler's exception.

    An :class:`RpcError` is the handler's deliberate answer. Anything else is a bug: the
    traceback goes to the log under a short random id, and only that id reaches the wire.
    """
    leaf = _single_leaf(exc)
    if isinstance(leaf, RpcError):
        return leaf.to_wire()
    error_id = secrets.token_hex(6)
    logger.error("internal error %s while handling %s", error_id, method, exc_info=exc)
    return InternalError(data={"errorId": error_id}).to_wire()
