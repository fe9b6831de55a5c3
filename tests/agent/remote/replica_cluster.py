"""Three agent replicas on one PostgreSQL behind HAProxy, as real processes, for the fault
table (``test_fault_table.py``).

Each replica runs the compose file's replica command (``test_deploy_processes.replica_command``)
on a loopback port; HAProxy runs ``deploy/haproxy.cfg`` with a third server line added and a
stats listener, whose CSV says when HAProxy routes to every live replica again. Processes
are plain ``subprocess.Popen`` children so a module-scoped fixture can own them, kill one
with SIGKILL, pause one with SIGSTOP, and start a dead one again on the same port. Their
stderr is drained by a thread each (a full pipe would block the replica's logging), and the
``serving ACP on`` line is the readiness event.
"""

from __future__ import annotations

import csv
import io
import os
import shutil
import signal
import subprocess
import threading
from collections import deque
from collections.abc import Sequence
from pathlib import Path

import anyio
import httpx

from tests.agent.remote.remote_kit import TIMEOUT
from tests.agent.remote.test_deploy_processes import DEPLOY, ROOT, replica_command
from tests.agent.store.postgres_server import free_port

READY_LINE = "serving ACP on"


class Child:
    """One child process with its stderr drained; ``ready`` is set once ``ready_line`` shows."""

    def __init__(self, name: str, command: Sequence[str], env: dict[str, str]) -> None:
        self.name = name
        self.command = list(command)
        self.env = env
        self.process: subprocess.Popen[bytes] | None = None
        self.ready = threading.Event()
        self.tail: deque[str] = deque(maxlen=60)
        self.paused = False

    def start(self, ready_line: str | None) -> None:
        self.ready.clear()
        self.paused = False
        self.process = subprocess.Popen(
            self.command,
            env=self.env,
            cwd=ROOT,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )
        threading.Thread(
            target=self._drain, args=(self.process, ready_line), daemon=True, name=self.name
        ).start()

    def _drain(self, process: subprocess.Popen[bytes], ready_line: str | None) -> None:
        assert process.stderr is not None
        if ready_line is None:
            self.ready.set()
        for raw in process.stderr:
            line = raw.decode(errors="replace").rstrip()
            self.tail.append(line)
            if ready_line is not None and ready_line in line:
                self.ready.set()
        self.ready.set()  # exited: whoever waits finds out through `alive`

    def wait_ready(self) -> None:
        if not self.ready.wait(TIMEOUT) or not self.alive:
            raise AssertionError(f"{self.name} did not start:\n" + "\n".join(self.tail))

    @property
    def alive(self) -> bool:
        return self.process is not None and self.process.poll() is None

    @property
    def pid(self) -> int:
        assert self.process is not None
        return self.process.pid

    def kill9(self) -> None:
        assert self.process is not None
        self.process.kill()
        self.process.wait(TIMEOUT)

    def pause(self) -> None:
        os.kill(self.pid, signal.SIGSTOP)
        self.paused = True

    def resume(self) -> None:
        os.kill(self.pid, signal.SIGCONT)
        self.paused = False

    def stop(self) -> None:
        if self.process is None or self.process.poll() is not None:
            return
        if self.paused:
            self.resume()
        self.process.terminate()
        try:
            self.process.wait(TIMEOUT)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait(TIMEOUT)


class Replica(Child):
    def __init__(self, index: int, command: list[str], env: dict[str, str]) -> None:
        super().__init__(f"replica{index + 1}", command, env)
        self.index = index
        # The last --port wins (the image's entrypoint names 8765 before it).
        self.port = int(command[len(command) - 1 - command[::-1].index("--port") + 1])

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/acp"


def three_replica_config(folder: Path) -> Path:
    """deploy/haproxy.cfg with a third server (same settings as the second) and a stats
    listener on ``STATS_BIND`` (CSV at ``/stats;csv``)."""
    shipped = (DEPLOY / "haproxy.cfg").read_text()
    second = next(
        line for line in shipped.splitlines() if line.strip().startswith("server replica2")
    )
    third = second.replace("replica2", "replica3").replace("REPLICA2", "REPLICA3")
    third = third.replace("cookie r2", "cookie r3")
    config = shipped.replace(second, f"{second}\n{third}")
    config += '\nlisten stats\n    bind "${STATS_BIND}"\n    stats enable\n    stats uri /stats\n'
    path = folder / "haproxy-3.cfg"
    path.write_text(config)
    return path


class Cluster:
    """Three replicas and HAProxy; ``front`` is the URL clients use."""

    def __init__(self, folder: Path, tokens: Path, env: dict[str, str]) -> None:
        for index in range(3):
            home = folder / f"home{index}"
            home.mkdir(exist_ok=True)
            # The tests hold model turns open on purpose (for as long as a loaded machine
            # takes): the "model silent for 10 s" notice would be an update of the test's
            # making, and a transient one the history rightly does not keep.
            (home / "config.toml").write_text("model_notice_after = 3600\n")
        self.replicas = [
            Replica(
                index,
                replica_command(tokens, free_port()),
                {**env, "IAC_CODE_HOME": str(folder / f"home{index}")},
            )
            for index in range(3)
        ]
        front, stats = free_port(), free_port()
        self.front = f"http://127.0.0.1:{front}/acp"
        self.stats = f"http://127.0.0.1:{stats}/stats;csv"
        haproxy = shutil.which("haproxy")
        assert haproxy is not None
        proxy_env = {**os.environ, "ACP_BIND": f"127.0.0.1:{front}"}
        proxy_env["STATS_BIND"] = f"127.0.0.1:{stats}"
        for replica in self.replicas:
            proxy_env[f"REPLICA{replica.index + 1}_ADDR"] = f"127.0.0.1:{replica.port}"
        command = [haproxy, "-f", str(three_replica_config(folder)), "-db"]
        self.haproxy = Child("haproxy", command, proxy_env)

    def start(self) -> None:
        for replica in self.replicas:  # all at once: their imports overlap
            replica.start(READY_LINE)
        for replica in self.replicas:
            replica.wait_ready()
        self.haproxy.start(None)

    def stop(self) -> None:
        for child in (self.haproxy, *self.replicas):
            child.stop()

    async def ensure_running(self) -> None:
        """Every replica up (a killed one started again on its port, a paused one continued)
        and HAProxy routing to all three."""
        for replica in self.replicas:
            if replica.paused:
                replica.resume()
            if not replica.alive:
                replica.start(READY_LINE)
                await anyio.to_thread.run_sync(replica.wait_ready)
        await self.wait_routed()

    async def wait_routed(self) -> None:
        """Until HAProxy's health checks have every live, unpaused replica UP (bounded)."""
        wanted = {f"replica{r.index + 1}" for r in self.replicas if r.alive and not r.paused}
        states: dict[str, str] = {}
        async with httpx.AsyncClient(timeout=TIMEOUT) as http:
            with anyio.move_on_after(TIMEOUT * 2):
                while True:
                    try:
                        text = (await http.get(self.stats)).text
                    except httpx.TransportError as error:
                        text = ""  # HAProxy still starting
                        states = {"stats": repr(error)}
                    rows = csv.DictReader(io.StringIO(text.removeprefix("# ")))
                    found = {
                        row["svname"]: row["status"] for row in rows if row["pxname"] == "replicas"
                    }
                    states = found or states
                    if all(states.get(name) == "UP" for name in wanted):
                        return
                    # HAProxy pushes nothing: its checks run every 2 s, so ask again shortly.
                    await anyio.sleep(0.2)
        raise AssertionError(
            f"HAProxy does not route to {sorted(wanted)}: {states}\n" + "\n".join(self.haproxy.tail)
        )

    async def owner_of(self, connection_id: str, token: str) -> int:
        """The replica holding a connection, asked directly (the others answer 404)."""
        found = []
        ping = {"jsonrpc": "2.0", "method": "$/ping"}
        headers = {"authorization": f"Bearer {token}", "acp-connection-id": connection_id}
        async with httpx.AsyncClient(timeout=TIMEOUT) as http:
            for replica in self.replicas:
                if replica.alive and not replica.paused:
                    answer = await http.post(replica.url, json=ping, headers=headers)
                    if answer.status_code == 202:
                        found.append(replica.index)
        assert len(found) == 1, found
        return found[0]
