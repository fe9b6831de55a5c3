"""Text from an agent (or a client) made safe to print on a terminal.

A report quotes what the peer sent: names, error messages, lines of its output. A hostile
peer can put terminal controls there: an escape sequence that sets the window title or clears
the screen, a carriage return that writes a fake verdict over the line. Every control
character except the newline (and the tab) is shown as a visible escape instead, and so are
lone surrogates, which a UTF-8 terminal cannot print at all.
"""

from __future__ import annotations

import re

__all__ = ["printable"]

#: C0 controls but tab and newline, DEL, C1 controls, lone surrogates, and the line and
#: paragraph separators some terminals honour.
_UNSAFE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029\ud800-\udfff]")


def _escape(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def printable(text: str) -> str:
    """``text`` with every character a terminal would act on, or could not show, escaped
    as ``\\xNN`` / ``\\uNNNN``."""
    return _UNSAFE.sub(_escape, text)
