"""Scenario fixtures: what the checks run in and drive, never a check itself.

:mod:`.catalog` names every scenario, :mod:`.check_context` gives a check its sandbox and
agent processes, and the other modules are helpers the checks share (bad-line and silence
probes, slow and scripted prompt turns, the remote endpoint). The checks are in
:mod:`acp_conformance.checks`, the run-wide judges in :mod:`acp_conformance.judges`.

Not yet moved: the ``version.v2-*`` checks of ``protocol_v2*.py`` (with the v2 agent
helpers of ``protocol_v2.py``) still live here; they already carry their requirements.
"""
