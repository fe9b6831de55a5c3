"""Run-wide judges: synchronous functions over everything the run recorded, called once every
scenario has finished (``@check(id, scenario=RUN_WIDE)``). They judge all the traffic
the scenarios produced, including traffic no scenario looked at on purpose.

:mod:`.wire` holds the rules every frame obeys (transport, envelope, ids), :mod:`.schemas`
the schema of every message, :mod:`.session_ids` the sessions updates name and when,
:mod:`.client_methods` the client methods the agent may call, :mod:`.shutdown` how each
process ended, :mod:`.consistency` what results say (root fields, current values,
capability-gated features, readable errors), :mod:`.tool_calls` tool-call ids and late
permission requests, :mod:`.foreground_state` v2's ``requires_action`` around questions to
the user, :mod:`.output` whether the output stayed within the checker's reading bounds,
:mod:`.trace_continuation` the editor's trace context; :mod:`.run_walk` has the helpers
they share.
"""
