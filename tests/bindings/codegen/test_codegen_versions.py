"""The generator is parameterised by protocol version: any schema folder → any package name."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from acp_schema import codegen
from acp_schema.codegen_common import SCHEMA_DIR, VERSIONS, Target


def test_a_second_version_becomes_its_own_importable_package(tmp_path: Path) -> None:
    """Copy the v1 schemas into ``schema/vx``, generate ``pkg.vx`` and use it for real."""
    schema_root = tmp_path / "schema"
    shutil.copytree(
        SCHEMA_DIR, schema_root / "vx", ignore=shutil.ignore_patterns("cases", "v2", "*.py")
    )
    generated = tmp_path / "generated"
    target = Target(
        "vx",
        "vx",
        "pkg.vx",
        schema_root=schema_root,
        generated_root=generated,
        shared_errors="pkg.vx.shared_errors",  # a package of its own: it owns its error tree
    )
    files = codegen.build(target)
    assert '"package": "pkg.vx"' in files["sources.json"]
    assert "#   schema/vx/index.json" in files["agent.py"]
    assert "from pkg.vx.errors import MethodNotFoundError" in files["agent.py"]
    codegen.write_tree(files, target.output_dir)
    (generated / "pkg" / "__init__.py").write_text("", encoding="utf-8")
    assert codegen.check(target) == ""

    probe = textwrap.dedent(
        """
        import asyncio, sys
        from pkg.vx.methods import METHODS
        from pkg.vx.agent import AgentHandlers
        from pkg.vx.errors import MethodNotFoundError
        spec = METHODS["session/new"]
        model = spec.params_model()
        assert model.__module__.startswith("pkg.vx.models."), model.__module__
        params = model.model_validate({"cwd": "/tmp", "mcpServers": []})
        try:
            asyncio.run(AgentHandlers().session_new(params))
        except MethodNotFoundError as error:
            print(error.to_wire()["code"])
        assert "acp_bindings" not in sys.modules
        """
    )
    completed = subprocess.run(
        [sys.executable, "-c", probe],
        env={"PYTHONPATH": str(generated), "PATH": ""},
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert completed.returncode == 0, completed.stderr
    assert completed.stdout.strip() == "-32601"


def _two_versions(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Target, Target]:
    """``pkg`` (owner of the shared error tree, the v1 schemas) and ``pkg.vy`` nested in it."""
    schema_root = tmp_path / "schema"
    shutil.copytree(SCHEMA_DIR, schema_root, ignore=shutil.ignore_patterns("cases", "v2", "*.py"))
    shutil.copytree(schema_root, tmp_path / "vy")
    shutil.move(tmp_path / "vy", schema_root / "vy")
    generated = tmp_path / "generated"
    shared = "pkg.shared_errors"
    owner = Target("v1", "", "pkg", schema_root, generated, shared_errors=shared)
    nested = Target("vy", "vy", "pkg.vy", schema_root, generated, shared_errors=shared)
    # The generator finds the owner of a shared tree (and nested packages) in its table.
    monkeypatch.setitem(VERSIONS, "test-owner", owner)
    monkeypatch.setitem(VERSIONS, "test-nested", nested)
    return owner, nested


def _edit_errors(target: Target, code: str, entry: dict[str, str]) -> None:
    index_path = target.schema_dir / "index.json"
    index = json.loads(index_path.read_text(encoding="utf-8"))
    index["errors"][code] = entry
    index_path.write_text(json.dumps(index, indent=2), encoding="utf-8")


def test_a_code_only_one_version_has_extends_the_shared_tree(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The nested version re-exports the owner's classes and subclasses ``RpcError`` for a
    code of its own, so one ``except`` catches either version's errors."""
    owner, nested = _two_versions(tmp_path, monkeypatch)
    busy = {
        "name": "too_busy",
        "file": "errors/internal_error.json",
        "def": "InternalErrorObject",
        "exception": "TooBusyError",
        "message": "Too busy",
    }
    _edit_errors(nested, "-32042", busy)
    owner_files = codegen.build(owner)
    nested_files = codegen.build(nested)
    assert "shared_errors.py" in owner_files and "shared_errors.py" not in nested_files
    assert "#   schema/index.json" in nested_files["errors.py"]  # the shared tree is a source
    assert '"schema/index.json"' in nested_files["sources.json"]
    codegen.write_tree(owner_files, owner.output_dir)
    codegen.write_tree(nested_files, nested.output_dir)
    assert codegen.check(owner) == "" and codegen.check(nested) == ""

    probe = textwrap.dedent(
        """
        import pkg.errors as one, pkg.vy.errors as other, pkg.shared_errors as shared
        assert other.MethodNotFoundError is one.MethodNotFoundError is shared.MethodNotFoundError
        assert other.RpcError is one.RpcError
        assert issubclass(other.TooBusyError, one.RpcError) and other.TOO_BUSY == -32042
        assert not hasattr(one, "TooBusyError")
        assert type(other.error_from_wire({"code": -32042, "message": "m"})) is other.TooBusyError
        unknown = one.error_from_wire({"code": -32042, "message": "m"})
        assert type(unknown) is one.RpcError and unknown.code == -32042
        try:
            raise other.TooBusyError()
        except one.RpcError as error:
            print(error.to_wire()["code"])
        """
    )
    completed = subprocess.run(
        [sys.executable, "-c", probe],
        env={"PYTHONPATH": str(owner.generated_root), "PATH": ""},
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert completed.returncode == 0, completed.stderr
    assert completed.stdout.strip() == "-32042"


def test_a_shared_code_must_keep_its_class_name(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _owner, nested = _two_versions(tmp_path, monkeypatch)
    renamed = {
        "name": "method_not_found",
        "file": "errors/method_not_found.json",
        "def": "MethodNotFoundErrorObject",
        "exception": "NoSuchMethodError",
        "message": "Method not found",
    }
    _edit_errors(nested, "-32601", renamed)
    with pytest.raises(ValueError, match="one class per code"):
        codegen.build(nested)


def test_the_real_versions_share_one_error_tree() -> None:
    from acp_bindings import errors as v1_errors
    from acp_bindings import shared_errors
    from acp_bindings.v2 import errors as v2_errors

    assert VERSIONS["v1"].owns_shared_errors() and not VERSIONS["v2"].owns_shared_errors()
    for code, cls in v2_errors.ERRORS_BY_CODE.items():
        if code in shared_errors.ERRORS_BY_CODE:
            assert cls is v1_errors.ERRORS_BY_CODE[code] is shared_errors.ERRORS_BY_CODE[code]
        else:
            # A code only v2 has (-32022 of the newest draft) is its own class in the tree.
            assert code not in v1_errors.ERRORS_BY_CODE
            assert issubclass(cls, shared_errors.RpcError)
    assert -32022 in v2_errors.ERRORS_BY_CODE
    assert v2_errors.RpcError is v1_errors.RpcError is shared_errors.RpcError
