"""ACP protocol version 2 beside version 1.

The agent (:mod:`iac_code.agent`) speaks v1 internally. A connection that negotiated v2 is
served through this package: :mod:`.handlers` turns v2 requests into calls on the same agent,
:mod:`.peer` turns what the agent sends (updates, permission prompts) into v2 shapes, and
:mod:`.translate` holds the pure v1 → v2 mappings both use. :mod:`.info` builds the v2
``initialize`` result and, like :mod:`iac_code.agent.info`, uses the standard library only.
"""
