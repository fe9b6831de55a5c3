"""Scenario modules; importing this package registers every check with the registry."""

from . import (
    consistency,
    envelope,
    fuzz,
    gating,
    initialize,
    modes,
    overlap,
    prompting,
    robustness,
    sessions,
    turns,
    wire,
)

__all__ = [
    "consistency",
    "envelope",
    "fuzz",
    "gating",
    "initialize",
    "modes",
    "overlap",
    "prompting",
    "robustness",
    "sessions",
    "turns",
    "wire",
]
