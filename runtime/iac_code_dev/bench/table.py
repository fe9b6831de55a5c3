"""Plain-text rendering of the results: a machine header and an aligned table."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from .results import Row

_COLUMNS = ("metric", "value", "target", "verdict", "notes")


def header_line(machine: Mapping[str, Any]) -> str:
    load = machine.get("loadavg") or []
    load_text = " ".join(f"{x:.2f}" for x in load) if load else "?"
    return (
        f"machine: {machine.get('nproc')} CPUs ({machine.get('cpu')}), "
        f"{machine.get('implementation', 'Python')} {machine.get('python')}, "
        f"kernel {machine.get('kernel')}, load average at start {load_text}"
    )


def render(machine: Mapping[str, Any], rows: Sequence[Row]) -> str:
    cells = [[getattr(row, name) for name in _COLUMNS] for row in rows]
    widths = [len(name) for name in _COLUMNS]
    # The notes column is last and left ragged, so only the others are padded.
    for line in cells:
        for index, text in enumerate(line[:-1]):
            widths[index] = max(widths[index], len(text))

    def fmt(line: Sequence[str]) -> str:
        padded = [text.ljust(widths[i]) for i, text in enumerate(line[:-1])]
        return "  ".join([*padded, line[-1]]).rstrip()

    rule = "  ".join("-" * w for w in widths[:-1]) + "  " + "-" * widths[-1]
    out = [header_line(machine), "", fmt(_COLUMNS), rule]
    out.extend(fmt(line) for line in cells)
    return "\n".join(out)
