"""How a rule's ``citation`` (in ``rules/<area>.toml``) is written: the public text the rule
comes from, as a URL with its anchor, the section's name in brackets and, where the source
states the rule, its normative key phrase in double quotes after a colon. The forms in use:

- ACP documentation: ``https://agentclientprotocol.com/protocol/<page>#<anchor> (<Section>):
  "<phrase>"``; the v2 draft schema: ``.../protocol/v2/schema#<definition> (<Definition>, v2
  draft): <note>``;
- JSON-RPC 2.0: ``https://www.jsonrpc.org/specification#<anchor> (JSON-RPC 2.0 <§ section>):
  "<phrase>"``;
- an ACP RFD: ``https://agentclientprotocol.com/rfds/<name> (<Title> RFD); <note>``;
- a shape the published schema requires: ``.../protocol/schema#schema (Schema):``
  followed by :data:`SCHEMA_REQUIRES` and what it requires;
- an iac-code house rule, stricter than ACP: ``iac-code house rule (<rule>); basis: <the
  closest public source, in one of the forms above>``.

Several sources are joined with ``"; "``. The tier test holds a blocking rule to a cited
phrase with MUST / REQUIRED / SHALL, or to :data:`SCHEMA_REQUIRES`.
"""

from __future__ import annotations

#: The marker of a citation whose basis is a shape the published schema requires (the
#: tier test accepts it in place of a MUST phrase).
SCHEMA_REQUIRES = "required by the published ACP schema"
