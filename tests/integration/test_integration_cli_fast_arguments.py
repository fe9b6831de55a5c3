"""``iac-code acp`` skips argparse on its start-up path; the settings it then builds are the
same as the parser's."""

from __future__ import annotations

from iac_code.cli import _plain_acp_arguments, build_parser


def test_plain_acp_arguments_equal_the_parsers() -> None:
    assert vars(_plain_acp_arguments()) == vars(build_parser().parse_args(["acp"]))
