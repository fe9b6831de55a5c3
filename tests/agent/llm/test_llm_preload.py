"""The background preload of the model SDK: it pauses while requests are handled, never
deadlocks, and its warm-up request never touches the network."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest
from iac_code.agent.model_access import ModelAccess
from iac_code.llm import preload
from iac_code.llm.anthropic_client import AnthropicModelClient
from iac_code.llm.preload import IdleGate, Preloader
from iac_code.settings import Settings

WAIT = 60.0


class _NeverWaits(threading.Condition):
    """The gate's condition in tests of a pause that must return at once: any wait on it
    fails the test there and then, so "did not wait" is observed, not timed."""

    def wait(self, timeout: float | None = None) -> bool:
        raise AssertionError(f"the pause waited (for up to {timeout} s)")


def _gate_that_must_not_wait(gate: IdleGate) -> IdleGate:
    gate._condition = _NeverWaits()
    return gate


@pytest.fixture(autouse=True)
def _no_quiet_period(monkeypatch: pytest.MonkeyPatch) -> None:
    """The tests below are about pausing; the quiet period before the start has its own."""
    monkeypatch.setattr(preload, "QUIET_SECONDS", 0.0)


def test_the_preload_begins_only_once_the_agent_has_been_quiet(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(preload, "QUIET_SECONDS", 0.3)
    gate = IdleGate()
    loader = Preloader(gate)
    began = threading.Event()
    gate.enter()
    gate.leave()  # a request just ended: the quiet period starts now
    loader.start(lambda _checkpoint: began.set())
    assert not began.wait(0.05)  # idle, but not quiet for long enough yet
    gate.enter()
    gate.leave()  # another request: the quiet period starts again
    assert loader.wait(WAIT)
    assert began.is_set()


def test_a_turn_that_needs_the_sdk_ends_the_quiet_period(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(preload, "QUIET_SECONDS", WAIT * 10)  # would outlast every wait here
    gate = IdleGate()
    loader = Preloader(gate)
    loader.start(lambda _checkpoint: None)
    assert not loader.wait(0.05)
    gate.open_for_good()  # what hurry() does to the process's gate
    assert loader.wait(WAIT)


def test_preload_gate_pause_returns_at_once_when_idle() -> None:
    gate = _gate_that_must_not_wait(IdleGate())
    gate.pause(limit=WAIT)  # nothing is being handled: no wait at all
    assert not gate.busy


def test_preload_gate_pause_waits_until_the_request_ends() -> None:
    gate = IdleGate()
    gate.enter()
    paused = threading.Event()
    resumed = threading.Event()

    def worker() -> None:
        paused.set()
        gate.pause(limit=WAIT)
        resumed.set()

    thread = threading.Thread(target=worker, daemon=True)
    thread.start()
    assert paused.wait(WAIT)
    assert not resumed.wait(0.05)  # still held while the request runs
    gate.leave()
    assert resumed.wait(WAIT)
    thread.join(WAIT)


def test_preload_gate_gives_up_once_per_busy_period() -> None:
    gate = IdleGate()
    gate.enter()
    gate.pause(limit=0.01)  # times out: the request may be waiting for the preload itself
    _gate_that_must_not_wait(gate)
    gate.pause(limit=WAIT)  # so the same busy period never pauses it again (returns at once)
    gate.leave()
    gate.enter()  # a new busy period: pausing applies again
    gate.open_for_good()  # ... unless someone needs the SDK now
    gate.pause(limit=WAIT)  # (returns at once too)


def test_preload_gate_pauses_again_in_a_new_busy_period() -> None:
    """The control of the test above: after giving up once, a new busy period does wait."""
    gate = IdleGate()
    gate.enter()
    gate.pause(limit=0.01)
    gate.leave()
    gate.enter()
    _gate_that_must_not_wait(gate)
    with pytest.raises(AssertionError, match="the pause waited"):
        gate.pause(limit=WAIT)


def test_preload_thread_stops_at_checkpoints_while_busy() -> None:
    gate = IdleGate()
    loader = Preloader(gate)
    first_step = threading.Event()
    second_step = threading.Event()

    def work(checkpoint: object) -> None:
        assert callable(checkpoint)
        first_step.set()
        checkpoint()
        second_step.set()

    gate.enter()
    loader.start(work)
    assert not first_step.wait(0.05)  # it does not even begin while a request runs
    gate.leave()
    assert loader.wait(WAIT)
    assert first_step.is_set() and second_step.is_set()


def test_preload_thread_pauses_at_imports_while_busy(tmp_path: Path) -> None:
    gate = IdleGate()
    loader = Preloader(gate)
    (tmp_path / "iac_preload_probe_a.py").write_text("import iac_preload_probe_b\n")
    (tmp_path / "iac_preload_probe_b.py").write_text("VALUE = 1\n")
    started = threading.Event()
    hold = threading.Event()

    def work(_checkpoint: object) -> None:
        started.set()
        hold.wait(WAIT)
        gate.enter()  # a request arrives while the preload imports
        releaser = threading.Timer(0.05, gate.leave)
        releaser.start()
        import sys

        sys.path.insert(0, str(tmp_path))
        try:
            import iac_preload_probe_a  # noqa: F401  (pauses at its import until idle)
        finally:
            sys.path.remove(str(tmp_path))
        assert not gate.busy  # the import went on only once the request had ended

    loader.start(work)
    assert started.wait(WAIT)
    hold.set()
    assert loader.wait(WAIT)


def test_a_failing_preload_is_only_logged() -> None:
    loader = Preloader(IdleGate())

    def work(_checkpoint: object) -> None:
        raise RuntimeError("no SDK here")

    loader.start(work)
    assert loader.wait(WAIT)


def test_warm_up_streams_a_request_without_the_network() -> None:
    # Port 9 (discard) has no listener: a real request would fail to connect.
    client = AnthropicModelClient("test-key", "http://127.0.0.1:9")
    calls: list[int] = []
    client.warm_up(lambda: calls.append(1))
    assert calls  # checkpoints between the steps
    assert client._sdk_client is not None  # the real client is built and ready


def test_start_preload_needs_a_key_and_no_injected_client(tmp_path: Path) -> None:
    assert not ModelAccess(Settings(home=tmp_path)).start_preload()

    class Injected:
        def stream(self, request: object) -> object:
            raise AssertionError("never called")

    injected = ModelAccess(Settings(home=tmp_path, api_key="k"), Injected())  # type: ignore[arg-type]
    assert not injected.start_preload()


def test_a_turn_that_needs_the_sdk_opens_the_gate(monkeypatch: pytest.MonkeyPatch) -> None:
    gate = IdleGate()
    monkeypatch.setattr(preload, "GATE", gate)
    gate.enter()
    preload.hurry()
    _gate_that_must_not_wait(gate)
    gate.pause(limit=WAIT)  # returns at once: the gate stays open for good
    gate.leave()


def test_a_pause_ends_when_another_thread_waits_for_an_import(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    gate = _gate_that_must_not_wait(IdleGate())
    gate.enter()
    monkeypatch.setattr(preload, "_someone_waits_for_an_import", lambda: True)
    gate.pause()  # returns: the request may be waiting for a module the preload holds
    monkeypatch.setattr(preload, "_someone_waits_for_an_import", lambda: False)
    gate.pause()  # and it does not pause again in the same busy period
    gate.leave()


def test_the_import_bookkeeping_is_readable() -> None:
    assert preload._someone_waits_for_an_import() is False  # nobody is importing right now
