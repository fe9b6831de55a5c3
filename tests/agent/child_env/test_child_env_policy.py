"""Which variables child processes (bash, MCP servers) may see, and how users widen it."""

from __future__ import annotations

from pathlib import Path

import pytest
from iac_code import secret_env
from iac_code.child_env import ChildEnvPolicy, child_env_policy, child_environment
from iac_code.cli import acp_settings, build_parser
from iac_code.settings import load_settings

AGENT_ENV = {
    "PATH": "/usr/bin",
    "HOME": "/home/u",
    "AWS_PROFILE": "prod",  # the user's own cloud credentials stay: terraform needs them
    "ANTHROPIC_API_KEY": "sk-ant-secret",
    "ANTHROPIC_AUTH_TOKEN": "tok",
    "ANTHROPIC_BASE_URL": "http://127.0.0.1:1",
    "IAC_CODE_HOME": "/home/u/.iac-code",
    "IAC_CODE_MODEL": "claude-sonnet-4-6",
    "IAC_CODE_GITHUB_TOKEN": "ghp_secret",
    "IACCODE_ACP_HTTP_TOKEN": "http-token",  # the HTTP transport's bearer token
    "iac_code_api_key": "lower-case-secret",
    "DEPLOY_PASSWORD": "hunter2",
}


def test_the_default_policy_strips_the_agents_credentials_only() -> None:
    env = child_environment(AGENT_ENV)
    assert env == {
        "PATH": "/usr/bin",
        "HOME": "/home/u",
        "AWS_PROFILE": "prod",
        "IAC_CODE_HOME": "/home/u/.iac-code",
        "IAC_CODE_MODEL": "claude-sonnet-4-6",
        "DEPLOY_PASSWORD": "hunter2",
    }


def test_config_marked_secrets_are_stripped_and_the_allow_list_wins() -> None:
    policy = ChildEnvPolicy(allow=("ANTHROPIC_BASE_URL", "IAC_CODE_GITHUB_*"), secret=("DEPLOY_*",))
    env = policy.environment(AGENT_ENV)
    assert "DEPLOY_PASSWORD" not in env
    assert env["ANTHROPIC_BASE_URL"] == "http://127.0.0.1:1"
    assert env["IAC_CODE_GITHUB_TOKEN"] == "ghp_secret"
    assert "ANTHROPIC_API_KEY" not in env


def test_allow_list_and_secrets_come_from_config_env_and_flag(tmp_path: Path) -> None:
    (tmp_path / "config.toml").write_text(
        'child_env_allow = ["IAC_CODE_GITHUB_TOKEN"]\nsecret_env = ["DEPLOY_PASSWORD"]\n'
    )
    env = {"IAC_CODE_HOME": str(tmp_path), "IAC_CODE_CHILD_ENV_ALLOW": "ANTHROPIC_BASE_URL"}
    settings = load_settings(env)
    assert settings.child_env_allow == ("IAC_CODE_GITHUB_TOKEN", "ANTHROPIC_BASE_URL")
    assert settings.secret_env == ("DEPLOY_PASSWORD",)
    policy = child_env_policy(settings)
    assert not policy.withholds("IAC_CODE_GITHUB_TOKEN")
    assert not policy.withholds("ANTHROPIC_BASE_URL")
    assert policy.withholds("DEPLOY_PASSWORD")


def test_the_cli_flag_adds_to_the_allow_list(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("IAC_CODE_HOME", str(tmp_path))
    monkeypatch.setenv("IAC_CODE_CHILD_ENV_ALLOW", "A_ONE")
    args = build_parser().parse_args(
        ["acp", "--child-env-allow", "ANTHROPIC_API_KEY", "--child-env-allow", "B_*"]
    )
    settings = acp_settings(args)
    assert settings.child_env_allow == ("A_ONE", "ANTHROPIC_API_KEY", "B_*")
    assert not child_env_policy(settings).withholds("ANTHROPIC_API_KEY")


def test_what_the_agent_hides_from_its_own_environment() -> None:
    # Secret-named variables leave the agent's own environment; other ANTHROPIC_* settings
    # stay there for the SDK (children never get any ANTHROPIC_* variable).
    hidden = [name for name in AGENT_ENV if secret_env.is_builtin_secret(name)]
    assert hidden == [
        "ANTHROPIC_API_KEY",
        "ANTHROPIC_AUTH_TOKEN",
        "IAC_CODE_GITHUB_TOKEN",
        "IACCODE_ACP_HTTP_TOKEN",
        "iac_code_api_key",
    ]
    assert secret_env.is_builtin_secret("ANTHROPIC_CUSTOM_HEADERS")


def test_hidden_custom_headers_are_parsed_like_the_sdk(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ANTHROPIC_CUSTOM_HEADERS", raising=False)
    monkeypatch.setattr(
        secret_env, "_held", {"ANTHROPIC_CUSTOM_HEADERS": "X-One: 1\nbad line\nX-Two:  a:b "}
    )
    assert secret_env.custom_headers() == {"X-One": "1", "X-Two": "a:b"}
    assert secret_env.get("ANTHROPIC_CUSTOM_HEADERS") == "X-One: 1\nbad line\nX-Two:  a:b "
    assert secret_env.environment()["ANTHROPIC_CUSTOM_HEADERS"].startswith("X-One")
