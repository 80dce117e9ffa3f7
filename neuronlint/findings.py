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
)

# Categories whose findings measure coupling to Neuron (cost of leaving), not to CUDA.
NEURON_SIDE_CATEGORIES = frozenset({"neuron-lockin"})


@dataclass(frozen=True, slots=True)
class Fix:
    """A suggested replacement for the finding's span."""

    replacement: str
    description: str


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
            data["fix"] = Fix(**data["fix"])
        return cls(**data)
