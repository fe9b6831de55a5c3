"""The generator is parameterised by protocol version: any schema folder → any package name."""

from __future__ import annotations

import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

from acp_schema import codegen
from acp_schema.codegen_common import SCHEMA_DIR, Target


def test_a_second_version_becomes_its_own_importable_package(tmp_path: Path) -> None:
    """Copy the v1 schemas into ``schema/vx``, generate ``pkg.vx`` and use it for real."""
    schema_root = tmp_path / "schema"
    shutil.copytree(
        SCHEMA_DIR, schema_root / "vx", ignore=shutil.ignore_patterns("cases", "v2", "*.py")
    )
    generated = tmp_path / "generated"
    target = Target("vx", "vx", "pkg.vx", schema_root=schema_root, generated_root=generated)
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
