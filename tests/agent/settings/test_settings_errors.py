"""Every configuration mistake is one line on stderr naming where the value came from, the
key and what it must be, with exit status 2 before anything is answered (issue 32, item 2).

These run ``iac_code.cli.main`` in this process; test_settings_errors_process.py runs a few
of the same cases as a real ``iac-code acp`` process.
"""

from __future__ import annotations

import logging
from pathlib import Path

import pytest
from iac_code.cli import main
from iac_code.logs import configure_logging
from iac_code.settings import load_settings
from iac_code.settings_core import CONFIG_KEYS, SettingsError, check_start


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, list[str]]:
    try:
        code = main(list(argv))
    except SystemExit as exc:  # argparse's own exit for a bad flag
        code = int(exc.code or 0)
    captured = capsys.readouterr()
    assert captured.out == ""  # nothing a client could take for a message
    return code, captured.err.splitlines()


def _one_line_error(capsys: pytest.CaptureFixture[str], *argv: str) -> str:
    code, lines = _run(capsys, *argv)
    assert code == 2
    assert len(lines) == 1, lines
    assert lines[0].startswith("iac-code")
    assert "Traceback" not in lines[0]
    return lines[0]


@pytest.mark.parametrize(
    ("line", "key", "expected"),
    [
        ("model = 3\n", "model", "a string"),
        ('models = "claude-x"\n', "models", "a list of strings"),
        ("models = [1, 2]\n", "models", "a list of strings"),
        ("api_key = 12\n", "api_key", "a string"),
        ("base_url = 8080\n", "base_url", "an http(s) URL string"),
        ("log_file = false\n", "log_file", "a string (a file path)"),
        ('max_tokens = "lots"\n', "max_tokens", "a whole number of at least 1"),
        ("max_tokens = true\n", "max_tokens", "a whole number of at least 1"),
        ("max_turn_requests = 0\n", "max_turn_requests", "a whole number of at least 1"),
        ("max_open_sessions = 2.5\n", "max_open_sessions", "a whole number of at least 1"),
        ("max_output_backlog_mib = -1\n", "max_output_backlog_mib", "a positive number"),
        ("retry_base_delay = nan\n", "retry_base_delay", "a number of seconds, 0 or more"),
        ("model_timeout = 0\n", "model_timeout", "a positive number of seconds"),
        ("model_notice_after = inf\n", "model_notice_after", "a positive number of seconds"),
        ("child_env_allow = 7\n", "child_env_allow", "a string or a list of strings"),
        ("secret_env = [1]\n", "secret_env", "a string or a list of strings"),
        ("log_level = 3\n", "log_level", "a string (DEBUG, INFO, WARNING or ERROR)"),
        ("store = 5\n", "store", "a postgresql:// URL string"),
        ("store_lease_seconds = 0\n", "store_lease_seconds", "a positive number of seconds"),
    ],
)
def test_a_config_value_of_the_wrong_type_names_file_key_and_type(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], line: str, key: str, expected: str
) -> None:
    config = tmp_path / "config.toml"
    config.write_text(line, encoding="utf-8")
    said = _one_line_error(capsys, "acp", "--home", str(tmp_path))
    assert f"{config}: {key} must be {expected}, not " in said


def test_every_config_key_has_a_case_above() -> None:
    # A key added to CONFIG_KEYS without a wrong-type case here would go unchecked.
    covered = {
        "model", "models", "api_key", "base_url", "log_file", "max_tokens", "max_turn_requests",
        "max_open_sessions", "max_output_backlog_mib", "retry_base_delay", "model_timeout",
        "model_notice_after", "child_env_allow", "secret_env", "log_level", "store",
        "store_lease_seconds",
    }  # fmt: skip
    assert set(CONFIG_KEYS) == covered


def test_invalid_toml_names_the_file_and_the_place(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "config.toml").write_text('model = "a"\nmodels = [\nx = 1\n', encoding="utf-8")
    said = _one_line_error(capsys, "acp", "--home", str(tmp_path))
    assert f"{tmp_path / 'config.toml'} is not valid TOML" in said
    assert "line" in said


def test_non_utf8_config_names_the_byte_and_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "config.toml").write_bytes(b'model = "a"\nlog_file = "caf\xe9.log"\n')
    said = _one_line_error(capsys, "acp", "--home", str(tmp_path))
    assert said == (
        f"iac-code: {tmp_path / 'config.toml'} is not UTF-8 text (byte 0xe9 on line 2);"
        " save it as UTF-8"
    )


def test_an_unreadable_config_says_why(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "config.toml").mkdir()  # unreadable as a file even for root
    said = _one_line_error(capsys, "acp", "--home", str(tmp_path))
    assert said == f"iac-code: cannot read {tmp_path / 'config.toml'}: Is a directory"


@pytest.mark.parametrize(
    ("url", "reason"),
    [
        ("localhost:8080", "does not start with http:// or https://"),
        ("api.anthropic.com", "does not start with http:// or https://"),
        ("http://", "has no host name"),
        ("http://127.0.0.1:99999", "Port out of range"),
        ("http://127.0.0.1:port", "is not a URL"),
        ("https://example.test/v1?key=1", "has a query or fragment"),
        (" https://example.test", "contains spaces"),
    ],
)
def test_a_malformed_base_url_is_refused_from_each_source(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    url: str,
    reason: str,
) -> None:
    said = _one_line_error(capsys, "acp", "--home", str(tmp_path), "--base-url", url)
    assert "argument --base-url" in said and reason in said
    (tmp_path / "config.toml").write_text(f"base_url = {url!r}\n", encoding="utf-8")
    said = _one_line_error(capsys, "acp", "--home", str(tmp_path))
    assert f"{tmp_path / 'config.toml'}: base_url {url!r}" in said and reason in said
    (tmp_path / "config.toml").unlink()
    monkeypatch.setenv("ANTHROPIC_BASE_URL", url)
    said = _one_line_error(capsys, "acp", "--home", str(tmp_path))
    assert f"environment variable ANTHROPIC_BASE_URL {url!r}" in said and reason in said


@pytest.mark.parametrize("value", ["soon", "0", "-3", "nan", "inf"])
def test_a_bad_search_timeout_in_the_environment_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, value: str
) -> None:
    monkeypatch.setenv("IAC_CODE_SEARCH_TIMEOUT_S", value)
    said = _one_line_error(capsys, "acp", "--home", str(tmp_path))
    assert said == (
        "iac-code: environment variable IAC_CODE_SEARCH_TIMEOUT_S must be a positive number"
        f" of seconds, not {value!r}"
    )
    assert check_start({"IAC_CODE_SEARCH_TIMEOUT_S": "2.5"}, str(tmp_path)) == []


@pytest.mark.parametrize(
    "url",
    ["https://api.anthropic.com", "http://127.0.0.1:8080", "http://[::1]:9/proxy/anthropic"],
)
def test_a_good_base_url_passes(tmp_path: Path, url: str) -> None:
    assert check_start({"ANTHROPIC_BASE_URL": url}, str(tmp_path)) == []


@pytest.mark.parametrize(
    ("flags", "named"),
    [
        (["--port", "70000"], "--port"),
        (["--max-connections", "0"], "--max-connections"),
        (["--idle-timeout", "-5"], "--idle-timeout"),
        (["--model-timeout", "0"], "--model-timeout"),
        (["--model-timeout", "soon"], "--model-timeout"),
    ],
)
def test_a_bad_number_flag_names_the_flag(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], flags: list[str], named: str
) -> None:
    said = _one_line_error(capsys, "acp", "--home", str(tmp_path), *flags)
    assert f"argument {named}:" in said


def test_login_with_a_bad_config_is_the_same_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "config.toml").write_text('max_tokens = "lots"\n', encoding="utf-8")
    for argv in (["login", "--home", str(tmp_path)], ["logout", "--home", str(tmp_path)]):
        said = _one_line_error(capsys, *argv)
        assert "max_tokens must be a whole number of at least 1, not 'lots'" in said


def test_an_unknown_key_is_a_warning_naming_the_closest_known_key(tmp_path: Path) -> None:
    (tmp_path / "config.toml").write_text(
        'modle = "claude-x"\nmax_token = 5\nzzz_qqq = 1\n', encoding="utf-8"
    )
    warnings = check_start({}, str(tmp_path))
    path = tmp_path / "config.toml"
    assert warnings[0] == f"{path}: unknown key 'modle' is ignored (did you mean 'model'?)"
    assert warnings[1] == f"{path}: unknown key 'max_token' is ignored (did you mean 'max_tokens'?)"
    assert warnings[2].startswith(f"{path}: unknown key 'zzz_qqq' is ignored (known keys: model,")
    assert load_settings({"IAC_CODE_HOME": str(tmp_path)}).model != "claude-x"  # ignored


def test_the_home_flag_reads_that_homes_config(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from iac_code.cli import acp_settings, build_parser

    elsewhere = tmp_path / "env-home"
    elsewhere.mkdir()
    (elsewhere / "config.toml").write_text('model = "from-env-home"\n', encoding="utf-8")
    flagged = tmp_path / "flag-home"
    flagged.mkdir()
    (flagged / "config.toml").write_text('model = "from-flag-home"\n', encoding="utf-8")
    monkeypatch.setenv("IAC_CODE_HOME", str(elsewhere))
    args = build_parser().parse_args(["acp", "--home", str(flagged)])
    settings = acp_settings(args)
    assert (settings.model, settings.home) == ("from-flag-home", flagged)


def test_config_timeouts_and_the_flag(tmp_path: Path) -> None:
    from iac_code.cli import acp_settings, build_parser

    (tmp_path / "config.toml").write_text(
        "model_timeout = 30\nmodel_notice_after = 2.5\n", encoding="utf-8"
    )
    from_file = load_settings({"IAC_CODE_HOME": str(tmp_path)})
    assert (from_file.model_timeout, from_file.model_notice_after) == (30.0, 2.5)
    args = build_parser().parse_args(["acp", "--home", str(tmp_path), "--model-timeout", "7"])
    assert acp_settings(args).model_timeout == 7.0
    assert load_settings({"IAC_CODE_HOME": str(tmp_path / "none")}).model_timeout == 120.0


def test_load_settings_raises_the_same_error_when_called_later(tmp_path: Path) -> None:
    (tmp_path / "config.toml").write_text("max_tokens = 0\n", encoding="utf-8")
    with pytest.raises(SettingsError, match="max_tokens must be a whole number of at least 1"):
        load_settings({"IAC_CODE_HOME": str(tmp_path)})
    with pytest.raises(SettingsError, match="ANTHROPIC_BASE_URL 'nope'"):
        load_settings({"IAC_CODE_HOME": str(tmp_path / "x"), "ANTHROPIC_BASE_URL": "nope"})


class _Collect(logging.Handler):
    def __init__(self) -> None:
        super().__init__()
        self.messages: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.messages.append(record.getMessage())


def test_a_log_file_that_cannot_be_opened_is_a_warning_not_a_crash(tmp_path: Path) -> None:
    # Logging starts after initialize was answered: the agent must serve on, and say why.
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    root = logging.getLogger()
    before = list(root.handlers), root.level
    collect = _Collect()
    logging.getLogger("iac_code.settings").addHandler(collect)
    try:
        configure_logging("WARNING", blocker / "agent.log")
        file_handlers = [h for h in root.handlers if isinstance(h, logging.FileHandler)]
    finally:
        logging.getLogger("iac_code.settings").removeHandler(collect)
        for handler in list(root.handlers):
            root.removeHandler(handler)
        for handler in before[0]:
            root.addHandler(handler)
        root.setLevel(before[1])
    assert file_handlers == []
    assert len(collect.messages) == 1
    assert collect.messages[0].startswith(f"log_file {blocker / 'agent.log'} cannot be opened (")
    assert collect.messages[0].endswith("); logging to stderr only")
