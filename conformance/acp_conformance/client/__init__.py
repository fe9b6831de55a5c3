"""``acp-conformance client``: the checker plays the agent and judges an ACP client."""
