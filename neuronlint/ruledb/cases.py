"""Executable rule cases (`[[rule.case]]`) and the annotations that say what must fire in them.

    x = t.item()  # expect: NL701, NL603    must fire on this line (once per mention)
    y = n.item()  # ok: NL701               must not fire on this line (a documented near-miss)
    # neuronlint-fixture: sdk=2.29 target=trn1   (within the first 3 lines) the frame to scan in

    # expect-next: NL030                      on a line of its own: for the next line (formats
                                             without trailing comments: Dockerfiles, setup.cfg
                                             values, continued shell commands)

`//` starts the comment in CUDA sources (`// expect: NL304`). The same annotations mark fixture
files and inline test snippets (tests/annotations.py); this is their only parser.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field
from functools import cache
from typing import Any

_RULES = r"((?:NL\d{3}[, ]*)+)"


@cache
def _patterns() -> dict[str, re.Pattern[str]]:
    """The annotation patterns, compiled when a case is first read (a scan that only loads the
    database's classes never needs them)."""
    return {
        "expect": re.compile(r"(?:#|//)\s*expect:\s*" + _RULES),
        "expect_next": re.compile(r"^\s*#\s*expect-next:\s*" + _RULES),
        "ok": re.compile(r"(?:#|//)\s*ok:\s*" + _RULES),
        "frame": re.compile(r"neuronlint-fixture:\s*(.*)"),
        # A whole trailing annotation comment, removed when a page shows a case's code.
        "comment": re.compile(r"[ \t]*(?:#|//)\s*(?:expect|ok):\s*" + _RULES + r"\s*$"),
        "next_line": re.compile(r"^\s*#\s*expect-next:\s*" + _RULES + r"\s*$"),
    }


@dataclass
class Annotations:
    """What a case's `# expect:` and `# ok:` markers and frame ask for."""

    expected: Counter = field(default_factory=Counter)  # (line, rule) -> times it must fire
    ok: set[tuple[int, str]] = field(default_factory=set)  # (line, rule) that must not fire
    frame: dict[str, str] = field(default_factory=dict)

    def rules(self) -> set[str]:
        """Every rule an annotation names."""
        return {rule for _, rule in self.expected} | {rule for _, rule in self.ok}


def _split(group: str) -> list[str]:
    return [rule for rule in re.split(r"[, ]+", group) if rule]


def parse(text: str) -> Annotations:
    """The annotations of a source text."""
    found = Annotations()
    patterns = _patterns()
    pending: list[str] = []
    for number, line in enumerate(text.splitlines(), start=1):
        following = patterns["expect_next"].search(line)
        if following:
            pending += _split(following.group(1))
            continue
        for rule in pending:
            found.expected[(number, rule)] += 1
        pending = []
        match = patterns["expect"].search(line)
        if match:
            for rule in _split(match.group(1)):
                found.expected[(number, rule)] += 1
        match = patterns["ok"].search(line)
        if match:
            found.ok.update((number, rule) for rule in _split(match.group(1)))
        match = patterns["frame"].search(line)
        if match and number <= 3:
            found.frame = dict(item.split("=", 1) for item in match.group(1).split())
    return found


def strip(text: str) -> str:
    """The text without its `# expect:` / `# ok:` comments."""
    comment, next_line = _patterns()["comment"], _patterns()["next_line"]
    return "\n".join(comment.sub("", line) for line in text.split("\n") if not next_line.match(line))


@dataclass(frozen=True, slots=True)
class RuleCase:
    """One `[[rule.case]]`: code scanned as `file` in `frame`; it fires if it expects its own rule."""

    code: str
    file: str = ""  # file name to scan the code as (default snippet.py): setup.py, kernel.cu, ...
    frame: dict[str, Any] = field(default_factory=dict)  # sdk, target, backend
    files: dict[str, str] = field(default_factory=dict)  # other files scanned with it: path -> code
    fires: bool = False  # whether an `# expect:` annotation names the case's own rule

    @property
    def shown(self) -> str:
        """The code as a page shows it: annotations removed, no leading or trailing blank lines."""
        return strip(self.code).strip("\n")


def page_cases(cases: tuple[RuleCase, ...]) -> tuple[RuleCase | None, RuleCase | None]:
    """(Example, Instead) of a rule page: the first firing case (or the first case of a rule no
    code can fire, such as an internal error), and the first quiet case after it."""
    example = next((c for c in cases if c.fires), cases[0] if cases else None)
    fixed = next((c for c in cases if not c.fires and c is not example), None)
    return example, fixed


# File kind (neuronlint.filekinds.kind_of) -> code-fence language.
_LANGUAGES = {
    "cuda": "cuda",
    "requirements": "text",
    "pyproject": "toml",
    "toml": "toml",
    "dockerfile": "dockerfile",
    "shell": "bash",
    "makefile": "make",
    "yaml": "yaml",
    "conda": "yaml",
    "json": "json",
    "notebook": "json",
    "setupcfg": "ini",
}


def language(case: RuleCase) -> str:
    """The code-fence language of a case on a page, from the file name it is scanned as."""
    from neuronlint.filekinds import kind_of

    return _LANGUAGES.get(kind_of(case.file or "snippet.py") or "python", "python")


def build_case(data: dict[str, Any], rule_id: str) -> RuleCase:
    code = data["code"]
    return RuleCase(
        code=code,
        file=data.get("file", ""),
        frame=dict(data.get("frame", {})),
        files=dict(data.get("files", {})),
        fires=any(rule == rule_id for _, rule in parse(code).expected),
    )
