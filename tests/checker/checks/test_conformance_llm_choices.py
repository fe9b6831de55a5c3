"""``--llm gemini`` and ``--llm openai-responses``: the option parses, and the environment
and argv the checker gives an agent point that API's official SDK at the run's scripted
model (checked in a real child process that reads only its environment)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from acp_conformance.cli import _config, build_parser, main
from acp_conformance.config import LLM_APIS, RunConfig, agent_command, agent_environment
from acp_scripted_llm import ScriptedLLMServer

pytest.importorskip("google.genai")
pytest.importorskip("openai")

# Each child builds its client from the environment alone, as an agent would.
GEMINI_CHILD = """
from google import genai
client = genai.Client()  # held: a dropped client closes its connections
print(client.models.generate_content(model="gemini-test", contents="hi").text)
"""
RESPONSES_CHILD = """
import openai
client = openai.OpenAI(max_retries=0)
print(client.responses.create(model="gpt-test", input="hi").output_text)
"""


@pytest.mark.parametrize("api", ["gemini", "openai-responses"])
def test_new_llm_choices_parse_into_the_run_config(api: str) -> None:
    args = build_parser().parse_args(["run", "--llm", api, "--", "agent"])
    assert _config(args).llm == api
    assert api in LLM_APIS


def test_an_unknown_llm_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["run", "--llm", "gemini-pro", "--", "agent"]) == 2
    assert "openai-responses" in capsys.readouterr().err  # the choices are listed


@pytest.mark.subprocess
@pytest.mark.parametrize(
    ("api", "child", "answer"),
    [
        ("gemini", GEMINI_CHILD, "answered over the Gemini API"),
        ("openai-responses", RESPONSES_CHILD, "answered over the Responses API"),
    ],
)
def test_the_agent_environment_points_the_official_sdk_at_the_scripted_model(
    tmp_path: Path, api: str, child: str, answer: str
) -> None:
    config = RunConfig(argv=[sys.executable, "-c", child], llm=api)  # type: ignore[arg-type]
    with ScriptedLLMServer([answer]) as server:
        env = agent_environment(config, home=tmp_path, tmp=tmp_path, llm_url=server.url)
        for name in ("GOOGLE_API_KEY", "GOOGLE_GENAI_USE_VERTEXAI"):
            env.pop(name, None)  # a developer's own Google settings would win over ours
        done = subprocess.run(
            config.argv, env=env, capture_output=True, text=True, timeout=60, check=False
        )
        assert done.returncode == 0, done.stderr[-2000:]
        assert done.stdout.strip() == answer
        (request,) = server.model_requests
    assert request.api == api
    assert request.api_key == "acp-conformance"


def test_agent_arguments_get_the_run_s_model_url(tmp_path: Path) -> None:
    # codex-acp takes its provider's base URL as a -c argument, not from the environment.
    config = RunConfig(argv=["codex-acp", "-c", 'p={base_url="{llm_url_v1}"}', "{home}/x"])
    argv = agent_command(config, home=tmp_path, tmp=tmp_path, llm_url="http://127.0.0.1:4242")
    assert argv == ["codex-acp", "-c", 'p={base_url="http://127.0.0.1:4242/v1"}', f"{tmp_path}/x"]
    unreachable = agent_command(config, home=tmp_path, tmp=tmp_path, llm_url=None)
    assert unreachable[2] == 'p={base_url="http://127.0.0.1:9/v1"}'
