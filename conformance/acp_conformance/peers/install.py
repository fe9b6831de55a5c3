"""Installing peers into the cache: idempotent, logged, every step bounded in time.

A peer whose marker file exists is skipped. Every command is announced on the logger and its
output appended to ``CACHE/logs/NAME.log``, so a failed install can be read afterwards.
"""

from __future__ import annotations

import logging
import os
import shutil
import subprocess
import sys
import tarfile
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from .agents import NODE22_PACKAGE, NpmInstall, Peer, PipInstall
from .layout import node22_dir, node22_ready, path_with_node22, peer_dir, resolve

log = logging.getLogger("acp_conformance.peers")

DEFAULT_STEP_TIMEOUT = 900.0

Status = Literal["present", "installed", "failed", "skipped"]


@dataclass
class InstallOutcome:
    name: str
    status: Status
    detail: str = ""


class StepFailed(Exception):
    """One install command failed or ran out of time."""


@dataclass
class Installer:
    cache: Path
    step_timeout: float = DEFAULT_STEP_TIMEOUT

    def __post_init__(self) -> None:
        self.cache = self.cache.expanduser()

    # -- running commands ---------------------------------------------------------------

    def _log_path(self, name: str) -> Path:
        folder = self.cache / "logs"
        folder.mkdir(parents=True, exist_ok=True)
        return folder / f"{name}.log"

    def _run(self, name: str, argv: Sequence[str], *, env: dict[str, str] | None = None) -> None:
        printable = " ".join(argv)
        log.info("[%s] $ %s", name, printable)
        with self._log_path(name).open("a", encoding="utf-8") as out:
            out.write(f"$ {printable}\n")
            out.flush()
            try:
                completed = subprocess.run(
                    list(argv),
                    stdin=subprocess.DEVNULL,
                    stdout=out,
                    stderr=subprocess.STDOUT,
                    env=env,
                    timeout=self.step_timeout,
                    check=False,
                )
            except subprocess.TimeoutExpired as error:
                raise StepFailed(f"timed out after {self.step_timeout:g} s: {printable}") from error
            except OSError as error:
                raise StepFailed(f"could not run {argv[0]}: {error}") from error
        if completed.returncode != 0:
            raise StepFailed(
                f"exit {completed.returncode}: {printable} (see {self._log_path(name)})"
            )

    def _node22_env(self) -> dict[str, str]:
        env = dict(os.environ)
        env["PATH"] = path_with_node22(self.cache)
        return env

    # -- install kinds ------------------------------------------------------------------

    def ensure_node22(self) -> None:
        if node22_ready(self.cache):
            return
        self._run(
            "node22", ["npm", "install", "--prefix", str(node22_dir(self.cache)), NODE22_PACKAGE]
        )
        if not node22_ready(self.cache):
            raise StepFailed(f"{NODE22_PACKAGE} installed but no node binary appeared")

    def _pip(self, peer: Peer, spec: PipInstall) -> None:
        folder = peer_dir(self.cache, peer)
        venv = folder / "venv"
        if not (venv / "bin" / "python").exists():
            self._run(peer.name, [sys.executable, "-m", "venv", str(venv)])
        pip = str(venv / "bin" / "pip")
        self._run(peer.name, [pip, "install", "--disable-pip-version-check", *spec.requirements])
        if spec.sdist is not None:
            src = folder / "src"
            src.mkdir(parents=True, exist_ok=True)
            self._run(
                peer.name,
                [
                    pip,
                    "download",
                    "--disable-pip-version-check",
                    "--no-binary",
                    ":all:",
                    "--no-deps",
                    spec.sdist,
                    "-d",
                    str(src),
                ],
            )
            for archive in src.glob("*.tar.gz"):
                log.info("[%s] unpacking %s", peer.name, archive.name)
                with tarfile.open(archive) as tar:
                    tar.extractall(src, filter="data")

    def _npm(self, peer: Peer, spec: NpmInstall) -> None:
        self.ensure_node22()
        folder = peer_dir(self.cache, peer)
        folder.mkdir(parents=True, exist_ok=True)
        self._run(
            peer.name,
            ["npm", "install", "--prefix", str(folder), "--no-audit", "--no-fund", *spec.packages],
            env=self._node22_env(),
        )
        shipped = Path(__file__).parent / "files"
        for name in spec.files:
            shutil.copyfile(shipped / name, folder / name)

    # -- public -------------------------------------------------------------------------

    def install(self, peer: Peer) -> InstallOutcome:
        if peer.install is None:
            return InstallOutcome(peer.name, "skipped", "runs from the current environment")
        if resolve(peer, self.cache).installed:
            log.info("[%s] present, skipping", peer.name)
            return InstallOutcome(peer.name, "present")
        try:
            if isinstance(peer.install, PipInstall):
                self._pip(peer, peer.install)
            else:
                self._npm(peer, peer.install)
        except StepFailed as error:
            log.error("[%s] install failed: %s", peer.name, error)
            return InstallOutcome(peer.name, "failed", str(error))
        if not resolve(peer, self.cache).installed:
            return InstallOutcome(peer.name, "failed", f"marker missing: {peer.installed_marker}")
        log.info("[%s] installed", peer.name)
        return InstallOutcome(peer.name, "installed")

    def install_all(self, peers: Iterable[Peer]) -> list[InstallOutcome]:
        return [self.install(peer) for peer in peers]
