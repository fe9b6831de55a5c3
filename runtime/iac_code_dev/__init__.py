"""Development tools for the iac-code agent: benchmarks, the demo and in-memory test doubles.

Not part of any published distribution: the development environment (the repository's root
``pyproject.toml``) installs it, and its ``iac-code-dev`` command runs ``bench`` and ``demo``.
"""
