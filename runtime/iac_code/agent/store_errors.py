"""How expected resource failures are answered on the wire.

A session held by another process is a problem with the request (-32602, like an unknown
session). A write the disk refuses (full, read-only, a ``--home`` that cannot be created) is
not a bug, so it does not get the opaque -32603 "Internal error" with only an error id: it
is answered -32603 with a sentence naming the cause, and ``data`` saying what failed. A
database store adds two causes worded the same way: the database did not answer, and
another process took the session over (this one's lease had lapsed, so its writes are
refused). Running out of file descriptors anywhere in a handler is answered the same way.
"""

from __future__ import annotations

import errno as errno_codes

from acp_bindings.errors import InternalError, InvalidParamsError, RpcError

from iac_code.rpc.errors import add_error_translator
from iac_code.store import (
    SessionLockedError,
    SessionTakenOverError,
    StoreUnreachableError,
    StoreWriteError,
)

IN_USE = "session is in use by another process"

_CAUSES = {
    errno_codes.ENOSPC: "the disk is full",
    errno_codes.EDQUOT: "the disk quota is exhausted",
    errno_codes.EROFS: "the file system is read-only",
    errno_codes.EACCES: "permission denied",
    errno_codes.EPERM: "permission denied",
    errno_codes.ENOTDIR: "a part of the path is not a directory",
    errno_codes.EMFILE: "too many open files",
    errno_codes.ENFILE: "too many open files",
}


def session_in_use(session_id: str) -> InvalidParamsError:
    return InvalidParamsError(
        "The session is open in another iac-code process.", data={"sessionId": IN_USE}
    )


def store_write_failed(error: StoreWriteError) -> InternalError:
    if isinstance(error, SessionTakenOverError):
        cause = "another iac-code process took the session over"
    elif isinstance(error, StoreUnreachableError):
        cause = "the database is unreachable"
    else:
        cause = _CAUSES.get(error.errno or -1, "the write failed")
    data: dict[str, str] = {"store": str(error)}
    if error.errno is not None:
        data["errno"] = errno_codes.errorcode.get(error.errno, str(error.errno))
    return InternalError(f"The session store cannot be written: {cause}.", data=data)


def out_of_descriptors(error: OSError) -> InternalError:
    return InternalError(
        "The agent has too many open files; close some sessions and try again.",
        data={"errno": errno_codes.errorcode.get(error.errno or 0, str(error.errno))},
    )


def translate_store_error(exc: BaseException) -> RpcError | None:
    if isinstance(exc, SessionLockedError):
        return session_in_use(exc.session_id)
    if isinstance(exc, StoreWriteError):
        return store_write_failed(exc)
    if isinstance(exc, OSError) and exc.errno in (errno_codes.EMFILE, errno_codes.ENFILE):
        return out_of_descriptors(exc)
    return None


add_error_translator(translate_store_error)
