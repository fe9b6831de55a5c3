"""Help texts speak to users: no internal documents, and they say what is really served."""

from __future__ import annotations

import argparse
import re

from iac_code.cli import build_parser


def _all_help(parser: argparse.ArgumentParser) -> str:
    texts = [parser.format_help()]
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            texts += [sub.format_help() for sub in action.choices.values()]
    return "\n".join(texts)


def test_help_cites_no_document_a_user_does_not_have() -> None:
    text = _all_help(build_parser())
    assert not re.search(r"SPEC|DESIGN|ARCHITECTURE|§|issue \d", text), text


def test_acp_help_says_both_protocol_versions_and_where_logs_go() -> None:
    text = _all_help(build_parser())
    assert "v1, and v2" in text
    assert "--log-file" in text and "stderr" in text
    assert "Serve ACP v1 over stdio" not in text
