"""Schema of the lock-in tables in rules/lockin.toml (read by neuronlint/lockin/params.py).

Tables:
  [[lockin_area]]    a group of findings that saturates on its own (custom kernels, CUDA API, ...)
  [[lockin_weight]]  a per-rule weight that replaces the area's per-severity weight
  [[lockin_scope]]   a weight factor for findings in tests, examples and similar paths
  [[lockin_effort]]  hours per effort class (mechanical, rewrite, kernel-port)
  [[lockin_grade]]   the letter grade bands of the 0-100 score
  [[lockin_model]]   settings of the model as a whole (one entry, name = "default")
  [[nki_replacement]] kernel kinds recognised by name and the NKI Library kernels that replace them
"""

from __future__ import annotations

import re
from typing import Any

from neuronlint.ruledb.schema.spec import EFFORTS, SEVERITIES, SOURCE, F, Table, each, matches, rule_id

DIRECTIONS = ("cuda", "neuron", "none")


def _non_negative(value: Any) -> str | None:
    return f"expected a number >= 0, got {value!r}" if value < 0 else None


def _positive(value: Any) -> str | None:
    return f"expected a number > 0, got {value!r}" if value <= 0 else None


def _percent(value: Any) -> str | None:
    return f"expected a number from 0 to 100, got {value!r}" if not 0 <= value <= 100 else None


def _weights(value: dict[str, Any]) -> str | None:
    missing = [s for s in SEVERITIES if s not in value]
    if missing:
        return f"a weight for every severity is required (missing: {', '.join(missing)})"
    bad = [k for k, v in value.items() if isinstance(v, bool) or not isinstance(v, (int, float)) or v < 0]
    return f"weights are numbers >= 0, got {bad[0]} = {value[bad[0]]!r}" if bad else None


def _severities(value: list[Any]) -> str | None:
    return next(
        (f"unknown severity {s!r} (expected {', '.join(SEVERITIES)})" for s in value if s not in SEVERITIES),
        None,
    )


def _regexes(value: list[Any]) -> str | None:
    for pattern in value:
        try:
            re.compile(pattern)
        except (re.error, TypeError) as exc:
            return f"not a valid regular expression {pattern!r}: {exc}"
    return None


RATIONALE = F(str, required=True, doc="why this number: read by people, printed in docs/lock-in.md")

AREA = Table(
    {
        "name": F(str, required=True),
        "title": F(str, required=True),
        "direction": F(str, required=True, choices=DIRECTIONS),
        "categories": F(list, items=str, doc="finding categories that belong here"),
        "rules": F(list, items=str, check=each(rule_id), doc="rules that belong here (win over categories)"),
        "max": F(
            float, required=True, check=_percent, doc="highest coupling (0-100) this area alone reaches"
        ),
        "half": F(float, required=True, check=_positive, doc="weighted evidence at which it reaches max/2"),
        "cap": F(int, required=True, check=_positive, doc="findings of one rule counted per file"),
        "weights": F(dict, required=True, table=Table({s: F(float) for s in SEVERITIES}), check=_weights),
        "rationale": RATIONALE,
    }
)

WEIGHT = Table(
    {
        "name": F(str, required=True),
        "rule": F(str, required=True, check=rule_id),
        "facts": F(
            dict,
            table=Table({}, open=True, extra=(str, bool, int, list)),
            doc="only findings with these facts (a list: any of its values)",
        ),
        "weight": F(float, required=True, check=_non_negative),
        "effort": F(str, choices=EFFORTS, doc="effort class for these findings instead of the rule's"),
        "rationale": RATIONALE,
    }
)

EFFORT = Table(
    {
        "effort": F(str, required=True, choices=EFFORTS),
        "first": F(float, required=True, check=_non_negative, doc="hours for the first finding of a unit"),
        "more": F(float, required=True, check=_non_negative, doc="hours for each further finding of it"),
        "rationale": RATIONALE,
    }
)

SCOPE = Table(
    {
        "name": F(str, required=True),
        "patterns": F(list, required=True, items=str, check=_regexes, doc="searched in the file's path"),
        "factor": F(
            float, required=True, check=_non_negative, doc="multiplies the weight of findings in these files"
        ),
        "rationale": RATIONALE,
    }
)

GRADE = Table(
    {
        "grade": F(
            str,
            required=True,
            check=matches(r"[A-Z][+-]?", "expected a letter"),
        ),
        "below": F(
            int, required=True, check=lambda v: None if 1 <= v <= 101 else f"expected 1..101, got {v!r}"
        ),
        "label": F(str, required=True),
        "rationale": RATIONALE,
    }
)

MODEL = Table(
    {
        "name": F(str, required=True, choices=("default",)),
        "effort_severities": F(
            dict,
            required=True,
            table=Table(
                {d: F(list, required=True, items=str, check=_severities) for d in ("cuda", "neuron")}
            ),
            doc="per direction: the severities whose findings carry effort",
        ),
        "hours_per_week": F(float, required=True, check=_positive),
        "hot_spot_share": F(
            float,
            required=True,
            check=_percent,
            doc="hot spots: the fewest files that hold this share (%) of the score",
        ),
        "reference_lines": F(
            int,
            required=True,
            check=_positive,
            doc="units above this many lines have their half-points scaled by lines / reference_lines",
        ),
        "rationale": RATIONALE,
    }
)

NKI_REPLACEMENT = Table(
    {
        "kind": F(str, required=True),
        "title": F(str, required=True),
        "patterns": F(
            list,
            required=True,
            items=str,
            check=_regexes,
            doc="matched against kernel, module and file names",
        ),
        "kernels": F(list, required=True, items=str, doc="NKI Library kernels; empty when none fits"),
        "note": F(str, required=True),
        "source": SOURCE,
    }
)
