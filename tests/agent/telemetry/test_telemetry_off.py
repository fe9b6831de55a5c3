"""Without the extra or without an endpoint, telemetry is a no-op that imports nothing.

The decision is read from the standard variables; a process that is not asked for
telemetry must not even import ``opentelemetry`` (the start-up and first-prompt costs stay
what they were), which a fresh interpreter checks after importing the whole runtime.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from iac_code import telemetry
from iac_code.telemetry.config import telemetry_config

ENDPOINT = "http://127.0.0.1:4318"


@pytest.mark.parametrize(
    ("env", "expected"),
    [
        pytest.param({}, None, id="nothing-set"),
        pytest.param({"OTEL_SERVICE_NAME": "x"}, None, id="service-name-only"),
        pytest.param(
            {"OTEL_EXPORTER_OTLP_ENDPOINT": ENDPOINT, "OTEL_SDK_DISABLED": "true"},
            None,
            id="sdk-disabled",
        ),
        pytest.param(
            {"OTEL_EXPORTER_OTLP_ENDPOINT": ENDPOINT}, (True, True, False), id="one-endpoint"
        ),
        pytest.param(
            {"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": ENDPOINT + "/v1/traces"},
            (True, False, False),
            id="traces-only",
        ),
        pytest.param(
            {"OTEL_EXPORTER_OTLP_ENDPOINT": ENDPOINT, "OTEL_TRACES_EXPORTER": "none"},
            (False, True, False),
            id="traces-exporter-none",
        ),
        pytest.param({"OTEL_METRICS_EXPORTER": "prometheus"}, (False, False, True), id="prom"),
        pytest.param(
            {"OTEL_EXPORTER_OTLP_ENDPOINT": ENDPOINT, "OTEL_METRICS_EXPORTER": "otlp,prometheus"},
            (True, True, True),
            id="otlp-and-prometheus",
        ),
    ],
)
def test_the_standard_variables_decide(
    env: dict[str, str], expected: tuple[bool, bool, bool] | None
) -> None:
    config = telemetry_config(env)
    if expected is None:
        assert config is None
    else:
        assert config is not None
        assert (config.otlp_traces, config.otlp_metrics, config.prometheus) == expected


def test_without_the_extra_nothing_is_started(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    import iac_code.telemetry.config as config_module

    monkeypatch.setattr(config_module, "EXTRA_MODULES", ("iac_code_no_such_module.sdk",))
    assert telemetry_config({"OTEL_EXPORTER_OTLP_ENDPOINT": ENDPOINT}) is None
    assert "otel extra is not installed" in caplog.text


def test_the_noop_hooks_hand_back_what_they_get() -> None:
    assert telemetry.recorder() is telemetry.NOOP
    params = {"name": "t", "arguments": {}}
    assert telemetry.with_trace_meta(params) is params
    assert telemetry.prometheus_text() is None
    assert telemetry.current_ids() is None
    with telemetry.tool_call("bash", "c1", {}) as call:
        marker = object()
        assert call.outcome(marker) is marker  # type: ignore[arg-type]


_PROBE = """
import json, os, sys
from pathlib import Path
import iac_code.stdio_runtime, iac_code.agent.acp_agent, iac_code.remote.app
from iac_code import telemetry
from iac_code.settings import Settings
from iac_code.logs import start_logging
start_logging(Settings(home=Path(sys.argv[1])))
print(json.dumps({
    "loaded": sorted(m for m in sys.modules if m.startswith("opentelemetry")),
    "noop": telemetry.recorder() is telemetry.NOOP,
}))
"""


@pytest.mark.parametrize(
    "extra_env",
    [
        pytest.param({}, id="no-endpoint"),
        pytest.param(
            {"OTEL_EXPORTER_OTLP_ENDPOINT": ENDPOINT, "OTEL_SDK_DISABLED": "true"}, id="disabled"
        ),
    ],
)
def test_a_runtime_not_asked_for_telemetry_imports_no_opentelemetry(
    tmp_path: object, extra_env: dict[str, str]
) -> None:
    import os

    env = {k: v for k, v in os.environ.items() if not k.startswith("OTEL_")} | extra_env
    done = subprocess.run(
        [sys.executable, "-c", _PROBE, str(tmp_path)],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    found = json.loads(done.stdout.strip().splitlines()[-1])
    assert found == {"loaded": [], "noop": True}
