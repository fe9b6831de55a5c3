"""The environment handed to processes the agent starts (local ``bash``, MCP servers).

Those processes run commands the model chose, and their output goes back to the model, to
the client and into ``events.jsonl``; whatever is in their environment can end up in all
three. So the agent's own credentials are taken out before any child starts:

* every ``ANTHROPIC_*`` variable (the model API key, auth tokens, the endpoint);
* every ``IAC_CODE_*`` variable whose name says it holds a secret (``KEY``, ``TOKEN``,
  ``SECRET``, ``PASSWORD``, ``CREDENTIAL``);
* every variable the configuration marks secret (``secret_env`` in ``config.toml``).

Users whose tools really need one of them list it in the allow-list (``--child-env-allow``,
``IAC_CODE_CHILD_ENV_ALLOW`` or ``child_env_allow`` in ``config.toml``). Entries of both lists
are exact names or shell-style patterns (``MY_*``). Everything else is passed on unchanged:
infrastructure tools need their cloud credentials, which are the user's, not the agent's.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from fnmatch import fnmatchcase
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from iac_code.settings import Settings

#: Prefixes of the agent's own configuration; a secret-looking name under them is stripped.
_OWN_PREFIXES = ("IAC_CODE_",)
#: Whole families that belong to the model provider and are always stripped.
_PROVIDER_PREFIXES = ("ANTHROPIC_",)
_SECRET_WORDS = ("KEY", "TOKEN", "SECRET", "PASSWORD", "PASSWD", "CREDENTIAL", "AUTH")


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
        if upper.startswith(_PROVIDER_PREFIXES):
            return True
        if upper.startswith(_OWN_PREFIXES) and any(word in upper for word in _SECRET_WORDS):
            return True
        return _matches(upper, self.secret)

    def environment(self, base: Mapping[str, str] | None = None) -> dict[str, str]:
        """``base`` (default: this process's environment) without the withheld variables."""
        source = os.environ if base is None else base
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
