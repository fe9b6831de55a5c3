"""``acp-conformance proxy``: sit between an editor and an agent, relay their stdio
unchanged and judge the live traffic (``monitor``), reporting findings as they happen."""
