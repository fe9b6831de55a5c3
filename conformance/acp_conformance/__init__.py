"""acp-conformance: a requirement-by-requirement checker for any ACP agent."""

__version__ = "0.1.0"
