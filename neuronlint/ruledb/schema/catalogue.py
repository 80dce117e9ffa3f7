"""Schema of the rule catalogue, rules/catalogue/*.toml: `[[rule]]` with its `[[rule.verdict]]`s."""

from __future__ import annotations

from neuronlint.ruledb.schema.spec import (
    BACKENDS,
    CHIPS,
    EFFORTS,
    EVIDENCE,
    SEVERITIES,
    SOURCES,
    STATUSES,
    F,
    Table,
    is_sdk_range,
    is_version,
    rule_id,
    scalars,
    urls,
)

WHEN = Table(
    {
        "sdk": F(str, check=is_sdk_range, doc="SDK range, e.g. '>=2.30,<2.33'"),
        "targets": F(list, items=str, names=CHIPS, doc="chips, e.g. ['trn2', 'trn3']"),
        "backend": F(str, choices=BACKENDS, doc="xla or native"),
        "platform": F(
            dict, check=scalars, doc="platform facts (rules/platform.toml), e.g. { int64 = 'native' }"
        ),
        "facts": F(
            dict, check=scalars, doc="facts the checker found at the construct, e.g. { in_loop = true }"
        ),
    }
)

# `when` keys that describe the Neuron platform: a verdict using them states a Neuron fact and
# must cite its own source; verdicts on construct facts alone inherit the rule's sources.
PLATFORM_CONDITIONS = ("sdk", "targets", "backend", "platform")

CASE = Table(
    {
        "code": F(
            str,
            required=True,
            doc="source annotated with `# expect: NLxxx` where the rule fires (`# ok: NLxxx`: must not)",
        ),
        "file": F(
            str, doc="file name it is scanned as (default snippet.py): setup.py, kernel.cu, requirements.txt"
        ),
        "frame": F(
            dict,
            table=Table(
                {
                    "sdk": F(str, check=is_version, doc="Neuron SDK release, e.g. '2.29'"),
                    "target": F(str, names=CHIPS, doc="chip, e.g. 'trn1'"),
                    "backend": F(str, choices=BACKENDS, doc="xla or native"),
                }
            ),
            doc="the frame it is judged in (default: newest SDK, trn2)",
        ),
        "files": F(
            dict,
            table=Table({}, open=True, extra=str),
            doc="other files scanned with it, path = code (cross-file rules: a module that defines a kernel)",
        ),
    }
)

# Kinds of lock-in effort unit a rule's findings can be (see RULE's `unit`).
UNITS = ("triton-kernel", "compiled-module", "cuda-source")

VERDICT = Table(
    {
        "when": F(dict, required=True, table=WHEN),
        "severity": F(str, choices=SEVERITIES),
        "status": F(str, choices=STATUSES),
        "note": F(str),
        "enabled": F(bool),
        "sources": SOURCES,
        "evidence": F(str, choices=EVIDENCE, doc="documented (default) or reported (a field report)"),
    }
)

ADVICE = Table(
    {
        "when": F(dict, required=True, table=WHEN),
        "instead": F(dict, required=True, table=Table({"xla": F(str), "native": F(str), "any": F(str)})),
        "sources": SOURCES,
    }
)

# How `neuronlint fix` treats a rule's findings (docs/fix.md): safe (behaviour on CUDA unchanged,
# applied by --fix), unsafe (needs review, applied with --unsafe-fixes), mixed (some forms are
# safe, others unsafe: the page says which), none (no automatic fix; `note` says what to do).
FIX_SAFETY = ("safe", "unsafe", "mixed", "none")
FIX = Table(
    {
        "safety": F(str, required=True, choices=FIX_SAFETY),
        "portable": F(
            str, doc="what the portable fix (--to portable, the default) writes, and why it is safe or not"
        ),
        "neuron": F(str, doc="what the TorchNeuron fix (--to neuron) writes"),
        "xla": F(str, doc="what the PyTorch/XLA fix (--to xla) writes"),
        "note": F(str, doc="why there is no automatic fix, or what stays for a reviewer"),
    }
)

RULE = Table(
    {
        "id": F(str, required=True, check=rule_id),
        "name": F(str, required=True),
        "title": F(str, required=True),
        "category": F(str, required=True),  # checked against findings.CATEGORIES by the loader
        "severity": F(str, required=True, choices=SEVERITIES),
        "status": F(str, required=True, choices=STATUSES),
        "message": F(str, required=True),
        "summary": F(str, required=True),
        "why": F(str, required=True),
        "instead": F(dict, required=True, table=Table({"xla": F(str), "native": F(str), "any": F(str)})),
        "case": F(list, items=CASE, doc="executable cases; the first firing one is the page's Example"),
        "sources": F(list, required=True, items=str, check=urls),
        "verdict": F(list, items=VERDICT),
        "advice": F(list, items=ADVICE, doc="what to write instead where a platform condition holds"),
        "replacement": F(dict, table=Table({"xla": F(str), "native": F(str)})),
        "effort": F(str, choices=EFFORTS),
        "fix": F(
            dict, table=FIX, doc="how `neuronlint fix` treats the rule's findings (the page's Fix section)"
        ),
        "origin": F(str, choices=("static", "graph")),
        "default_enabled": F(bool),
        # What one effort unit of lock-in is for this rule's findings (docs/lock-in.md, "Effort
        # estimate"); without it a unit is one library or module if the finding names one, else
        # the rule in one file.
        "unit": F(str, choices=UNITS),
        "library": F(
            str,
            doc="the CUDA-only library (rules/libraries.toml) a rule is about when its findings name none",
        ),
    }
)
