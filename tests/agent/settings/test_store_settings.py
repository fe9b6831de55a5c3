"""Choosing the session store: ``--store URL``, IAC_CODE_STORE_URL, config key ``store``.

A URL that cannot name a store is one line on stderr and exit status 2 (the URL itself is
not repeated: it may carry a password), and the default stays the JSONL files.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest
from iac_code import secret_env
from iac_code.cli import acp_settings, build_parser, main
from iac_code.settings import load_settings
from iac_code.settings_core import SessionDefaults, SettingsError
from iac_code.store import SessionStore
from iac_code.store.open_store import open_store
from iac_code.store.pg_store import PostgresSessionStore

BAD_URLS = ["mysql://u@h/db", "sqlite:///tmp/x.db", "not a url", "postgresql://h/db extra"]


def _one_line(capsys: pytest.CaptureFixture[str], *argv: str) -> str:
    try:
        code = main(list(argv))
    except SystemExit as exc:
        code = int(exc.code or 0)
    captured = capsys.readouterr()
    assert code == 2
    lines = captured.err.splitlines()
    assert len(lines) == 1, lines
    return lines[0]


@pytest.mark.parametrize("url", BAD_URLS)
def test_a_bad_store_flag_is_one_line_and_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], url: str
) -> None:
    said = _one_line(capsys, "acp", "--home", str(tmp_path), "--store", url)
    assert "--store" in said and "like postgresql://user@host/dbname" in said


@pytest.mark.parametrize("url", BAD_URLS)
def test_a_bad_store_variable_or_config_key_is_one_line_and_exit_2(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    url: str,
) -> None:
    monkeypatch.setenv("IAC_CODE_STORE_URL", url)
    said = _one_line(capsys, "acp", "--home", str(tmp_path), "--model", "m")
    assert "IAC_CODE_STORE_URL must be a postgresql:// URL" in said or "spaces" in said
    monkeypatch.delenv("IAC_CODE_STORE_URL")
    (tmp_path / "config.toml").write_text(f"store = {url!r}\n", encoding="utf-8")
    said = _one_line(capsys, "acp", "--home", str(tmp_path), "--model", "m")
    assert f"{tmp_path / 'config.toml'}: store " in said


def test_the_password_of_a_store_url_is_never_repeated(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("IAC_CODE_STORE_URL", "mysql://user:hunter2@db/x")
    said = _one_line(capsys, "acp", "--home", str(tmp_path), "--model", "m")
    assert "hunter2" not in said


def test_the_flag_wins_over_the_variable_which_wins_over_the_config(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "config.toml").write_text('store = "postgresql://config/db"\n', "utf-8")
    monkeypatch.delenv("IAC_CODE_STORE_URL", raising=False)
    assert load_settings({}, home=tmp_path).store_url == "postgresql://config/db"
    env = {"IAC_CODE_STORE_URL": "postgres://env/db", "IAC_CODE_STORE_LEASE_SECONDS": "4"}
    settings = load_settings(env, home=tmp_path)
    assert (settings.store_url, settings.store_lease_seconds) == ("postgres://env/db", 4.0)
    args = build_parser().parse_args(
        ["acp", "--home", str(tmp_path), "--store", "postgresql://flag/db"]
    )
    assert acp_settings(args).store_url == "postgresql://flag/db"


def test_without_a_url_the_store_is_the_jsonl_files_and_a_url_gives_one_shared_store(
    tmp_path: Path,
) -> None:
    settings = load_settings({}, home=tmp_path)
    assert settings.store_url is None
    assert isinstance(open_store(settings), SessionStore)
    remote = settings.with_overrides(store_url="postgresql://127.0.0.1:1/none")
    first = open_store(remote)
    assert isinstance(first, PostgresSessionStore)
    assert open_store(remote) is first  # every connection of a process shares the pool


def test_the_store_variable_is_a_secret_the_fast_path_still_sees(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A store URL may carry a password: it leaves os.environ (and so bash and MCP children),
    yet the start-up fast path must still know a database store is configured."""
    assert secret_env.is_builtin_secret("IAC_CODE_STORE_URL")
    monkeypatch.setenv("IAC_CODE_HOME", str(tmp_path))
    assert SessionDefaults().store_url is None
    monkeypatch.setitem(secret_env._held, "IAC_CODE_STORE_URL", "postgresql://pw@h/db")
    assert SessionDefaults().store_url == "postgresql://pw@h/db"
    monkeypatch.delitem(secret_env._held, "IAC_CODE_STORE_URL")
    (tmp_path / "config.toml").write_text('store = "postgres://cfg/db"\n', encoding="utf-8")
    assert SessionDefaults().store_url == "postgres://cfg/db"  # the config key counts too


def test_a_missing_postgres_extra_is_one_clear_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    real = importlib.util.find_spec

    def without_psycopg(name: str, *args: object) -> object:
        return None if name.startswith("psycopg") else real(name, *args)  # type: ignore[arg-type]

    monkeypatch.setattr(importlib.util, "find_spec", without_psycopg)
    args = build_parser().parse_args(["acp", "--home", str(tmp_path), "--store", "postgres://h/d"])
    with pytest.raises(SettingsError, match=r"postgres extra \(pip install"):
        acp_settings(args)


def test_plain_iac_code_acp_with_a_bad_store_variable_exits_2_in_one_line(
    tmp_path: Path,
) -> None:
    """What editors run (the start-up fast path) judges the variable before answering."""
    import os
    import subprocess
    import sys

    env = {k: v for k, v in os.environ.items() if not k.startswith(("IAC_CODE_", "ANTHROPIC_"))}
    env.update(IAC_CODE_HOME=str(tmp_path), IAC_CODE_STORE_URL="redis://:secret@cache/0")
    done = subprocess.run(
        [sys.executable, "-m", "iac_code.cli", "acp"],
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr.splitlines() == [
        "iac-code: environment variable IAC_CODE_STORE_URL must be a postgresql:// URL like"
        " postgresql://user@host/dbname, not redis://..."
    ]
