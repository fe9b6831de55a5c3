"""acp-conformance: a requirement-by-requirement checker for any ACP agent."""
