"""The schema descriptions are the project's own words, never upstream's."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

import pytest
from acp_schema import SUPPORTED_VERSIONS, iter_documents, reference

UPSTREAM_FILES = [
    reference.newest_upstream("v1"),
    reference.newest_upstream("v1", unstable=True),
    reference.history("v1@1.21.0"),
    reference.history("v1@1.21.0-unstable"),
    reference.newest_upstream("v2"),
    reference.newest_upstream("v2", unstable=True),
]
SHORTEST_SENTENCE = 20


def _descriptions(node: Any) -> Iterator[str]:
    """Yield the text of every ``description`` keyword (not properties named so)."""
    if isinstance(node, dict):
        for key, value in node.items():
            if key == "description" and isinstance(value, str):
                yield value
            elif key == "properties" and isinstance(value, dict):
                for schema in value.values():
                    yield from _descriptions(schema)
            else:
                yield from _descriptions(value)
    elif isinstance(node, list):
        for item in node:
            yield from _descriptions(item)


def _sentences(text: str) -> Iterator[str]:
    for sentence in re.split(r"(?<=[.!?])\s+|\n+", text):
        sentence = sentence.strip()
        if len(sentence) >= SHORTEST_SENTENCE:
            yield sentence


@pytest.fixture(scope="module")
def upstream_descriptions() -> list[str]:
    reference.require(UPSTREAM_FILES[0])
    present = [path for path in UPSTREAM_FILES if path.is_file()]
    texts: list[str] = []
    for path in present:
        texts.extend(_descriptions(json.loads(path.read_text(encoding="utf-8"))))
    return texts


def _all_documents() -> Iterator[tuple[str, dict[str, Any]]]:
    """Every schema file of every protocol version (v2 files are named ``v2/...``)."""
    for version in SUPPORTED_VERSIONS:
        prefix = "" if version == 1 else f"v{version}/"
        for relpath, document in iter_documents(version):
            yield prefix + relpath, document


def _our_descriptions() -> list[str]:
    return [text for _, document in _all_documents() for text in _descriptions(document)]


def test_no_upstream_sentence_appears_in_our_descriptions(
    upstream_descriptions: list[str],
) -> None:
    ours = "\n".join(_our_descriptions())
    copied = {s for text in upstream_descriptions for s in _sentences(text) if s in ours}
    assert copied == set()


def test_no_description_equals_an_upstream_one(upstream_descriptions: list[str]) -> None:
    theirs = {text.strip() for text in upstream_descriptions}
    assert [text for text in _our_descriptions() if text.strip() in theirs] == []


def test_no_upstream_documentation_links() -> None:
    for relpath, document in _all_documents():
        assert "agentclientprotocol.com" not in json.dumps(document), relpath
