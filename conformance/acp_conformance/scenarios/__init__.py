"""Scenario fixtures: what the checks run in and drive, never a check itself.

:mod:`.catalog` names every scenario, :mod:`.check_context` gives a check its sandbox and
agent processes, :mod:`.v2_agent` the protocol-v2 scenario's agents (the shared v2 agent, the
fresh ones for turns, the echo turn and its resumes), and the other modules are helpers the
checks share (bad-line and silence probes, slow and scripted prompt turns, the remote
endpoint). The checks are in :mod:`acp_conformance.checks`, the run-wide judges in
:mod:`acp_conformance.judges`.
"""
