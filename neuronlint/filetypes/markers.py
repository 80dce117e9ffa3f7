"""PEP 508 environment markers, evaluated for a Linux Neuron host without any code execution.

Only the variables that decide the operating system are known (`sys_platform`, `platform_system`,
`os_name`); any other comparison is "unknown", and an entry is dropped only when its marker is
certainly false on Linux (`sys_platform == "win32"`, `platform_system == "Darwin"`, ...).
"""

from __future__ import annotations

import re

LINUX = {"sys_platform": "linux", "platform_system": "Linux", "os_name": "posix"}
_TOKEN = re.compile(
    r"""\s*(?:(?P<str>'[^']*'|"[^"]*")|(?P<op>===|==|!=|<=|>=|~=|<|>|\(|\)|not\s+in\b|in\b|and\b|or\b)|(?P<name>[A-Za-z_][A-Za-z0-9_.]*))"""
)


def _tokens(text: str) -> list[tuple[str, str]]:
    out, pos = [], 0
    text = text.strip()
    while pos < len(text):
        match = _TOKEN.match(text, pos)
        if match is None:
            raise ValueError(text)
        kind = match.lastgroup or ""
        value = match.group(kind)
        out.append((kind, re.sub(r"\s+", " ", value)))
        pos = match.end()
    return out


def _and(values: list[bool | None]) -> bool | None:
    if False in values:
        return False
    return None if None in values else True


def _or(values: list[bool | None]) -> bool | None:
    if True in values:
        return True
    return None if None in values else False


class _Parser:
    def __init__(self, tokens: list[tuple[str, str]]):
        self.tokens = tokens
        self.pos = 0

    def peek(self) -> tuple[str, str] | None:
        return self.tokens[self.pos] if self.pos < len(self.tokens) else None

    def take(self) -> tuple[str, str]:
        token = self.peek()
        if token is None:
            raise ValueError("unexpected end of marker")
        self.pos += 1
        return token

    def expr(self) -> bool | None:
        values = [self.conj()]
        while self.peek() == ("op", "or"):
            self.take()
            values.append(self.conj())
        return _or(values)

    def conj(self) -> bool | None:
        values = [self.atom()]
        while self.peek() == ("op", "and"):
            self.take()
            values.append(self.atom())
        return _and(values)

    def atom(self) -> bool | None:
        if self.peek() == ("op", "("):
            self.take()
            value = self.expr()
            if self.take() != ("op", ")"):
                raise ValueError("expected )")
            return value
        left, op, right = self.take(), self.take(), self.take()
        if op[0] != "op":
            raise ValueError("expected an operator")
        return _compare(left, op[1], right)


def _value(token: tuple[str, str]) -> str | None:
    kind, value = token
    if kind == "str":
        return value[1:-1]
    return LINUX.get(value)  # a variable: known only for the OS ones


def _compare(left: tuple[str, str], op: str, right: tuple[str, str]) -> bool | None:
    a, b = _value(left), _value(right)
    if a is None or b is None:
        return None
    if op in ("==", "==="):
        return a == b
    if op == "!=":
        return a != b
    if op == "in":
        return a in b
    if op == "not in":
        return a not in b
    return None  # version comparisons on OS names: not meaningful here


def installs_on_linux(marker: str) -> bool:
    """False only when the marker certainly excludes a Linux host; malformed markers count as True."""
    if not marker.strip():
        return True
    try:
        parser = _Parser(_tokens(marker))
        value = parser.expr()
        if parser.peek() is not None:
            return True
    except ValueError:
        return True
    return value is not False
