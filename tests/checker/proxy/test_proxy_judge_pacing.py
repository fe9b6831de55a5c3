"""The relay holds the judge back while a session streams (judging costs more than relaying,
and must not take the CPU the editor and the agent need), but never past a large backlog
or the end of the session."""

from __future__ import annotations

import threading
import time

import anyio
import pytest
from acp_conformance.proxy import relay
from acp_conformance.proxy.relay import ProxyOptions, Relay


def _relay() -> Relay:
    return Relay(["true"], ProxyOptions())


def _finishes(subject: Relay, within: float) -> bool:
    """Whether ``_wait_for_quiet`` returns within ``within`` seconds (then it is released)."""
    done = threading.Event()
    worker = threading.Thread(target=lambda: (subject._wait_for_quiet(), done.set()))
    worker.start()
    finished = done.wait(within)
    subject._ended.set()  # whatever happened, let the thread end
    worker.join()
    return finished


def _returns_at_once(subject: Relay) -> bool:
    # Traffic stamped in the past or a released hold: nothing to wait for, so it returns
    # as soon as the thread runs (the bound only covers a slow machine).
    return _finishes(subject, 5.0)


def test_a_quiet_session_feeds_the_judge_at_once() -> None:
    subject = _relay()
    subject._last_traffic = time.monotonic() - 10 * relay.JUDGE_QUIET
    assert _returns_at_once(subject)


def test_fresh_traffic_holds_the_judge_back() -> None:
    subject = _relay()
    subject._last_traffic = time.monotonic() + 60  # traffic "now" for the whole test
    # Only the end of the session or a large backlog can release it before then.
    assert not _finishes(subject, 4 * relay.JUDGE_QUIET)


def test_a_large_backlog_is_fed_even_while_traffic_flows() -> None:
    subject = _relay()
    subject._last_traffic = time.monotonic() + 60
    subject._backlog = relay.JUDGE_BUSY_BACKLOG
    assert _returns_at_once(subject)


def test_the_end_of_the_session_releases_the_judge() -> None:
    subject = _relay()
    subject._last_traffic = time.monotonic() + 60
    subject._ended.set()
    assert _returns_at_once(subject)


@pytest.mark.anyio
async def test_the_hold_ends_once_the_session_goes_quiet() -> None:
    subject = _relay()
    subject._last_traffic = time.monotonic()
    with anyio.fail_after(60):
        await anyio.to_thread.run_sync(subject._wait_for_quiet)
    assert time.monotonic() - subject._last_traffic >= relay.JUDGE_QUIET
