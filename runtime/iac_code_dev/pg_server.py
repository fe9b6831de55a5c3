"""A throwaway PostgreSQL server for the store tests and benchmarks: the distribution's
binaries, a temporary data folder, a Unix socket in it and 127.0.0.1 on a free port.

PostgreSQL refuses to run as root, so as root the server runs as the ``postgres`` user the
Debian package creates. Without the binaries (or that user) :func:`running_server` raises
:class:`PostgresUnavailable` saying why; the tests skip on it, the benchmark says n/a.
"""

from __future__ import annotations

import glob
import os
import pwd
import secrets
import shutil
import socket
import subprocess
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from urllib.parse import quote

INSTALL_HINT = "apt-get install -y postgresql"
SUPERUSER = "iac"
START_TIMEOUT_S = 120


def server_binaries() -> Path | None:
    """The folder holding ``initdb``, ``pg_ctl`` and ``postgres`` (newest version), or None."""
    found = sorted(
        glob.glob("/usr/lib/postgresql/*/bin/pg_ctl"),
        key=lambda path: int(Path(path).parts[-3]) if Path(path).parts[-3].isdigit() else 0,
    )
    if found:
        return Path(found[-1]).parent
    pg_ctl = shutil.which("pg_ctl")
    return Path(pg_ctl).parent if pg_ctl else None


class PostgresUnavailable(RuntimeError):
    """No server can be started here; the message says why and how to get one."""


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


class PostgresServer:
    """A running server; :meth:`url` names a database (and optionally a schema) on it."""

    def __init__(
        self, binaries: Path, folder: Path, port: int, drop: dict[str, int] | None = None
    ) -> None:
        self.binaries = binaries
        self.folder = folder
        self.data = folder / "data"
        self.port = port
        self.log = folder / "server.log"
        self._drop = drop or {}

    def run(self, *command: str | Path) -> None:
        """Run a server program in the folder (as the server's user); RuntimeError with its
        output and the log's tail when it fails."""
        done = subprocess.run(
            [str(part) for part in command],
            cwd=self.folder,
            capture_output=True,
            text=True,
            timeout=START_TIMEOUT_S,
            check=False,
            user=self._drop.get("user"),
            group=self._drop.get("group"),
        )
        if done.returncode != 0:
            details = done.stderr.strip() or done.stdout.strip()
            if self.log.exists():
                details += "\n" + self.log.read_text(errors="replace")[-2000:]
            raise RuntimeError(f"{Path(str(command[0])).name} failed: {details}")

    def start(self) -> None:
        """Start the server on its port and folder; returns once it accepts connections."""
        options = (
            f"-k {self.folder} -p {self.port} -c listen_addresses=127.0.0.1"
            " -c fsync=off -c synchronous_commit=off -c full_page_writes=off"
        )
        self.run(self.binaries / "pg_ctl", "-D", self.data, "-l", self.log, "-o", options,
                 "-w", "-t", str(START_TIMEOUT_S), "start")  # fmt: skip

    def stop(self, mode: str = "immediate") -> None:
        """Stop the server (``fast``: disconnect clients and shut down cleanly, as a restart
        by an operator does); returns once it is down."""
        self.run(self.binaries / "pg_ctl", "-D", self.data, "-m", mode, "-w", "stop")

    def url(self, *, schema: str | None = None, user: str = SUPERUSER, **options: str) -> str:
        settings = dict(options)
        if schema is not None:
            settings["search_path"] = schema
        url = f"postgresql://{user}@127.0.0.1:{self.port}/postgres"
        if settings:
            value = " ".join(f"-c {name}={setting}" for name, setting in settings.items())
            url += "?options=" + quote(value, safe="")
        return url

    def execute(self, *statements: str) -> None:
        """Run statements as the superuser (autocommit)."""
        import psycopg

        with psycopg.connect(self.url(), autocommit=True) as connection:
            for statement in statements:
                connection.execute(statement.encode())

    def new_schema(self) -> str:
        """A fresh empty schema: each test gets its own tables on the shared server."""
        name = f"t_{secrets.token_hex(6)}"
        self.execute(f"CREATE SCHEMA {name}")
        return name


def _as_server_user() -> dict[str, int]:
    """subprocess arguments that drop root to the ``postgres`` user (empty when not root)."""
    if os.geteuid() != 0:
        return {}
    try:
        entry = pwd.getpwnam("postgres")
    except KeyError:
        raise PostgresUnavailable(
            f"running as root and there is no postgres user ({INSTALL_HINT})"
        ) from None
    return {"user": entry.pw_uid, "group": entry.pw_gid}


@contextmanager
def running_server(binaries_folder: Path | None = None) -> Iterator[PostgresServer]:
    """Start a server in a temporary folder, yield it, stop it and remove the folder."""
    binaries = binaries_folder or server_binaries()
    if binaries is None:
        raise PostgresUnavailable(f"PostgreSQL server binaries not found ({INSTALL_HINT})")
    try:
        import psycopg  # noqa: F401
    except ImportError:
        raise PostgresUnavailable("psycopg is not installed (pip install -e '.[dev]')") from None
    drop = _as_server_user()
    folder = Path(tempfile.mkdtemp(prefix="iac-code-pg-"))
    if drop:
        os.chown(folder, drop["user"], drop["group"])
    server = PostgresServer(binaries, folder, _free_port(), drop)
    try:
        server.run(binaries / "initdb", "-D", server.data, "-U", SUPERUSER, "-A", "trust",
                   "-E", "UTF8", "--no-sync", "--no-instructions")  # fmt: skip
        server.start()
        try:
            yield server
        finally:
            server.stop()
    finally:
        shutil.rmtree(folder, ignore_errors=True)
