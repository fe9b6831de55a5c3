"""Turn an HTML page into readable plain text with the standard library's HTML parser.

Scripts, styles and other invisible elements are dropped, block elements become line
breaks, list items get a bullet, links keep their target in parentheses (so the model can
follow them), and runs of whitespace are collapsed.
"""

from __future__ import annotations

import re
from html.parser import HTMLParser

_INVISIBLE = frozenset({"script", "style", "noscript", "template", "svg", "head", "iframe"})
_BLOCKS = frozenset(
    {
        "address", "article", "aside", "blockquote", "div", "dl", "figcaption", "figure",
        "footer", "form", "h1", "h2", "h3", "h4", "h5", "h6", "header", "hr", "main", "nav",
        "ol", "p", "pre", "section", "table", "ul",
    }
)  # fmt: skip
# Elements that start a new line but not a new paragraph.
_LINES = frozenset({"br", "dd", "dt", "li", "tr"})
_VOID = frozenset({"br", "hr", "img", "input", "meta", "link", "area", "base", "col", "wbr"})


class _TextExtractor(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self.title: list[str] = []
        self._hidden_depth = 0
        self._in_title = False
        self._pre_depth = 0
        self._link_stack: list[str | None] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "title":
            self._in_title = True
        if tag in _INVISIBLE and tag not in _VOID:
            self._hidden_depth += 1
            return
        if self._hidden_depth:
            return
        if tag in _BLOCKS:
            self.parts.append("\n\n")
        elif tag in _LINES:
            self.parts.append("\n")
        if tag == "li":
            self.parts.append("- ")
        if tag in ("h1", "h2", "h3", "h4", "h5", "h6"):
            self.parts.append("#" * int(tag[1]) + " ")
        if tag == "pre":
            self._pre_depth += 1
        if tag in ("td", "th"):
            self.parts.append(" | ")
        if tag == "a":
            href = dict(attrs).get("href")
            keep = href if href and not href.startswith(("#", "javascript:")) else None
            self._link_stack.append(keep)

    def handle_endtag(self, tag: str) -> None:
        if tag == "title":
            self._in_title = False
        if tag in _INVISIBLE and tag not in _VOID:
            self._hidden_depth = max(0, self._hidden_depth - 1)
            return
        if self._hidden_depth:
            return
        if tag == "a" and self._link_stack:
            href = self._link_stack.pop()
            if href:
                self.parts.append(f" ({href})")
        if tag == "pre":
            self._pre_depth = max(0, self._pre_depth - 1)
        if tag in _BLOCKS:
            self.parts.append("\n\n")

    def handle_data(self, data: str) -> None:
        if self._in_title:
            self.title.append(data)
        if self._hidden_depth:
            return
        if self._pre_depth:
            # Keep preformatted text as is, protected from whitespace collapsing.
            self.parts.append(data.replace(" ", "\u00a0").replace("\n", "\u2028"))
        else:
            # Line breaks in HTML source are just spaces.
            self.parts.append(re.sub(r"\s+", " ", data))


def html_to_text(html: str) -> str:
    """Readable text of ``html``; the page title (when present) comes first."""
    parser = _TextExtractor()
    parser.feed(html)
    parser.close()
    text = "".join(parser.parts)
    text = re.sub(r"[ \t\r\f\v]+", " ", text)
    text = re.sub(r" *\n *", "\n", text)
    text = re.sub(r"\n{3,}", "\n\n", text).strip()
    text = text.replace("\u00a0", " ").replace("\u2028", "\n")
    title = " ".join("".join(parser.title).split())
    if title and not text.startswith(title):
        return f"{title}\n\n{text}"
    return text
