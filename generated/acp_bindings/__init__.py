"""Python bindings generated from ``schema/`` (see ``python -m acp_schema.codegen``)."""
