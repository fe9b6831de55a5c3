"""Scenario modules; importing this package registers every check with the registry."""

from . import (
    consistency,
    envelope,
    fuzz,
    gating,
    http_transport,
    initialize,
    modes,
    overlap,
    prompting,
    protocol_v2,
    recall,
    robustness,
    sessions,
    turns,
    wire,
    ws_transport,
)

__all__ = [
    "consistency",
    "envelope",
    "fuzz",
    "gating",
    "http_transport",
    "initialize",
    "modes",
    "overlap",
    "prompting",
    "protocol_v2",
    "recall",
    "robustness",
    "sessions",
    "turns",
    "wire",
    "ws_transport",
]
