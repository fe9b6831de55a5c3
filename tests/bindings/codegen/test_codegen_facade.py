"""The lazy ``acp_bindings.models`` facade imports only what is asked for."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from typing import cast

from acp_bindings import models


def _loaded_after(statement: str) -> dict[str, object]:
    script = textwrap.dedent(
        f"""
        import json, sys
        {statement}
        print(json.dumps({{
            "models": sorted(m for m in sys.modules if m.startswith("acp_bindings.models.")),
            "bindings": sorted(m for m in sys.modules if m.startswith("acp_bindings")),
            "pydantic": "pydantic" in sys.modules,
        }}))
        """
    )
    completed = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=30, check=True
    )
    loaded: dict[str, object] = json.loads(completed.stdout)
    return loaded


def test_importing_the_facade_loads_no_model_module() -> None:
    loaded = _loaded_after("import acp_bindings.models")
    assert loaded["models"] == []
    assert loaded["pydantic"] is False


def test_method_table_and_handlers_do_not_load_models() -> None:
    loaded = _loaded_after("import acp_bindings.methods, acp_bindings.agent, acp_bindings.client")
    assert loaded["models"] == []
    assert loaded["pydantic"] is False


def test_one_name_loads_only_its_module_and_its_imports() -> None:
    loaded = _loaded_after("from acp_bindings.models import InitializeRequest")
    modules = set(cast(list[str], loaded["models"]))
    assert "acp_bindings.models.methods.initialize" in modules
    assert not any(m.startswith("acp_bindings.models.updates") for m in modules)
    assert "acp_bindings.models.methods.session_prompt" not in modules
    assert "acp_bindings.models.notifications.session_update" not in modules


def test_facade_lists_every_name_and_rejects_unknown_ones() -> None:
    assert "ContentBlock" in models.__all__
    assert "NewSessionRequest" in dir(models)
    assert models.__all__ == sorted(models.__all__)
    try:
        models.DefinitelyNotAModel  # noqa: B018
    except AttributeError as exc:
        assert "DefinitelyNotAModel" in str(exc)
    else:  # pragma: no cover
        raise AssertionError("unknown names must raise AttributeError")


def test_content_block_is_one_object_everywhere() -> None:
    from acp_bindings.models.defs import content
    from acp_bindings.models.methods import session_prompt

    assert models.ContentBlock is content.ContentBlock
    assert session_prompt.content is content
    annotation = session_prompt.PromptRequest.model_fields["prompt"].annotation
    assert annotation == list[content.ContentBlock]
