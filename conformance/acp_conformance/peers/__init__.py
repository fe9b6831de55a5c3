"""Running the conformance checker against third-party ACP agents (the peers matrix).

``python -m acp_conformance.peers install`` puts each agent of :mod:`.agents` into a cache
folder; ``... run`` checks every installed agent and writes ``peers-matrix.md``/``.json``.
"""
