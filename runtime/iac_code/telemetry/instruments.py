"""The metric instruments the agent records (names from the OpenTelemetry GenAI conventions
where they define one, ``iac_code.*`` for the agent's own)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from opentelemetry.metrics import Counter, Histogram, Meter, UpDownCounter

# Bucket bounds the conventions advise: tokens grow by powers of 4, seconds double from 10 ms.
TOKEN_BUCKETS = [float(4**power) for power in range(14)]
SECOND_BUCKETS = [0.01 * 2**power for power in range(14)]


@dataclass(frozen=True)
class Instruments:
    token_usage: Histogram
    operation_duration: Histogram
    time_to_first_chunk: Histogram
    agent_duration: Histogram
    tool_duration: Histogram
    client_request_duration: Histogram
    turns: Counter
    permission_outcomes: Counter
    open_sessions: UpDownCounter
    open_connections: UpDownCounter

    @classmethod
    def create(cls, meter: Meter) -> Instruments:
        def seconds(name: str, description: str) -> Histogram:
            return meter.create_histogram(
                name, "s", description, explicit_bucket_boundaries_advisory=SECOND_BUCKETS
            )

        return cls(
            token_usage=meter.create_histogram(
                "gen_ai.client.token.usage",
                "{token}",
                "Input and output tokens of each model request",
                explicit_bucket_boundaries_advisory=TOKEN_BUCKETS,
            ),
            operation_duration=seconds(
                "gen_ai.client.operation.duration", "Duration of each model request"
            ),
            time_to_first_chunk=seconds(
                "gen_ai.client.operation.time_to_first_chunk",
                "From sending a model request to its first streamed chunk",
            ),
            agent_duration=seconds("gen_ai.invoke_agent.duration", "Duration of each prompt turn"),
            tool_duration=seconds(
                "gen_ai.execute_tool.duration", "Duration of each tool call, by tool and outcome"
            ),
            client_request_duration=seconds(
                "iac_code.client.request.duration",
                "Agent-to-client requests (permission, fs, terminal), by method and outcome",
            ),
            turns=meter.create_counter(
                "iac_code.turns", "{turn}", "Prompt turns ended, by stop reason or error type"
            ),
            permission_outcomes=meter.create_counter(
                "iac_code.permission.outcomes",
                "{request}",
                "Permission requests answered, by outcome (allowed, denied, cancelled)",
            ),
            open_sessions=meter.create_up_down_counter(
                "iac_code.sessions.open", "{session}", "Sessions open in this process"
            ),
            open_connections=meter.create_up_down_counter(
                "iac_code.connections.open", "{connection}", "Client connections open"
            ),
        )
