"""``iac-code acp`` skips argparse on its start-up path; the settings it then builds are the
same as the parser's."""

from __future__ import annotations

from pathlib import Path

from iac_code.cli import _plain_acp_arguments, build_parser
from iac_code.settings import load_settings
from iac_code.settings_core import SessionDefaults


def test_plain_acp_arguments_equal_the_parsers() -> None:
    assert vars(_plain_acp_arguments()) == vars(build_parser().parse_args(["acp"]))


def test_session_defaults_agree_with_the_full_settings(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    cases: list[tuple[dict[str, str], str]] = [
        ({}, ""),
        ({"IAC_CODE_MODEL": "claude-x"}, ""),
        ({}, 'model = "claude-y"\nmodels = ["a", "b"]\nmax_open_sessions = 3\n'),
        ({"IAC_CODE_MODEL": "b"}, 'models = ["a", "b"]\n'),
    ]
    for env_extra, config in cases:
        (home / "config.toml").write_text(config, encoding="utf-8")
        env = {"IAC_CODE_HOME": str(home), **env_extra}
        full = load_settings(env)
        fast = SessionDefaults(env)
        assert (fast.model, fast.models) == (full.model, full.models)
        assert fast.sessions_dir == str(full.sessions_dir)
        assert fast.max_open_sessions == full.max_open_sessions
