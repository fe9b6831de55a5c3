"""Options of one checker run, and the per-scenario environment templates."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:
    from .harness.remote_http import RemoteTarget
    from .trace_receiver import OtlpReceiver

LlmApi = Literal["anthropic", "openai", "openai-responses", "gemini", "none"]
#: The ``--llm`` choices, in the order the help lists them.
LLM_APIS: tuple[LlmApi, ...] = ("anthropic", "openai", "openai-responses", "gemini", "none")

#: Placeholder URL for scenarios that run no scripted LLM: connections are refused at once.
UNREACHABLE_LLM_URL = "http://127.0.0.1:9"


@dataclass
class RunConfig:
    argv: list[str]
    agent_env: list[tuple[str, str]] = field(default_factory=list)
    agent_cwd: Path | None = None
    timeout: float = 10.0
    auth_method: str | None = None
    only: list[str] = field(default_factory=list)
    llm: LlmApi = "none"
    jobs: int = 1
    #: Rule profile (``--profile``): ``acp`` or ``iac-code`` (see requirements.RULE_PROFILES).
    profile: str = "acp"
    #: Tool vocabulary for scripted tool calls (``--tools``, see :mod:`.vocabularies`).
    tools: str = "iac-code"
    fuzz_examples: int = 20
    #: A remote agent (``--url``): its endpoint, ``--ws`` and ``--token``; None for stdio runs.
    remote: RemoteTarget | None = None
    #: ``--traceparent``: check that the agent continues a prompt's trace context, through
    #: an OTLP receiver the run starts (``trace_receiver`` while the run goes on).
    traceparent: bool = False
    trace_receiver: OtlpReceiver | None = None
    #: ``--strict-coverage``: an applicable MUST/CAPABILITY requirement the run could not
    #: exercise (not applicable for a reason of the run's) fails the run.
    strict_coverage: bool = False
    #: ``--cancel-prompt``: the text of the prompt whose running turn the cancel checks
    #: cancel (for an agent on its own model, one that keeps it busy); None: the default.
    cancel_prompt: str | None = None
    #: ``--prompt``: the text of the prompt-content checks' prompts; None: the default.
    prompt_text: str | None = None
    #: ``--v2-draft``: the v2 draft graded (see :mod:`.v2_drafts`): which v2 rules apply and
    #: how the v2 schema judges shapes that changed between drafts.
    v2_draft: str = "newest"

    @property
    def shutdown_grace(self) -> float:
        """How long each rung of the shutdown ladder waits."""
        return min(self.timeout, 5.0)


def fill_template(value: str, values: Mapping[str, str]) -> str:
    """Replace ``{name}`` placeholders; unknown braces are left alone (values may be JSON)."""
    for name, replacement in values.items():
        value = value.replace("{" + name + "}", replacement)
    return value


#: Conventional variables most agents read for their model endpoint; set for ``--llm`` runs
#: before the ``--agent-env`` pairs, which can override them.
DEFAULT_LLM_ENV: dict[str, dict[str, str]] = {
    "anthropic": {"ANTHROPIC_BASE_URL": "{llm_url}", "ANTHROPIC_API_KEY": "acp-conformance"},
    "openai": {"OPENAI_BASE_URL": "{llm_url_v1}", "OPENAI_API_KEY": "acp-conformance"},
    # The Responses API shares the OpenAI client's variables (codex-acp names the base URL in
    # its model-provider config instead, through --agent-env or its peers-table command).
    "openai-responses": {"OPENAI_BASE_URL": "{llm_url_v1}", "OPENAI_API_KEY": "acp-conformance"},
    # gemini-cli and the google-genai SDK: the key, and the root the SDK adds /v1beta/... to.
    "gemini": {"GOOGLE_GEMINI_BASE_URL": "{llm_url}", "GEMINI_API_KEY": "acp-conformance"},
    "none": {},
}


def agent_environment(
    config: RunConfig, *, home: Path, tmp: Path, llm_url: str | None
) -> dict[str, str]:
    """The agent's environment: inherited, a fresh HOME, the endpoint variables of the
    scripted LLM's API, then the --agent-env pairs."""
    values = _template_values(home=home, tmp=tmp, llm_url=llm_url)
    env = dict(os.environ)
    env["HOME"] = str(home)
    if config.trace_receiver is not None:
        env.update(otel_environment(config.trace_receiver.url))
    for key, value in [*DEFAULT_LLM_ENV[config.llm].items(), *config.agent_env]:
        env[key] = fill_template(value, values)
    return env


def agent_command(config: RunConfig, *, home: Path, tmp: Path, llm_url: str | None) -> list[str]:
    """The agent's argv with the same templates filled as in its environment: an agent
    that takes its model endpoint only as an argument (codex-acp's ``-c
    model_providers...base_url``) is pointed at each scenario's scripted LLM this way."""
    values = _template_values(home=home, tmp=tmp, llm_url=llm_url)
    return [fill_template(arg, values) for arg in config.argv]


def _template_values(*, home: Path, tmp: Path, llm_url: str | None) -> dict[str, str]:
    url = (llm_url or UNREACHABLE_LLM_URL).rstrip("/")
    return {"llm_url": url, "llm_url_v1": url + "/v1", "home": str(home), "tmp": str(tmp)}


def otel_environment(endpoint: str) -> dict[str, str]:
    """The standard variables that send an agent's traces to ``endpoint`` (and nothing else):
    OTLP over HTTP/protobuf, batches flushed after 200 ms rather than 5 s."""
    return {
        "OTEL_EXPORTER_OTLP_ENDPOINT": endpoint,
        "OTEL_EXPORTER_OTLP_PROTOCOL": "http/protobuf",
        "OTEL_TRACES_EXPORTER": "otlp",
        "OTEL_METRICS_EXPORTER": "none",
        "OTEL_LOGS_EXPORTER": "none",
        "OTEL_BSP_SCHEDULE_DELAY": "200",
        "OTEL_SDK_DISABLED": "false",
    }


class UsageError(Exception):
    """Bad command-line input or option file (exit code 2)."""


def absolutize(argv: list[str]) -> list[str]:
    """Make arguments that name existing relative paths absolute.

    The agent (or, for ``acp-conformance client``, the client) runs in a fresh temporary
    directory, where ``python agent.py`` or ``./bin/agent`` would no longer resolve.
    """
    out = []
    for arg in argv:
        path = Path(arg)
        if (
            not arg.startswith("-")
            and not path.is_absolute()
            and ("/" in arg or path.suffix)
            and path.exists()
        ):
            # absolute(), not resolve(): a venv's bin/python is a symlink, and resolving it
            # would run the base interpreter without the venv's packages.
            arg = str(path.absolute())
        out.append(arg)
    return out
