"""Scenario modules; importing this package registers every check with the registry."""

from . import (
    envelope,
    fuzz,
    gating,
    initialize,
    modes,
    overlap,
    prompting,
    protocol_v2,
    robustness,
    sessions,
    turns,
    wire,
)

__all__ = [
    "envelope",
    "fuzz",
    "gating",
    "initialize",
    "modes",
    "overlap",
    "prompting",
    "protocol_v2",
    "robustness",
    "sessions",
    "turns",
    "wire",
]
