"""Exceptions of the transport, and the one place where exceptions become wire errors."""

from __future__ import annotations

import logging
import secrets
from collections.abc import Callable
from typing import Any

from acp_bindings.errors import InternalError, RpcError

__all__ = ["ConnectionClosedError", "add_error_translator", "error_object_for"]

#: Turns an expected, non-RPC failure of a lower layer into a clear wire error (or None).
ErrorTranslator = Callable[[BaseException], RpcError | None]
_translators: list[ErrorTranslator] = []


def add_error_translator(translator: ErrorTranslator) -> None:
    """Let a layer above the transport name its own expected failures on the wire.

    The transport does not know the session store or the model client; their modules
    register how their expected failures (disk full, session locked elsewhere) are answered,
    so those never become the opaque -32603 reserved for bugs. Registering twice is harmless.
    """
    if translator not in _translators:
        _translators.append(translator)


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
    for translate in _translators:
        translated = translate(leaf)
        if translated is not None:
            logger.warning("%s failed: %s", method, leaf)
            return translated.to_wire()
    error_id = secrets.token_hex(6)
    logger.error("internal error %s while handling %s", error_id, method, exc_info=exc)
    return InternalError(data={"errorId": error_id}).to_wire()
