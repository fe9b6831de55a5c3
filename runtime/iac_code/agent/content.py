"""Turn ACP prompt content blocks into Anthropic Messages content blocks (SPEC §4.1)."""

from __future__ import annotations

from typing import Any

from acp_bindings.errors import InvalidParamsError

# Anthropic accepts these image types inline; anything else becomes a text marker.
_MODEL_IMAGE_TYPES = frozenset({"image/png", "image/jpeg", "image/gif", "image/webp"})


def check_prompt(blocks: list[dict[str, Any]]) -> None:
    """Reject what the schema cannot: an empty prompt (-32602)."""
    if not blocks:
        raise InvalidParamsError("The prompt is empty.", data={"prompt": "must not be empty"})


def _resource_block(resource: dict[str, Any]) -> dict[str, Any]:
    uri = resource.get("uri", "")
    if "text" in resource:
        mime = resource.get("mimeType")
        header = f"<resource uri={uri!r}" + (f" mimeType={mime!r}" if mime else "") + ">"
        return {"type": "text", "text": f"{header}\n{resource['text']}\n</resource>"}
    mime = resource.get("mimeType") or "application/octet-stream"
    size = len(resource.get("blob", "")) * 3 // 4
    return {
        "type": "text",
        "text": f"[embedded binary resource {uri} ({mime}, about {size} bytes) — not shown]",
    }


def to_model_blocks(blocks: list[dict[str, Any]], *, images: bool) -> list[dict[str, Any]]:
    """Convert prompt blocks (already schema-validated wire dicts) for the model."""
    converted: list[dict[str, Any]] = []
    for block in blocks:
        kind = block.get("type")
        if kind == "text":
            converted.append({"type": "text", "text": block["text"]})
        elif kind == "resource":
            converted.append(_resource_block(block["resource"]))
        elif kind == "resource_link":
            name = block.get("name") or block["uri"]
            converted.append(
                {
                    "type": "text",
                    "text": f"[resource link: {name} <{block['uri']}>; read it with a tool]",
                }
            )
        elif kind == "image":
            mime = block.get("mimeType", "")
            if images and mime in _MODEL_IMAGE_TYPES and block.get("data"):
                converted.append(
                    {
                        "type": "image",
                        "source": {"type": "base64", "media_type": mime, "data": block["data"]},
                    }
                )
            else:
                converted.append({"type": "text", "text": f"[image: {mime or 'unknown'}]"})
        elif kind == "audio":
            converted.append(
                {"type": "text", "text": f"[audio: {block.get('mimeType', 'unknown')}]"}
            )
        else:  # the schema rejects unknown block types before we get here
            raise InvalidParamsError(
                "Unknown content block type.", data={"prompt": f"unknown block type {kind!r}"}
            )
    return converted


def title_from_prompt(blocks: list[dict[str, Any]], limit: int = 80) -> str | None:
    """First user prompt, trimmed to one line, as the session title (SPEC §7)."""
    for block in blocks:
        if block.get("type") == "text":
            text = " ".join(block["text"].split())
            if text:
                return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"
    return None
