"""No TODO left by ``python -m acp_schema.drift --scaffold``: each names what a human writes."""

from __future__ import annotations

from pathlib import Path

import acp_schema
import pytest
from acp_schema import scaffold

SCHEMA_ROOT = Path(acp_schema.__file__).resolve().parent
VERSION_FOLDERS = [SCHEMA_ROOT, *(p.parent for p in sorted(SCHEMA_ROOT.glob("*/index.json")))]


@pytest.mark.parametrize(
    "schema_dir",
    VERSION_FOLDERS,
    ids=[p.relative_to(SCHEMA_ROOT.parent).as_posix() for p in VERSION_FOLDERS],
)
def test_no_scaffold_todo_is_left(schema_dir: Path) -> None:
    left = scaffold.todos(schema_dir)
    assert left == [], "write these in our own words (left by --scaffold):\n" + "\n".join(left)
