"""The checker's harness: the agent process and its shutdown ladder, the raw NDJSON
connection, the recorder, and the checker's own client side (permissions, fs, terminals)."""
