"""Whether telemetry is on, read from the standard ``OTEL_*`` variables (stdlib only).

The SDK is loaded only when something would receive its data: an OTLP endpoint for traces
or metrics, or ``prometheus`` among ``OTEL_METRICS_EXPORTER`` (the page the HTTP transport
serves at ``/metrics``). ``OTEL_SDK_DISABLED=true`` turns everything off, and without the
``otel`` extra nothing is loaded either (said once in the log).
"""

from __future__ import annotations

import importlib.util
import logging
from collections.abc import Mapping
from dataclasses import dataclass

log = logging.getLogger(__name__)

#: The modules the ``otel`` extra brings (``iac-code-acp[otel]``).
EXTRA_MODULES = ("opentelemetry.sdk", "opentelemetry.exporter.otlp.proto.http")


@dataclass(frozen=True)
class TelemetryConfig:
    #: Spans go to the OTLP/HTTP endpoint of the environment.
    otlp_traces: bool
    #: Metrics go to the OTLP/HTTP endpoint of the environment.
    otlp_metrics: bool
    #: Metrics are kept for the Prometheus page (``/metrics`` on the HTTP transport).
    prometheus: bool
    #: Prompt text and tool arguments/results are recorded on spans (``--otel-content``).
    content: bool = False


def _names(value: str | None) -> set[str]:
    return {part.strip().lower() for part in (value or "").split(",") if part.strip()}


def _exporter_on(env: Mapping[str, str], kind: str) -> bool:
    """OTLP for ``kind`` (TRACES or METRICS): an endpoint is set and the exporter list,
    when given, names otlp."""
    endpoint = env.get("OTEL_EXPORTER_OTLP_ENDPOINT") or env.get(
        f"OTEL_EXPORTER_OTLP_{kind}_ENDPOINT"
    )
    chosen = _names(env.get(f"OTEL_{kind}_EXPORTER"))
    return bool(endpoint) and (not chosen or "otlp" in chosen)


def extra_installed() -> bool:
    try:
        return all(importlib.util.find_spec(name) is not None for name in EXTRA_MODULES)
    except (ImportError, ValueError):
        return False


def telemetry_config(env: Mapping[str, str], *, content: bool = False) -> TelemetryConfig | None:
    """The configuration the environment asks for, or None: telemetry stays a no-op."""
    if env.get("OTEL_SDK_DISABLED", "").strip().lower() == "true":
        return None
    config = TelemetryConfig(
        otlp_traces=_exporter_on(env, "TRACES"),
        otlp_metrics=_exporter_on(env, "METRICS"),
        prometheus="prometheus" in _names(env.get("OTEL_METRICS_EXPORTER")),
        content=content,
    )
    if not (config.otlp_traces or config.otlp_metrics or config.prometheus):
        return None
    if not extra_installed():
        log.warning(
            "OpenTelemetry is configured but the otel extra is not installed"
            " (pip install 'iac-code-acp[otel]'); no telemetry is sent"
        )
        return None
    protocol = env.get("OTEL_EXPORTER_OTLP_PROTOCOL", "http/protobuf")
    if protocol != "http/protobuf":
        log.warning("OTEL_EXPORTER_OTLP_PROTOCOL=%s: only http/protobuf is sent", protocol)
    return config
