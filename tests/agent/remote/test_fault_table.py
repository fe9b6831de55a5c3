"""The fault table of hosted mode (issue 37, item 5): three replicas of the compose file's
replica command on one PostgreSQL, HAProxy with deploy/haproxy.cfg (plus a third server) in
front, and the faults a team's deployment meets, each as real processes:

a. kill -9 of the replica running a turn;
a2. kill -9 of the replica in the middle of a streamed reply (the write-ahead partials);
b. PostgreSQL restarted (fast stop, start) in the middle of a turn;
c. a replica paused (SIGSTOP) past its lease while a turn runs, then continued;
d. one principal reaching for another's session through every replica;
e. 200 sessions over three replicas from one client process.

The scripted model holds a turn on cue: a prompt ``HOLD:<name>`` streams some text and
lists the workspace (a tool that needs no permission), and the model call after the tool
result waits until the test releases ``<name>``; the fault strikes while it waits. Updates a
client received are compared with a replay of the stored session: history updates (message
text per messageId, tool calls and their final status) must all be there, none twice.

One PostgreSQL server and one set of replicas serve the module; each test first brings every
replica back (a killed one restarts on its port). Replicas hold leases for 4 s, so takeovers
happen within seconds, and their database URL says ``connect_timeout=2``, so a call made
while PostgreSQL is down fails after 2 s instead of 10.
"""

from __future__ import annotations

import os
import shutil
import threading
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest
from acp_scripted_llm import ScriptedLLMServer, Turn
from iac_code.store import new_session_id
from iac_code_dev.wire_client import WireClient
from iac_code_dev.wire_client.rpc_client import Reply, is_update

from tests.agent.process.llm_routes import last_user_text
from tests.agent.remote.llm_script import last_user_content
from tests.agent.remote.remote_kit import TIMEOUT, http_client
from tests.agent.remote.replica_cluster import Cluster
from tests.agent.remote.test_deploy_processes import HAPROXY_REQUIRED, assert_reconnect
from tests.agent.store.postgres_server import PostgresServer, running_server, skip_or_fail

pytestmark = [
    pytest.mark.anyio,
    pytest.mark.subprocess,
    pytest.mark.timing,
    pytest.mark.xdist_group("postgres"),
]

ALICE = "alice-token-for-the-fault-table"
BOB = "bob-token-for-the-fault-table"
HOLD = "HOLD:"
#: A prompt that streams a long reply slowly (300 chunks, 50 ms apart: ~15 s), for case a2.
LONG_STREAM = "LONG:"
LONG_REPLY = "tick " * 300
LEASE_SECONDS = "4"
IN_USE = {"sessionId": "session is in use by another process"}


def auth(token: str = ALICE) -> dict[str, str]:
    return {"authorization": f"Bearer {token}"}


# ---------------------------------------------------------------------- the held model


class Gates:
    """Model calls held until the test releases them (threading events: the scripted
    server answers each call on a thread of its own)."""

    def __init__(self) -> None:
        self._mutex = threading.Lock()
        self._arrived: dict[str, threading.Event] = {}
        self._opened: dict[str, threading.Event] = {}

    def _events(self, name: str) -> tuple[threading.Event, threading.Event]:
        with self._mutex:
            arrived = self._arrived.setdefault(name, threading.Event())
            opened = self._opened.setdefault(name, threading.Event())
            return arrived, opened

    def hold(self, name: str) -> None:
        arrived, opened = self._events(name)
        arrived.set()
        opened.wait(TIMEOUT * 2)

    async def wait_arrived(self, name: str) -> None:
        arrived, _ = self._events(name)
        assert await anyio.to_thread.run_sync(arrived.wait, TIMEOUT), f"{name} never held"

    def release(self, name: str) -> None:
        self._events(name)[1].set()

    def release_all(self) -> None:
        with self._mutex:
            for event in self._opened.values():
                event.set()

    def route(self, body: dict[str, Any]) -> Turn | dict[str, Any]:
        content = last_user_content(body)
        texts = [block.get("text", "") for block in content if block.get("type") == "text"]
        if texts:
            if texts[-1].startswith(HOLD):
                return Turn().text("Looking first. ", chunks=3).tool_use("list_files", {})
            if texts[-1].startswith(LONG_STREAM):
                return Turn().text(LONG_REPLY, chunks=300).timing(chunk_delay=0.05)
            return {"echo": True}
        # Only tool results: the held turn's second model call.
        name = last_user_text(body).removeprefix(HOLD)
        self.hold(name)
        return Turn().text(f"late answer {name}", chunks=2)


# ---------------------------------------------------------------------- fixtures


@pytest.fixture(scope="module")
def postgres_server() -> Iterator[PostgresServer]:
    with running_server() as server:
        yield server


@pytest.fixture(scope="module")
def gates() -> Iterator[Gates]:
    gates = Gates()
    yield gates
    gates.release_all()


@pytest.fixture(scope="module")
def held_llm(gates: Gates) -> Iterator[ScriptedLLMServer]:
    with ScriptedLLMServer(gates.route) as server:
        try:
            yield server
        finally:
            gates.release_all()  # no model call left waiting on a gate


@pytest.fixture(scope="module")
def store_url(postgres_server: PostgresServer) -> str:
    url = postgres_server.url(schema=postgres_server.new_schema())
    return url + "&connect_timeout=2"


@pytest.fixture(scope="module")
def shared_workspace(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("fault-ws")
    (folder / "main.tf").write_text('resource "null_resource" "x" {}\n')
    return folder


@pytest.fixture(scope="module")
def cluster(
    tmp_path_factory: pytest.TempPathFactory, held_llm: ScriptedLLMServer, store_url: str
) -> Iterator[Cluster]:
    if shutil.which("haproxy") is None:
        message = "haproxy is not installed (apt-get install -y haproxy): fault table not run"
        skip_or_fail(message, HAPROXY_REQUIRED)
    folder = tmp_path_factory.mktemp("cluster")
    tokens = folder / "acp-tokens"
    tokens.write_text(f"{ALICE} alice\n{BOB} bob\n")
    env = {
        **os.environ,
        "IAC_CODE_STORE_URL": store_url,
        "IAC_CODE_STORE_LEASE_SECONDS": LEASE_SECONDS,
        "ANTHROPIC_API_KEY": "test-key",
        "ANTHROPIC_BASE_URL": held_llm.url,
    }
    cluster = Cluster(folder, tokens, env)
    try:
        cluster.start()
        yield cluster
    finally:
        cluster.stop()


# ---------------------------------------------------------------------- comparing histories


def message_texts(updates: list[dict[str, Any]]) -> dict[tuple[str, Any], str]:
    """Each message's text so far (its chunks joined), by (chunk kind, messageId)."""
    texts: dict[tuple[str, Any], str] = {}
    for update in updates:
        kind = update["sessionUpdate"]
        if kind.endswith("_chunk"):
            key = (kind, update.get("messageId"))
            texts[key] = texts.get(key, "") + update["content"].get("text", "")
    return texts


def history(updates: list[dict[str, Any]]) -> Counter[tuple[Any, ...]]:
    """The history an update list shows: each message's text (by messageId), each tool call
    and its final status. A Counter, so anything shown twice counts twice."""
    items: Counter[tuple[Any, ...]] = Counter()
    for update in updates:
        kind = update["sessionUpdate"]
        if kind == "tool_call":
            items[("tool_call", update["toolCallId"])] += 1
        elif kind == "tool_call_update" and update.get("status") in ("completed", "failed"):
            items[("tool_result", update["toolCallId"], update["status"])] += 1
    for (kind, message_id), text in message_texts(updates).items():
        items[(kind, message_id, text)] += 1
    return items


def lost_and_duplicated(
    received: list[dict[str, Any]], replayed: list[dict[str, Any]]
) -> tuple[list[Any], list[Any]]:
    """What the client had received but the replay lacks, and what the replay shows twice
    (a message whose text holds a received message's text twice counts as shown twice)."""
    seen, again = history(received), history(replayed)
    lost = [item for item in seen if item not in again]
    duplicated = [item for item, count in again.items() if count > 1]
    for item in seen:
        if item[0].endswith("_chunk") and item not in again:
            kind, message_id, text = item
            whole = next((i for i in again if i[:2] == (kind, message_id)), None)
            if whole is not None and text and whole[2].count(text) > 1:
                duplicated.append(item)
    return lost, duplicated


def session_updates_since(client: WireClient, mark: int, session_id: str) -> list[dict[str, Any]]:
    """The session's updates among the frames received from position ``mark`` on.

    A ``session/load`` answer comes on the connection stream and the replay on the
    session's stream, two HTTP responses whose order of arrival nobody promises; so the
    replay is read after a later answer on the session stream (the next prompt's), which
    can only come after it.
    """
    return [
        frame["params"]["update"]
        for frame in client.frames[mark:]
        if is_update(frame) and frame["params"]["sessionId"] == session_id
    ]


async def load_when_free(client: WireClient, session_id: str, cwd: Path) -> Reply:
    """session/load, asked again while another process's lease keeps the session "in use"
    (it lapses LEASE_SECONDS after its owner stopped renewing it)."""
    with anyio.fail_after(TIMEOUT):
        while True:
            reply = await client.load(session_id, cwd)
            error = reply.frame.get("error")
            if error is None or error.get("data") != IN_USE:
                return reply
            await anyio.sleep(0.25)  # a lease runs out on the clock; nothing announces it


async def reload_and_prompt(cluster: Cluster, session_id: str, cwd: Path) -> list[dict[str, Any]]:
    """Load the session through the balancer on a new connection (once a killed owner's lease
    has run out), prompt it once, and return the replayed updates."""
    async with http_client(cluster.front, **auth()) as client:
        await client.initialize()
        await client.transport.open_stream(session_id)
        mark = len(client.frames)
        loaded = await load_when_free(client, session_id, cwd)
        assert "result" in loaded.frame, loaded.frame
        after = await client.prompt(session_id, "after the kill")
        assert after["stopReason"] == "end_turn"
        return session_updates_since(client, mark, session_id)


def stored_events(store_url: str, session_id: str) -> list[tuple[int, dict[str, Any]]]:
    import psycopg

    with psycopg.connect(store_url) as connection:
        rows = connection.execute(
            "SELECT seq, event FROM iac_session_events WHERE session_id = %s ORDER BY seq",
            (session_id,),
        ).fetchall()
    return [(int(seq), event) for seq, event in rows]


async def start_held_turn(
    client: WireClient, cwd: Path, gates: Gates, name: str
) -> tuple[str, Any]:
    """A new session whose prompt is held by the model after its first step (text and a
    finished tool call, all received by the client)."""
    await client.initialize()
    session_id = await client.new_session(cwd)
    prompt_id = await client.start_prompt(session_id, f"{HOLD}{name}")
    await gates.wait_arrived(name)
    # The first step's updates left before the held call; wait until they have arrived.
    await client.wait_for(
        lambda: any(item[0] == "tool_result" for item in history(client.updates(session_id))),
        what="the first step's updates",
    )
    return session_id, prompt_id


def report(case: str, **numbers: Any) -> None:
    """One line per case in the test output (-s): what the client saw, what was lost."""
    print(f"\nFAULT {case}: " + ", ".join(f"{k}={v}" for k, v in numbers.items()))


# ---------------------------------------------------------------------- the table


async def test_d_a_principal_never_reaches_another_principals_session_on_any_replica(
    cluster: Cluster, shared_workspace: Path
) -> None:
    await cluster.ensure_running()
    async with http_client(cluster.front, **auth(ALICE)) as alice:
        await alice.initialize()
        session_id = await alice.new_session(shared_workspace)
        assert (await alice.prompt(session_id, "mine"))["stopReason"] == "end_turn"
        await alice.request("session/close", {"sessionId": session_id}, stream=session_id)
    nobody = new_session_id()
    for replica in cluster.replicas:
        async with http_client(replica.url, **auth(ALICE)) as owner:
            await owner.initialize()
            listed = await owner.request("session/list", {})
            assert session_id in {s["sessionId"] for s in listed["sessions"]}
        async with http_client(replica.url, **auth(BOB)) as bob:
            await bob.initialize()
            listed = await bob.request("session/list", {})
            assert session_id not in {s["sessionId"] for s in listed["sessions"]}
            answers: dict[str, list[Any]] = {}
            for target in (session_id, nobody):
                await bob.transport.open_stream(target)
                load = (await bob.load(target, shared_workspace)).frame["error"]
                params = {"sessionId": target, "prompt": [{"type": "text", "text": "hi"}]}
                prompt = (await bob.call("session/prompt", params, stream=target)).frame["error"]
                answers[target] = [load, prompt]
            assert answers[session_id] == answers[nobody]
            assert answers[nobody][0]["code"] == -32602
    report("d (cross-principal)", replicas=3, other_principals_session="answered as unknown")


async def test_e_200_sessions_over_three_replicas_without_an_error(
    cluster: Cluster, shared_workspace: Path
) -> None:
    await cluster.ensure_running()
    count, at_once = 200, 20
    limiter = anyio.CapacityLimiter(at_once)
    errors: list[str] = []
    owners: Counter[int] = Counter()

    async def one(index: int) -> None:
        async with limiter:
            try:
                async with http_client(cluster.front, **auth()) as client:
                    await client.initialize()
                    session_id = await client.new_session(shared_workspace)
                    result = await client.prompt(session_id, f"short {index}")
                    assert result["stopReason"] == "end_turn", result
                    assert f"short {index}" in client.text_of(session_id)
                    connection_id = client.transport.connection_id
                    assert connection_id is not None
                    owners[await cluster.owner_of(connection_id, ALICE)] += 1
                    params = {"sessionId": session_id}
                    await client.request("session/close", params, stream=session_id)
                    assert (await client.transport.delete()).status_code == 202
            except Exception as error:  # counted: the table reports every one
                errors.append(f"{index}: {error!r}")

    async with anyio.create_task_group() as group:
        for index in range(count):
            group.start_soon(one, index)
    report("e (200 sessions)", errors=len(errors), per_replica=dict(sorted(owners.items())))
    assert errors == []
    assert set(owners) == {0, 1, 2}
    assert sum(owners.values()) == count


async def test_c_a_paused_replica_loses_its_session_and_its_late_writes_are_refused(
    cluster: Cluster, shared_workspace: Path, gates: Gates, store_url: str
) -> None:
    await cluster.ensure_running()
    async with http_client(cluster.front, **auth()) as first:
        session_id, prompt_id = await start_held_turn(first, shared_workspace, gates, "pause")
        assert first.transport.connection_id is not None
        paused = cluster.replicas[await cluster.owner_of(first.transport.connection_id, ALICE)]
        before = stored_events(store_url, session_id)
        paused.pause()
        try:
            other = next(r for r in cluster.replicas if r is not paused)
            async with http_client(other.url, **auth()) as second:
                await second.initialize()
                await second.transport.open_stream(session_id)
                loaded = await load_when_free(second, session_id, shared_workspace)
                assert "result" in loaded.frame, loaded.frame
                after = await second.prompt(session_id, "after the takeover")
                assert after["stopReason"] == "end_turn"
        finally:
            paused.resume()
        # While it was stopped HAProxy's checks marked it down; until they see it again, the
        # first client's requests would be sent to a replica that does not hold its connection.
        await cluster.wait_routed()
        gates.release("pause")
        answer = (await first.reply(prompt_id)).frame
        error = answer.get("error")
        assert error is not None, answer
        assert error["code"] == -32603
        assert error["message"] == (
            "The session store cannot be written: another iac-code process took the session over."
        )
        stored = stored_events(store_url, session_id)
        # Closing the session on the replica that lost it neither fails nor writes.
        closed = await first.call("session/close", {"sessionId": session_id}, stream=session_id)
        assert "result" in closed.frame, closed.frame
        assert stored_events(store_url, session_id) == stored
    assert paused.alive
    seqs = [seq for seq, _ in stored]
    assert seqs == list(range(len(seqs)))  # one writer at a time: no gap, no interleaving
    assert stored[: len(before)] == before
    # The paused turn's answer, had any write of it got through after the takeover.
    late_appends = [event for _, event in stored if "late answer" in str(event)]
    assert late_appends == []
    kinds = [event["type"] for _, event in stored]
    texts = [str(event.get("content")) for _, event in stored if event["type"] == "user_message"]
    assert "after the takeover" in texts[-1] and kinds[-1] == "assistant_message"
    report(
        "c (SIGSTOP past the lease)",
        client_saw=f"{error['code']} {error['message']}",
        late_appends_stored=len(late_appends),
        stored_events=len(stored),
    )


async def test_a_kill_9_of_the_replica_running_a_turn_loses_and_repeats_nothing(
    cluster: Cluster, shared_workspace: Path, gates: Gates
) -> None:
    await cluster.ensure_running()
    killed = None
    try:
        async with http_client(cluster.front, **auth()) as client:
            session_id, _ = await start_held_turn(client, shared_workspace, gates, "kill")
            connection_id = client.transport.connection_id
            assert connection_id is not None
            killed = cluster.replicas[await cluster.owner_of(connection_id, ALICE)]
            received = client.updates(session_id)
            killed.kill9()
    except* (httpx.TransportError, anyio.BrokenResourceError):
        pass  # the streams through the balancer broke with the replica: expected
    assert killed is not None and not killed.alive
    gates.release("kill")
    # The client's next request for its connection reaches a survivor, which says to reconnect.
    async with httpx.AsyncClient(timeout=TIMEOUT) as http:
        ping = {"jsonrpc": "2.0", "method": "$/ping"}
        headers = {**auth(), "acp-connection-id": connection_id}
        assert_reconnect(await http.post(cluster.front, json=ping, headers=headers))
    replayed = await reload_and_prompt(cluster, session_id, shared_workspace)
    lost, duplicated = lost_and_duplicated(received, replayed)
    assert history(received)  # the client had seen text and a tool call
    assert (lost, duplicated) == ([], [])
    report(
        "a (kill -9 mid-turn)",
        client_saw="404 reconnect, then load on a survivor",
        received=sum(history(received).values()),
        lost=len(lost),
        duplicated=len(duplicated),
    )


def lost_and_extra_chars(seen: str, replayed: str, whole: str) -> tuple[int, int]:
    """For a reply cut short: how many characters the client had seen that the replay lacks,
    and how many replayed characters differ from the reply the model sent (a piece repeated
    or out of place). The replay may hold more than was seen: stored, not yet delivered."""
    return len(seen) - _shared_start(seen, replayed), len(replayed) - _shared_start(replayed, whole)


def _shared_start(one: str, other: str) -> int:
    """How many characters the two strings begin with in common."""
    differ = (index for index, (a, b) in enumerate(zip(one, other, strict=False)) if a != b)
    return next(differ, min(len(one), len(other)))


async def test_a2_a_kill_9_in_the_middle_of_a_streamed_reply_loses_no_chunk_the_client_saw(
    cluster: Cluster, shared_workspace: Path
) -> None:
    await cluster.ensure_running()
    seen_before_kill = 10
    killed = None
    try:
        async with http_client(cluster.front, **auth()) as client:
            await client.initialize()
            session_id = await client.new_session(shared_workspace)
            await client.start_prompt(session_id, f"{LONG_STREAM} stream slowly")
            await client.wait_for(
                lambda: (
                    sum(
                        u["sessionUpdate"] == "agent_message_chunk"
                        for u in client.updates(session_id)
                    )
                    >= seen_before_kill
                ),
                what=f"{seen_before_kill} streamed chunks",
            )
            connection_id = client.transport.connection_id
            assert connection_id is not None
            killed = cluster.replicas[await cluster.owner_of(connection_id, ALICE)]
            killed.kill9()
            received = list(client.updates(session_id))
    except* (httpx.TransportError, anyio.BrokenResourceError):
        pass  # the streams through the balancer broke with the replica: expected
    assert killed is not None and not killed.alive
    seen = message_texts(received)
    assert len(seen) == 1, seen  # one reply, cut short
    ((key, seen_text),) = seen.items()
    assert seen_text != LONG_REPLY  # the kill came mid-stream
    replayed = await reload_and_prompt(cluster, session_id, shared_workspace)
    replayed_text = message_texts(replayed).get(key, "")
    # Everything seen, then at most what was stored but not yet delivered; nothing twice.
    lost, extra = lost_and_extra_chars(seen_text, replayed_text, LONG_REPLY)
    report(
        "a2 (kill -9 mid-stream)",
        client_saw=f"{len(seen_text)} chars in {sum(1 for _ in received)} updates",
        replayed_chars=len(replayed_text),
        lost_chars=lost,
        extra_chars=extra,
    )
    assert (lost, extra) == (0, 0), (seen_text, replayed_text)


async def test_b_postgres_restarted_mid_turn_is_a_clear_error_and_nothing_dies(
    cluster: Cluster, shared_workspace: Path, gates: Gates, postgres_server: PostgresServer
) -> None:
    await cluster.ensure_running()
    async with http_client(cluster.front, **auth()) as client:
        session_id, prompt_id = await start_held_turn(client, shared_workspace, gates, "restart")
        received = client.updates(session_id)
        await anyio.to_thread.run_sync(postgres_server.stop, "fast")
        try:
            gates.release("restart")
            answer = (await client.reply(prompt_id)).frame
        finally:
            await anyio.to_thread.run_sync(postgres_server.start)
        error = answer.get("error")
        assert error is not None, answer
        assert (error["code"], error["message"]) == (
            -32603,
            "The session store cannot be written: the database is unreachable.",
        )
        assert all(replica.alive for replica in cluster.replicas)
        await cluster.wait_routed()  # /readyz said 503 while the database was down
        # The same connection loads the session again (it was closed there after the error)
        # and prompts: the replica's pool replaced its dead connections.
        mark = len(client.frames)
        loaded = await client.load(session_id, shared_workspace)
        assert "result" in loaded.frame, loaded.frame
        after = await client.prompt(session_id, "after the restart")
        assert after["stopReason"] == "end_turn"
        replayed = session_updates_since(client, mark, session_id)
        lost, duplicated = lost_and_duplicated(received, replayed)
        assert (lost, duplicated) == ([], [])
    for replica in cluster.replicas:  # every replica's pool recovered
        async with http_client(replica.url, **auth()) as other:
            await other.initialize()
            await other.new_session(shared_workspace)
    report(
        "b (PostgreSQL restart mid-turn)",
        client_saw=f"{error['code']} {error['message']}",
        lost=len(lost),
        duplicated=len(duplicated),
    )
