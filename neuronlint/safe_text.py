"""Scanned text in reports: never a terminal escape, a CI workflow command or live Markup.

File names, source lines, messages (which quote dependency strings and exception text) all come from
the scanned repository. Reports print them into terminals and CI logs, where:

- control characters (ESC, CSI, OSC 8 links, the C1 range) rewrite what a human reads;
- a line that starts with `::` (after whitespace) is a GitHub Actions workflow command, and the
  runner's legacy parser also acts on `##[`;
- Markdown renders backticks, brackets and HTML.

`printable` makes one field safe on one line; `visible_controls` does the same for text that keeps
its newlines (the last pass over every segment rich renders, so that with colour on only
neuronlint's own styles reach the terminal); `neutralise_lines` is the last pass over a whole
rendered log so that no line neuronlint prints can be a command; `code_span` and `url_path` are for
Markdown and HTML.
"""

from __future__ import annotations

import re
from urllib.parse import quote

WORD_JOINER = "\u2060"  # invisible, not whitespace: `:⁠:` and `##⁠[` are no longer commands

# C0 controls but tab, DEL, C1 controls, and the bidirectional overrides of "Trojan Source".
_CONTROL = re.compile("[\x00-\x08\x0a-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")
_CONTROL_IN_LINES = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")
_LEGACY_COMMAND = re.compile(r"##\[")
# Leading whitespace and the SGR styles neuronlint itself writes (colour on) before a `::`.
_LINE_COMMAND = re.compile(r"^((?:\s|\x1b\[[0-9;]*m)*):(?=(?:\x1b\[[0-9;]*m)*:)", re.M)


def _visible(match: re.Match[str]) -> str:
    char = match.group(0)
    code = ord(char)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def printable(text: str) -> str:
    """One line of visible text: control characters become `\\xNN`, `##[` cannot start a command."""
    text = _CONTROL.sub(_visible, text)
    if "##[" in text:
        text = _LEGACY_COMMAND.sub("##" + WORD_JOINER + "[", text)
    return text.encode("utf-8", "surrogateescape").decode("utf-8", "replace")


def visible_controls(text: str) -> str:
    """`printable` for text that may span lines: newlines stay, every other control is shown."""
    return _CONTROL_IN_LINES.sub(_visible, text)


def neutralise_lines(text: str) -> str:
    """A rendered log in which no line is a workflow command (`::…` after whitespace, or `##[`)."""
    text = _LINE_COMMAND.sub(lambda m: m.group(1) + ":" + WORD_JOINER, text)
    if "##[" in text:
        text = _LEGACY_COMMAND.sub("##" + WORD_JOINER + "[", text)
    return text


def code_span(text: str) -> str:
    """`text` as a Markdown code span, whatever backticks it contains (CommonMark rules)."""
    text = printable(text)
    longest = max((len(run) for run in re.findall("`+", text)), default=0)
    fence = "`" * (longest + 1)
    if text.startswith("`") or text.endswith("`") or (text.startswith(" ") and text.endswith(" ")):
        text = f" {text} "
    return f"{fence}{text}{fence}"


def markdown_text(text: str) -> str:
    """Plain text in Markdown: one line, no HTML, no emphasis, links, code or table breaks."""
    text = " ".join(printable(text).split())
    text = text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    return re.sub(r"([\\`*_\[\]|])", r"\\\1", text)


def url_path(path: str) -> str:
    """A relative path as a URL path: percent-encoded, and never read as a scheme (`javascript:`)."""
    encoded = quote(path.encode("utf-8", "surrogateescape"), safe="/")
    if not encoded.startswith(("/", "./", "../")):
        encoded = "./" + encoded
    return encoded


_SURROGATE = re.compile("[\ud800-\udfff]")


def valid_unicode(text: str) -> str:
    """Text that encodes as UTF-8: bytes of a file name that were not UTF-8 become U+FFFD."""
    return _SURROGATE.sub("\ufffd", text)


def json_text(value: object, **options: object) -> str:
    """JSON that is valid UTF-8 and keeps a non-UTF-8 file name exactly, as `\\udcXX` escapes."""
    import json

    text = json.dumps(value, ensure_ascii=False, **options)  # type: ignore[arg-type]
    return _SURROGATE.sub(lambda m: f"\\u{ord(m.group(0)):04x}", text)  # only inside JSON strings
