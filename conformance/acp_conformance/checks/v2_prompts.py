"""version.v2-* (prompts): protocol version 2's prompt content: each kind of block the v2 agent
advertises under ``capabilities.session.prompt`` (image, audio, embeddedContext) is accepted in
a prompt, and its turn ends idle without an error. Out of scope for a kind the agent does not
advertise. The rows and their one check body are the table of :mod:`.prompt_content`, shared
with v1's content rules; they register here, where the v2 scenario's order places them."""

from __future__ import annotations

from ..scenarios.v2_agent import V2_SCENARIO
from .families import register_family
from .prompt_content import V2_CONTENT, judge_content_row

register_family(V2_CONTENT, V2_SCENARIO, judge_content_row, module=__name__)
