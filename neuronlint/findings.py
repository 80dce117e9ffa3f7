"""The one output model shared by static and graph analysis: Finding and its parts."""

from __future__ import annotations

import enum
from dataclasses import asdict, dataclass, field
from typing import Any


class Severity(str, enum.Enum):
    BLOCKER = "blocker"
    WARNING = "warning"
    INFO = "info"

    @property
    def rank(self) -> int:
        """Higher is more severe; used for thresholds and sorting."""
        return _SEVERITY_RANK[self]

    @classmethod
    def parse(cls, value: str) -> Severity:
        try:
            return cls(value.lower())
        except ValueError:
            choices = ", ".join(s.value for s in cls)
            raise ValueError(f"unknown severity {value!r} (expected one of: {choices})") from None


_SEVERITY_RANK = {Severity.INFO: 1, Severity.WARNING: 2, Severity.BLOCKER: 3}

# Category names are part of the JSON/SARIF contract: never rename one.
CATEGORIES: tuple[str, ...] = (
    "cuda-api",
    "dist-backend",
    "custom-kernel",
    "cuda-only-lib",
    "dtype",
    "dynamic-shape",
    "host-sync",
    "compile-backend",
    "neuron-lockin",
    "op-support",
    "environment",
    "config",
    "serving",
    "parse-error",
    "suppression",  # neuronlint's own comments (NL003): neither coupling nor a file it could not read
)

# Categories whose findings measure coupling to Neuron (cost of leaving), not to CUDA.
NEURON_SIDE_CATEGORIES = frozenset({"neuron-lockin"})


@dataclass(frozen=True, slots=True)
class Edit:
    """Replace the text from (line, column) to (end_line, end_column) with `content`.

    Lines and columns are 1-based and the end is exclusive, as in a Finding; an insertion has
    start == end. `order` breaks ties between insertions at one place (an import before the device
    variable that uses it); it is not part of the output.
    """

    line: int
    column: int
    end_line: int
    end_column: int
    content: str
    order: int = field(default=0, compare=False)  # output lists insertions in this order already

    @property
    def start(self) -> tuple[int, int]:
        return (self.line, self.column)

    @property
    def end(self) -> tuple[int, int]:
        return (self.end_line, self.end_column)

    def to_dict(self) -> dict[str, Any]:
        return {
            "line": self.line,
            "column": self.column,
            "end_line": self.end_line,
            "end_column": self.end_column,
            "content": self.content,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Edit:
        return cls(data["line"], data["column"], data["end_line"], data["end_column"], data["content"])


@dataclass(frozen=True, slots=True)
class Fix:
    """What to do about a finding.

    `applicability` is "safe" or "unsafe" when `edits` carry an automatic fix (`neuronlint fix`),
    "suggestion" when only the replacement text is known (from the rule database).
    """

    replacement: str
    description: str
    applicability: str = "suggestion"
    edits: tuple[Edit, ...] = ()

    @property
    def automatic(self) -> bool:
        return bool(self.edits)

    def to_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "replacement": self.replacement,
            "description": self.description,
            "applicability": self.applicability,
        }
        if self.edits:
            data["edits"] = [edit.to_dict() for edit in self.edits]
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Fix:
        return cls(
            replacement=data["replacement"],
            description=data["description"],
            applicability=data.get("applicability", "suggestion"),
            edits=tuple(Edit.from_dict(e) for e in data.get("edits", ())),
        )


@dataclass(slots=True)
class Finding:
    """One problem at one place. Lines and columns are 1-based; end_column is exclusive."""

    rule: str
    category: str
    severity: Severity
    path: str
    line: int
    column: int
    end_line: int
    end_column: int
    message: str
    name: str = ""
    status: str = ""  # support status from the database: supported|partial|unsupported|unknown
    snippet: str = ""  # normalised source of the flagged node (fingerprints, baselines)
    fix: Fix | None = None
    origin: str = "static"  # "static" or "graph"
    suppressed: str | None = None  # justification when silenced by an in-source comment
    baseline_state: str | None = None  # "new" | "unchanged" when a baseline is in use
    scope: str = "source"  # source|test|example|benchmark|docs (neuronlint.scope)
    group: str = ""  # id of the root cause this finding belongs to (neuronlint.groups)
    capped_from: Severity | None = None  # the verdict's severity when the scope capped it (tests)
    extra: dict[str, Any] = field(default_factory=dict)
    # The detector's facts (library, module, api, ...): grouping reads them; not serialised.
    facts: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)

    def sort_key(self) -> tuple:
        return (self.path, self.line, self.column, self.rule)

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data.pop("facts")
        data["severity"] = self.severity.value
        if self.capped_from is not None:
            data["capped_from"] = self.capped_from.value
        if self.fix is None:
            data.pop("fix")
        else:
            data["fix"] = self.fix.to_dict()
        for key in ("suppressed", "baseline_state", "capped_from"):
            if data[key] is None:
                data.pop(key)
        if not self.extra:
            data.pop("extra")
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Finding:
        data = dict(data)
        data["severity"] = Severity(data["severity"])
        if data.get("capped_from"):
            data["capped_from"] = Severity(data["capped_from"])
        if data.get("fix"):
            data["fix"] = Fix.from_dict(data["fix"])
        return cls(**data)
