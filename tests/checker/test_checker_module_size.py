"""No module of the checker or its scripted model server over 500 lines: a longer one does
more than one job, and is split by job (as ``judges/wire.py`` was into wire, schemas,
session_ids, client_methods, shutdown and run_walk)."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CONFORMANCE = ROOT / "conformance"
LIMIT = 500


def _lines(path: Path) -> int:
    with path.open("rb") as handle:
        return sum(1 for _ in handle)


def test_no_checker_module_is_over_500_lines() -> None:
    sizes = {
        path.relative_to(CONFORMANCE).as_posix(): _lines(path)
        for path in sorted(CONFORMANCE.rglob("*.py"))
    }
    assert "acp_conformance/catalogue.py" in sizes  # the walk sees the checker's modules
    over = {name: n for name, n in sizes.items() if n > LIMIT}
    assert over == {}
