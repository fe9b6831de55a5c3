"""The checks, one module per requirement area, each run inside a scenario.

Each check carries its requirement (``@requirement(id, tier, statement, citation,
scenario=...)``, see :mod:`acp_conformance.requirements`); the scenarios and the helpers the
checks drive are fixtures in :mod:`acp_conformance.scenarios`. The modules register on
import; :mod:`acp_conformance.catalogue` imports every one of them and declares the order the
run takes them in.
"""
