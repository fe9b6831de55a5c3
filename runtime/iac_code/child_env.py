"""The environment handed to processes the agent starts (local ``bash``, MCP servers).

Those processes run commands the model chose, and their output goes back to the model, to
the client and into ``events.jsonl``; whatever is in their environment can end up in all
three. So the agent's own credentials are taken out before any child starts:

* every ``ANTHROPIC_*`` variable (the model API key, auth tokens, the endpoint);
* every ``IAC_CODE_*`` or ``IACCODE_*`` variable whose name says it holds a secret (``KEY``,
  ``TOKEN``, ``SECRET``, ``PASSWORD``, ``CREDENTIAL``), the HTTP transport's
  ``IACCODE_ACP_HTTP_TOKEN`` among them;
* every variable the configuration marks secret (``secret_env`` in ``config.toml``).

Users whose tools really need one of them list it in the allow-list (``--child-env-allow``,
``IAC_CODE_CHILD_ENV_ALLOW`` or ``child_env_allow`` in ``config.toml``). Entries of both lists
are exact names or shell-style patterns (``MY_*``). Everything else is passed on unchanged:
infrastructure tools need their cloud credentials, which are the user's, not the agent's.

The agent's own environment no longer holds these variables once it has started
(:mod:`iac_code.secret_env`); the environment children get is built from what the process
was started with, so an allow-listed credential still reaches them.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from fnmatch import fnmatchcase
from typing import TYPE_CHECKING

from iac_code import secret_env

if TYPE_CHECKING:
    from iac_code.settings import Settings


@dataclass(frozen=True, slots=True)
class ChildEnvPolicy:
    """Which variables are withheld from child processes and which are let through anyway."""

    #: Names or patterns that are passed on even though they would be stripped.
    allow: tuple[str, ...] = ()
    #: Extra names or patterns to strip (the configuration's ``secret_env``).
    secret: tuple[str, ...] = ()

    def withholds(self, name: str) -> bool:
        """True when ``name`` must not reach a child process."""
        upper = name.upper()
        if _matches(upper, self.allow):
            return False
        if upper.startswith(secret_env.PROVIDER_PREFIXES) or secret_env.is_builtin_secret(upper):
            return True
        return _matches(upper, self.secret)

    def environment(self, base: Mapping[str, str] | None = None) -> dict[str, str]:
        """``base`` (default: the environment this process was started with, see
        :mod:`iac_code.secret_env`) without the withheld variables."""
        source = secret_env.environment() if base is None else base
        return {name: value for name, value in source.items() if not self.withholds(name)}


def _matches(name: str, patterns: Iterable[str]) -> bool:
    return any(fnmatchcase(name, pattern.upper()) for pattern in patterns)


#: Used where no settings are at hand (a tool run outside an agent): strips the defaults.
DEFAULT_POLICY = ChildEnvPolicy()


def child_environment(
    base: Mapping[str, str] | None = None, policy: ChildEnvPolicy | None = None
) -> dict[str, str]:
    """The environment for a child process: ``base`` filtered by ``policy``."""
    return (policy or DEFAULT_POLICY).environment(base)


def child_env_policy(settings: Settings) -> ChildEnvPolicy:
    """The policy the settings ask for (allow-list and extra secrets)."""
    return ChildEnvPolicy(allow=settings.child_env_allow, secret=settings.secret_env)
