"""Every schema case of the methods the start-up fast path answers goes through the fast path
and through the runtime, with the same outcome (issue 32).

The fast path (``iac_code.prelude``) decides with the predicates the code generator writes
from the schemas (``acp_bindings.predicates``). A request it answers must be one the runtime
accepts too; one it leaves alone is answered by the runtime, so the outcome through the
whole process is the runtime's. The cases' own verdicts are checked as well: the predicates
agree with the schema on each, and the runtime gives -32602 to every invalid one.
"""

from __future__ import annotations

import contextlib
import json
import os
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from acp_bindings import predicates as v1_predicates
from acp_bindings.v2 import predicates as v2_predicates
from iac_code import prelude
from iac_code.agent.acp_agent import IacAgent
from iac_code.settings_core import SessionDefaults

from tests.agent.handlers.agent_harness import open_agent

pytestmark = pytest.mark.anyio

ROOT = Path(__file__).resolve().parents[3]
CASE_FILES = {
    "v1": ROOT / "schema" / "cases" / "methods",
    "v2": ROOT / "schema" / "v2" / "cases" / "methods",
}
METHODS = {"initialize": "initialize.json", "session/new": "session.new.json"}
PREDICATES = {"v1": v1_predicates.PARAMS, "v2": v2_predicates.PARAMS}
INITIALIZE = {
    "v1": {"protocolVersion": 1},
    "v2": {"protocolVersion": 2, "info": {"name": "test", "version": "1"}},
}
#: The cases' example folders, replaced by folders that exist here (validity is unchanged).
EXAMPLE_DIRS = ("/home/dev/infra", "/home/dev/modules")


def _requests() -> Iterator[Any]:
    for version, folder in CASE_FILES.items():
        for method, name in METHODS.items():
            for case in json.loads((folder / name).read_text(encoding="utf-8")):
                if case["message"].get("method") == method:  # requests, not results
                    label = f"{version}-{method}-{case['description']}"
                    yield pytest.param(version, case, id=label)


def _with_real_dirs(value: Any, dirs: dict[str, str]) -> Any:
    if isinstance(value, str):
        return dirs.get(value, value)
    if isinstance(value, list):
        return [_with_real_dirs(v, dirs) for v in value]
    if isinstance(value, dict):
        return {k: _with_real_dirs(v, dirs) for k, v in value.items()}
    return value


@contextlib.contextmanager
def _pipes() -> Iterator[tuple[int, int, int, int]]:
    fds = (*os.pipe(), *os.pipe())
    try:
        yield fds
    finally:
        for fd in fds:
            os.close(fd)


def _fast_initialize(message: dict[str, Any]) -> Any:
    """The fast path's answer to ``message`` as the first line, or None (left alone)."""
    with _pipes() as (in_read, in_write, out_read, out_write):
        os.write(in_write, json.dumps(message).encode() + b"\n")
        _, params = prelude.answer_first_initialize(in_read, out_write)
        if params is None:
            return None
        return json.loads(os.read(out_read, 1 << 20))


def _fast_session_new(message: dict[str, Any], home: Path) -> Any:
    """The fast path's answer to ``message`` arriving while the runtime imports, or None."""
    importing = threading.Event()
    importer = threading.Thread(target=importing.wait, args=(30,), daemon=True)
    importer.start()
    read_end, write_end = os.pipe()
    os.close(write_end)  # the client sends nothing more: serve returns after this line
    try:
        with _pipes() as (_, _, out_read, out_write):
            window = prelude._Window(read_end, out_write, json.dumps(message).encode() + b"\n")
            window.serve(SessionDefaults({"IAC_CODE_HOME": str(home)}), importer)
            if not window.sessions:
                return None  # left for the runtime, line and all
            return json.loads(os.read(out_read, 1 << 20))
    finally:
        importing.set()
        os.close(read_end)


async def _runtime(tmp_path: Path, version: str, method: str, params: Any) -> Any:
    async with open_agent(tmp_path, versioned=True) as client:
        if method != "initialize":
            assert (await client.call("initialize", INITIALIZE[version])).frame.get("result")
        return (await client.call(method, params)).frame


def _outcome(frame: Any) -> str | int:
    return "accepted" if "result" in frame else frame["error"]["code"]


@pytest.mark.parametrize(("version", "case"), list(_requests()))
async def test_a_schema_case_gets_the_same_outcome_through_the_fast_path(
    tmp_path: Path, version: str, case: dict[str, Any]
) -> None:
    real_dirs = {}
    for name in EXAMPLE_DIRS:
        folder = tmp_path / "dirs" / name.rsplit("/", 1)[-1]
        folder.mkdir(parents=True)
        real_dirs[name] = str(folder)
    message = _with_real_dirs(case["message"], real_dirs)
    method, params = message["method"], message.get("params")

    # The generated predicate decides the case as the schema does.
    assert PREDICATES[version][method](params) is case["valid"]

    (tmp_path / "runtime").mkdir()
    runtime = _outcome(await _runtime(tmp_path / "runtime", version, method, params))
    assert runtime == ("accepted" if case["valid"] else -32602)

    if method == "initialize":
        fast = _fast_initialize(message)
    elif version == "v1":
        fast = _fast_session_new(message, tmp_path / "fast-home")
    else:
        fast = None  # after a v2 initialize the fast path answers no session/new
    through_fast_path = runtime if fast is None else _outcome(fast)
    assert through_fast_path == runtime
    # What the fast path should answer, it does: plain valid requests never wait.
    plain = case["valid"] and not (params or {}).get("mcpServers")
    if plain and not (params or {}).get("additionalDirectories") and version == "v1":
        assert fast is not None
    if method == "initialize" and case["valid"]:
        assert fast is not None


def test_the_fast_path_fills_in_what_the_runtime_does() -> None:
    assert IacAgent.PARAM_DEFAULTS["session/new"] == prelude.SESSION_NEW_DEFAULTS


V2 = INITIALIZE["v2"]
#: Beyond the schema cases: shapes the hand-written checks used to single out.
PROBES = [
    ("v1", "initialize", {"protocolVersion": True}),
    ("v1", "initialize", {"protocolVersion": 1.0}),
    ("v1", "initialize", {"protocolVersion": 1, "unknown": 1}),
    ("v1", "initialize", {"protocolVersion": 1, "clientCapabilities": {"unknown": {}}}),
    ("v1", "initialize", {"protocolVersion": 1, "clientCapabilities": {"terminal": None}}),
    ("v1", "initialize", {"protocolVersion": 1, "clientInfo": None, "_meta": None}),
    (
        "v1",
        "initialize",
        {"protocolVersion": 1, "clientInfo": {"name": "a", "version": "1", "title": None}},
    ),
    ("v1", "initialize", {"protocolVersion": 1, "clientCapabilities": {"fs": None}}),
    ("v2", "initialize", {**V2, "clientCapabilities": {}}),
    ("v2", "initialize", {**V2, "capabilities": {"auth": {"terminal": True}}}),
    ("v2", "initialize", {**V2, "capabilities": {"auth": {"terminal": None}}}),
    ("v2", "initialize", {**V2, "info": {"name": "zed"}}),
    ("v2", "initialize", {"protocolVersion": 2, "capabilities": {}}),
    ("v1", "session/new", {"cwd": "/home/dev/infra"}),
    ("v1", "session/new", {"cwd": "/home/dev/infra", "mcpServers": [], "unknown": 1}),
    ("v1", "session/new", {"cwd": "/home/dev/infra", "mcpServers": None}),
    ("v1", "session/new", {"cwd": "/home/dev/infra", "mcpServers": [], "_meta": None}),
    (
        "v1",
        "session/new",
        {"cwd": "/home/dev/infra", "mcpServers": [], "additionalDirectories": []},
    ),
    ("v1", "session/new", {"cwd": "relative", "mcpServers": []}),
]


@pytest.mark.parametrize(("version", "method", "params"), PROBES, ids=repr)
async def test_what_the_fast_path_answers_the_runtime_accepts(
    tmp_path: Path, version: str, method: str, params: Any
) -> None:
    dirs = tmp_path / "infra"
    dirs.mkdir()
    params = _with_real_dirs(params, {"/home/dev/infra": str(dirs)})
    message = {"jsonrpc": "2.0", "id": 1, "method": method, "params": params}
    (tmp_path / "runtime").mkdir()
    runtime = _outcome(await _runtime(tmp_path / "runtime", version, method, params))
    if method == "initialize":
        fast = _fast_initialize(message)
    else:
        fast = _fast_session_new(message, tmp_path / "fast-home")
    assert (runtime if fast is None else _outcome(fast)) == runtime
