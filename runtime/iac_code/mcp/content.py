"""An MCP ``tools/call`` result turned into a :class:`~iac_code.tools.contract.ToolOutcome`.

MCP content blocks have the same shapes as ACP content blocks (text, image, audio,
resource_link, embedded resource), so the client gets them as ACP ``content`` items with
only the known fields copied. The model gets text: text blocks as they are, embedded text
resources with their URI, and a short marker for everything it cannot read as text.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from iac_code.tools.contract import JsonDict, ToolOutcome, text_content
from iac_code.tools.text import cap_text

_LINK_FIELDS = ("uri", "name", "title", "description", "mimeType", "size")


def _str(block: Mapping[str, Any], key: str) -> str | None:
    value = block.get(key)
    return value if isinstance(value, str) else None


def _wrap(block: JsonDict) -> JsonDict:
    return {"type": "content", "content": block}


def _media(block: Mapping[str, Any], kind: str) -> tuple[str, JsonDict | None]:
    data, mime = _str(block, "data"), _str(block, "mimeType")
    if data is None or mime is None:
        return f"[{kind} without data]", None
    return f"[{kind}: {mime}]", _wrap({"type": kind, "data": data, "mimeType": mime})


def _resource_link(block: Mapping[str, Any]) -> tuple[str, JsonDict | None]:
    uri, name = _str(block, "uri"), _str(block, "name")
    if uri is None:
        return "[resource link without a URI]", None
    link: JsonDict = {"type": "resource_link", "uri": uri, "name": name or uri}
    link.update({key: block[key] for key in _LINK_FIELDS[2:] if key in block})
    return f"[resource link: {name or uri} <{uri}>]", _wrap(link)


def _embedded(block: Mapping[str, Any], cap: int) -> tuple[str, JsonDict | None]:
    resource = block.get("resource")
    if not isinstance(resource, Mapping) or _str(resource, "uri") is None:
        return "[embedded resource without a URI]", None
    uri = resource["uri"]
    mime = _str(resource, "mimeType")
    kept: JsonDict = {"uri": uri, **({"mimeType": mime} if mime else {})}
    text = _str(resource, "text")
    if text is not None:
        kept["text"] = cap_text(text, cap)
        return f"[resource {uri}]\n{text}", _wrap({"type": "resource", "resource": kept})
    blob = _str(resource, "blob")
    if blob is None:
        return f"[resource {uri} without content]", None
    kept["blob"] = blob
    return (
        f"[binary resource {uri} ({mime or 'unknown type'}), {len(blob):,} base64 characters]",
        _wrap({"type": "resource", "resource": kept}),
    )


def _convert(block: Any, cap: int) -> tuple[str, JsonDict | None]:
    """One MCP block → (text for the model, ACP content item or None)."""
    if not isinstance(block, Mapping):
        return "[malformed content]", None
    kind = block.get("type")
    if kind == "text":
        text = _str(block, "text") or ""
        return text, text_content(cap_text(text, cap))
    if kind in ("image", "audio"):
        return _media(block, str(kind))
    if kind == "resource_link":
        return _resource_link(block)
    if kind == "resource":
        return _embedded(block, cap)
    return f"[unsupported content type {kind!r}]", None


def outcome_from_result(result: Mapping[str, Any], *, cap: int) -> ToolOutcome:
    """Build the outcome of one call; ``cap`` limits the text shown (model and client)."""
    is_error = result.get("isError") is True
    blocks = result.get("content")
    model_parts: list[str] = []
    content: list[JsonDict] = []
    for block in blocks if isinstance(blocks, list) else []:
        text, item = _convert(block, cap)
        model_parts.append(text)
        if item is not None:
            content.append(item)
    structured = result.get("structuredContent")
    if not model_parts and structured is not None:
        # Servers should mirror structured output as text; cover those that do not.
        text = json.dumps(structured, ensure_ascii=False, indent=2)
        model_parts.append(text)
        content.append(text_content(cap_text(text, cap)))
    model_content = "\n".join(model_parts)
    if not model_content.strip():
        model_content = "The tool reported an error." if is_error else "(no output)"
        if not content:
            content.append(text_content(model_content))
    return ToolOutcome(
        model_content=cap_text(model_content, cap),
        is_error=is_error,
        content=content,
        raw_output=dict(result),
    )
