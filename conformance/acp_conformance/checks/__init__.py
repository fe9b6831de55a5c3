"""The checks, one module per requirement area, each run inside a scenario.

Each check binds to its rule's id (``@check(id, scenario=...)``; the rules are data, see
:mod:`acp_conformance.requirements`); the scenarios and the helpers the
checks drive are fixtures in :mod:`acp_conformance.scenarios`. The modules bind on
import; :mod:`acp_conformance.catalogue` imports every one of them and declares the order the
run takes them in.
"""
