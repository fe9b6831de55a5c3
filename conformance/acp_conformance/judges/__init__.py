"""Run-wide judges: synchronous functions over everything the run recorded, called once every
scenario has finished (``@requirement(..., scenario=RUN_WIDE)``). They judge all the traffic
the scenarios produced, including traffic no scenario looked at on purpose.

:mod:`.wire` holds the rules every frame obeys (transport, envelope, ids, schemas, session
ids of updates, shutdown), :mod:`.consistency` what results say (root fields, current values,
capability-gated features, readable errors).
"""
