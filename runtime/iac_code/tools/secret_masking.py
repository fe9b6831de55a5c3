"""Credential-shaped values in tool output are masked before the model, the client or the
session file see them (SPEC §6).

Two kinds of match:

* values whose *shape* gives them away wherever they appear — cloud access key ids (AWS
  ``AKIA…``, Alibaba ``LTAI…``, Google ``AIza…``), provider tokens (GitHub, Slack,
  Anthropic/OpenAI ``sk-…``, Stripe), JSON Web Tokens, ``Bearer`` tokens and PEM private key
  blocks;
* the *literal* value of an assignment whose name says it is secret (``password``,
  ``secret``, ``token``, ``api_key``, ``access_key``, ``private_key``, ``client_secret``,
  ``credential`` …) in the ``name = "value"`` form of ``.tfvars``/HCL, ``NAME=value`` of
  ``.env``, ``name: value`` of YAML and ``"name": "value"`` of JSON. References are left
  alone (``var.db_password``, ``${DB_PASSWORD}``, ``!Ref DbPassword``): they are not secrets
  and the model needs them to work on the code.

The replacement is :data:`MASK`; the file tools refuse to write it into a file that did not
hold it, so a masked value read back can never overwrite the real one.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

MASK = "***masked***"

# A PEM private key block up to its END line (keys are a few kB), or, when the END line is
# not in the output, the run of base64 lines after BEGIN.
_PRIVATE_KEY = re.compile(
    r"(-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----)(.{0,16384}?)(-----END [A-Z0-9 ]*PRIVATE KEY-----)",
    re.DOTALL,
)
_PRIVATE_KEY_OPEN = re.compile(
    r"(-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----)(\s*[A-Za-z0-9+/=]{16,}(?:\s+[A-Za-z0-9+/=]{16,})*)"
)
_SHAPES = re.compile(
    r"\b(?:"
    r"(?:AKIA|ASIA|AGPA|AIDA|AROA|ANPA|ANVA|AIPA)[A-Z0-9]{16}"  # AWS access key ids
    r"|LTAI[A-Za-z0-9]{12,28}"  # Alibaba Cloud AccessKey ids
    r"|AIza[0-9A-Za-z_\-]{35}"  # Google API keys
    r"|gh[pousr]_[A-Za-z0-9]{36,}|github_pat_[A-Za-z0-9_]{22,}"  # GitHub tokens
    r"|xox[abeoprs]-[A-Za-z0-9\-]{10,}"  # Slack tokens
    r"|sk-(?:ant-|proj-)?[A-Za-z0-9_\-]{20,}"  # Anthropic / OpenAI keys
    r"|[rs]k_live_[A-Za-z0-9]{16,}"  # Stripe keys
    r"|eyJ[A-Za-z0-9_\-]{8,}\.eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}"  # JWTs
    r")"
)
_BEARER = re.compile(r"(\bBearer\s+)([A-Za-z0-9\-._~+/]{8,}=*)", re.IGNORECASE)

# A name that says its value is secret (it ends with one of these words). The assignment
# patterns below match any name and check it with this afterwards: one alternation tried at
# every word would cost ten times more.
_SECRET_NAME = re.compile(
    r"(?:password|passwd|passphrase|secret|token|api[_\-]?key|apikey|access[_\-]?key"
    r"|private[_\-]?key|client[_\-]?secret|auth[_\-]?key|credentials?)$",
    re.IGNORECASE,
)
_NAME = r"(?P<name>[A-Za-z0-9_.\-]{1,80})"
# name = "value" / name: 'value' / "name": "value" (the value in quotes)
_QUOTED_ASSIGNMENT = re.compile(
    r"""(?P<head>["']?(?<![A-Za-z0-9_.\-])"""
    + _NAME
    + r"""["']?\s*[:=]\s*)(?P<q>["'])(?P<value>[^"'\n]+)(?P=q)"""
)
# NAME=value / name: value (unquoted, to the end of the line or the next space)
_BARE_ASSIGNMENT = re.compile(
    r"(?P<head>(?:^|(?<=[\s;,{(:|\"'&]))(?:export\s+)?" + _NAME + r"\s*[:=][ \t]*)"
    r"(?P<value>[^\s\"'#,;}{]+)",
    re.MULTILINE,
)
# Values that are references or placeholders, not secrets.
_NOT_A_SECRET = re.compile(
    r"^(?:"
    r"\$\{[^}]*\}|\$[A-Za-z_][A-Za-z0-9_]*"  # ${VAR}, $VAR, "${var.x}"
    r"|\{\{.*\}\}"  # {{ template }} / {{resolve:...}}
    r"|!\w+.*"  # YAML tags such as !Ref
    r"|(?:var|local|module|data|each|self|count)\.[\w.\[\]\"*\-]+"  # HCL references
    r"|[a-z][a-z0-9_]*\.[a-z0-9_]+\.[\w.\[\]\"*\-]+"  # resource attribute references
    r"|true|false|null|none|nil|yes|no|\*+|x+|<[^>]*>|\.\.\.|"
    + re.escape(MASK)
    + r"|\|[-+]?|>[-+]?"
    r")$",
    re.IGNORECASE,
)
_MIN_SECRET_CHARS = 4


def _masked_value(value: str) -> str:
    if len(value) < _MIN_SECRET_CHARS or _NOT_A_SECRET.match(value):
        return value
    return MASK


def mask_secrets(text: str) -> str:
    """``text`` with every credential-shaped value replaced by :data:`MASK`."""
    if not text:
        return text
    text = _PRIVATE_KEY.sub(lambda m: f"{m.group(1)}\n{MASK}\n{m.group(3)}", text)
    text = _PRIVATE_KEY_OPEN.sub(lambda m: f"{m.group(1)}\n{MASK}", text)
    text = _SHAPES.sub(MASK, text)
    text = _BEARER.sub(lambda m: m.group(1) + MASK, text)
    text = _sub_secret_assignments(_QUOTED_ASSIGNMENT, text, _mask_quoted)
    return _sub_secret_assignments(_BARE_ASSIGNMENT, text, _mask_bare)


def _sub_secret_assignments(
    pattern: re.Pattern[str], text: str, replace: Callable[[re.Match[str]], str]
) -> str:
    """``pattern.sub`` for the assignments whose name is secret. Another assignment is
    passed over only up to the end of its name, so its value can still be the name of the
    next one (``main.tf:3:token = x`` in grep output)."""
    parts: list[str] = []
    position = 0
    while (match := pattern.search(text, position)) is not None:
        if _SECRET_NAME.search(match.group("name")):
            parts.append(text[position : match.start()])
            parts.append(replace(match))
            position = match.end()
        else:
            parts.append(text[position : match.end("name")])
            position = match.end("name")
    parts.append(text[position:])
    return "".join(parts)


def _mask_quoted(match: re.Match[str]) -> str:
    quote = match.group("q")
    return f"{match.group('head')}{quote}{_masked_value(match.group('value'))}{quote}"


def _mask_bare(match: re.Match[str]) -> str:
    return match.group("head") + _masked_value(match.group("value"))


def mask_json(value: Any) -> Any:
    """``value`` (plain JSON data) with every string masked."""
    if isinstance(value, str):
        return mask_secrets(value)
    if isinstance(value, list):
        return [mask_json(item) for item in value]
    if isinstance(value, dict):
        return {key: mask_json(item) for key, item in value.items()}
    return value


def overwrites_a_masked_value(new_text: str, current: str | None) -> str | None:
    """Why writing ``new_text`` over ``current`` is refused, or None when it is fine.

    The model only ever saw :data:`MASK` where a secret is; writing that placeholder into a
    file that did not contain it would replace the real value with it."""
    if MASK not in new_text or (current is not None and MASK in current):
        return None
    return (
        f"Refused: the new text contains {MASK}, the placeholder for a secret value that was "
        "hidden from you; writing it would destroy the real value. Leave the lines holding "
        "secrets unchanged (edit_file on the other lines only), or ask the user to change them."
    )
