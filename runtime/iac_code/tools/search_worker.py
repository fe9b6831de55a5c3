"""Child-process side of the bounded search: ``python -m iac_code.tools.search_worker``.

Reads one JSON request ``{"op": "grep"|"glob", ...}`` from stdin, runs it with
:mod:`iac_code.tools.python_search` and writes one JSON answer to stdout:
``{"ok": true, "result": {...}}`` or ``{"ok": false, "error": "..."}``. The agent kills this
process when its deadline passes or the tool call is cancelled, so nothing here needs to
watch the clock.
"""

from __future__ import annotations

import json
import re
import sys
from typing import Any

from iac_code.tools.python_search import OPERATIONS


def answer(request: Any) -> dict[str, Any]:
    if not isinstance(request, dict) or request.get("op") not in OPERATIONS:
        return {"ok": False, "error": "unknown search request"}
    try:
        return {"ok": True, "result": OPERATIONS[request["op"]](request)}
    except re.error as exc:
        return {"ok": False, "error": f"Invalid regular expression: {exc}"}
    except (OSError, ValueError, KeyError, TypeError, RecursionError) as exc:
        return {"ok": False, "error": f"{type(exc).__name__}: {exc}"}


def main() -> None:
    request = json.loads(sys.stdin.buffer.read() or b"null")
    sys.stdout.write(json.dumps(answer(request)))
    sys.stdout.flush()


if __name__ == "__main__":
    main()
