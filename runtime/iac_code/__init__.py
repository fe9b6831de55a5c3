"""iac-code: an infrastructure-as-code coding agent served over the Agent Client Protocol."""

__version__ = "0.1.0"
