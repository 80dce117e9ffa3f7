"""The migration report as GitHub-flavoured Markdown: the same sections as the HTML report, without
charts, short enough for a pull-request comment when a trend is shown first."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from neuronlint.safe_text import code_span, printable

_MAX_ROWS = 25  # per table; the JSON and HTML reports list everything


def _cell(value: Any) -> str:
    """A table cell: one line, no pipes, no raw HTML (scanned names and messages land here)."""
    return (
        printable(" ".join(str(value).split())).replace("|", "\\|").replace("<", "&lt;").replace(">", "&gt;")
    )


def _table(headers: Sequence[str], rows: Sequence[Sequence[Any]], limit: int = _MAX_ROWS) -> list[str]:
    if not rows:
        return []
    aligns = [
        "---:"
        if h.endswith(("#", "%", "Points", "Findings", "Blockers", "Hours", "Files", "Kernels", "Lines"))
        else "---"
        for h in headers
    ]
    out = ["| " + " | ".join(headers) + " |", "| " + " | ".join(aligns) + " |"]
    out += ["| " + " | ".join(_cell(c) for c in row) + " |" for row in rows[:limit]]
    if len(rows) > limit:
        out.append(f"\n_{len(rows) - limit} more rows in the HTML or JSON report._")
    return out + [""]


def _loc(row: dict[str, Any]) -> str:
    label = code_span(f"{row['path']}:{row['line']}")
    return f"[{label}](<{row['link']}>)" if row.get("link") else label


def _rule(rule_id: str, rules: dict[str, Any]) -> str:
    info = rules.get(rule_id)
    return f"[{rule_id}]({info['doc_url']})" if info else rule_id


def _signed(delta: int) -> str:
    return f"+{delta}" if delta > 0 else str(delta) if delta < 0 else "±0"


def render(report: dict[str, Any]) -> str:
    """The whole report as Markdown text."""
    s, frame, scope = report["summary"], report["frame"], report["scope"]
    rules = report["rules"]
    out = [f"# {report['meta']['title']}", ""]
    if frame:
        out.append(
            f"Neuron SDK **{frame['sdk']}** · **{frame['chip']}** · **{frame['backend']}** backend · "
            f"{scope['files']:,} files, {scope['lines']:,} lines · neuronlint {report['meta']['version']}"
        )
        out.append("")
    trend = report.get("trend")
    if trend:
        out += [f"> **Trend against `{trend['ref']}`:** {trend['summary']}", ""]
        out += _table(
            ["Direction", "Base", "Now", "Change", "Blockers added", "Blockers removed"],
            [
                [
                    r["title"],
                    f"{r['base']} ({r['base_grade']})",
                    f"{r['now']} ({r['now_grade']})",
                    _signed(r["delta"]),
                    r["blockers_added"],
                    r["blockers_removed"],
                ]
                for r in trend["scores"].values()
            ],
        )
        added = [x for r in trend["scores"].values() for x in r["added"]]
        if added:
            out += (
                ["New blockers:", ""]
                + [f"- {_rule(x['rule'], rules)} `{x['path']}:{x['line']}` {x['message']}" for x in added]
                + [""]
            )
    out += ["## Summary", "", s["headline"], ""]
    op = s.get("op_support")
    out += _table(
        ["", "Score", "Grade", "Blockers", "Findings", "Effort (h)"],
        [
            [
                s[d]["title"] + f" ({s[d]['question']})",
                s[d]["score"],
                f"{s[d]['grade']} ({s[d]['label']})",
                s[d]["blockers"],
                s[d]["findings"],
                f"{s[d]['hours']:,.0f}",
            ]
            for d in ("cuda", "neuron")
        ],
    )
    out += [
        f"Custom kernels to port: **{s['kernels']}** · CUDA-only libraries: **{s['libraries']}** · "
        f"op calls with a documented verdict lowered (traced): **{str(op['supported_percentage']) + '%' if op and op.get('supported_percentage') is not None else 'not traced'}**",
        "",
    ]

    out += ["## Blockers that gate the migration", ""]
    if not report["blockers"]:
        out += ["No blockers.", ""]
    for g in report["blockers"]:
        rule_list = ", ".join(f"{_rule(r['rule'], rules)} ×{r['count']}" for r in g["rules"])
        out += [f"### {g['title']}: {g['count']} blocker(s) in {g['files']} file(s)", "", rule_list, ""]
        out += _table(
            ["Location", "Rule", "Message", "Points"],
            [[_loc(f), f["rule"], f["message"], f"{f['points']:.2f}"] for f in g["findings"]],
            limit=10,
        )

    out += ["## Score breakdown", ""]
    for d in ("cuda", "neuron"):
        b = report["breakdown"][d]
        out += [
            f"**{s[d]['title']}: {b['score']}** (half-points scaled ×{b['size_scale']:.2f} for the size of the code)",
            "",
        ]
        out += _table(
            ["Area", "Findings", "Counted", "Evidence", "Half-point", "Coupling", "Points"],
            [
                [
                    a["title"],
                    a["findings"],
                    a["counted"],
                    f"{a['evidence']:.1f}",
                    f"{a['half']:.1f}",
                    f"{a['coupling']:.1f}",
                    f"{a['points_shown']:.1f}",
                ]
                for a in b["areas"]
            ],
        )
    out += (
        ["<details><summary>Formula</summary>", ""]
        + [f"1. {line}" for line in report["formula"]]
        + ["", "</details>", ""]
    )

    out += [
        "## Hot spots",
        "",
        f"{report['hot_spot_count']['cuda']} file(s) hold {report['hot_spot_share']:g}% of the CUDA coupling.",
        "",
    ]
    out += _table(
        ["#", "File", "Points", "Share %", "File score", "Blockers", "Areas"],
        [
            [
                i,
                f"[{code_span(h['path'])}](<{h['link']}>)",
                f"{h['points']:.2f}",
                f"{h['share']:.1f}",
                f"{h['score']} ({h['grade']})",
                h["blockers"],
                ", ".join(h["areas"]),
            ]
            for i, h in enumerate(report["hot_spots"]["cuda"], start=1)
        ],
        limit=15,
    )

    out += ["## CUDA-only libraries", ""]
    out += _table(
        ["Library", "Neuron status", "Findings", "Blockers", "Files", "Neuron alternative"],
        [
            [
                f"`{x['library']}`",
                x["neuron_status"],
                x["findings"],
                x["blockers"],
                x["files"],
                x["alternative"] + (f" ([source]({x['source']}))" if x["source"] else ""),
            ]
            for x in report["libraries"]
        ],
    ) or ["None.", ""]

    out += ["## Serving", ""]
    used = [x for x in report.get("serving", []) if x["uses"]]
    out += _table(
        ["Serving tool", "Uses", "Blockers", "Files", "Neuron verdict"],
        [
            [
                x["tool"],
                x["uses"],
                x["blockers"],
                x["files"],
                f"{x['neuron_status']}: {x['verdict']} ([source]({x['source']}))",
            ]
            for x in used
        ],
    ) or ["No serving tool is used.", ""]

    out += ["## Custom kernels and NKI Library replacements", ""]
    out += _table(
        ["Kernel code", "Kernels", "Hours", "Recognised as", "NKI Library kernels"],
        [
            [
                f"`{k['subject']}`" + (f" ({k['first']['path']})" if k["subject_kind"] == "kernel" else ""),
                k["kernels"],
                f"{k['hours']:.0f}",
                k["kind_title"],
                ", ".join(f"`{n}`" for n in k["nki_kernels"]) or k["note"],
            ]
            for k in report["kernels"]
        ],
    ) or ["None.", ""]

    out += [f"## Dtype and operator verdicts for {frame['target'] if frame else 'the chip'}", ""]
    out += _table(
        ["Dtype / construct", "Rule", "Verdict", "Findings", "On the chip"],
        [
            [
                f"`{d['construct']}`",
                f"{d['rule']} {d['title']}",
                d["severity"],
                d["findings"],
                (d["chip_status"] + (f": {d['chip_note']}" if d["chip_note"] else "")) or "—",
            ]
            for d in report["dtypes"]
        ],
    ) or ["No dtype findings.", ""]
    trace = report.get("trace")
    if trace:
        out += [
            f"Traced models: **{trace['supported_percentage']}%** of the {trace.get('known_ops', trace['total_ops']):,} "
            f"op calls with a documented verdict lowered ({trace['total_ops']:,} op calls in all; the others have "
            "no public verdict and are not counted as unsupported).",
            "",
        ]
    if report["ops"]:
        out += _table(
            ["Op", "Rule", "Verdict", "Findings"],
            [[f"`{o['op']}`", o["rule"], o["severity"], o["findings"]] for o in report["ops"]],
        )

    out += ["## Effort estimate", ""]
    for d in ("cuda", "neuron"):
        e = report["effort"][d]
        tests = f"; {e['test_hours']:,.1f} h of it porting tests" if e["test_hours"] else ""
        out += [f"**{s[d]['title']}: {e['hours']:,.1f} h ({e['weeks']:.1f} weeks{tests})**", ""]
        out += _table(
            ["Rule", "Effort", "Units", "Findings", "Hours"],
            [
                [
                    f"{_rule(x['rule'], rules)} {x['title']}",
                    x["effort"],
                    x["units"],
                    x["findings"],
                    f"{x['hours']:.1f}",
                ]
                for x in e["lines"]
            ],
            limit=12,
        )
    out += ["Assumptions:", ""] + [f"- {a}" for a in report["effort"]["cuda"]["assumptions"]] + [""]

    out += ["## Packages", ""]
    out += _table(
        ["Package", "Files", "Lines", "CUDA coupling", "CUDA blockers", "Neuron coupling"],
        [
            [
                f"`{p['name']}`",
                p["files"],
                p["lines"],
                f"{p['cuda']['score']} ({p['cuda']['grade']})",
                p["cuda"]["blockers"],
                f"{p['neuron']['score']} ({p['neuron']['grade']})",
            ]
            for p in report["packages"]
        ],
    )

    out += ["## Neuron coupling (the cost of leaving later)", ""]
    out += _table(
        ["#", "File", "Points", "File score", "Rules"],
        [
            [i, f"`{h['path']}`", f"{h['points']:.2f}", f"{h['score']} ({h['grade']})", ", ".join(h["rules"])]
            for i, h in enumerate(report["hot_spots"]["neuron"], start=1)
        ],
        limit=10,
    ) or ["No Neuron-specific code found.", ""]

    c = report.get("comparison")
    if c:
        b, o = c["base"], c["other"]
        out += [f"## What-if: SDK {b['sdk']} on {b['target']} → SDK {o['sdk']} on {o['target']}", ""]
        out += _table(
            ["Direction", "Now", "Then", "Change", "Blockers"],
            [
                [
                    r["title"],
                    f"{r['base']} ({r['base_grade']})",
                    f"{r['other']} ({r['other_grade']})",
                    _signed(r["delta"]),
                    f"{r['base_blockers']} → {r['other_blockers']}",
                ]
                for r in c["scores"].values()
            ],
        )
        for title, key in (("Blockers gone", "blockers_gone"), ("Blockers new", "blockers_new")):
            groups = c[key]
            out += [f"**{title}: {c['counts'][key]}**", ""]
            out += [f"- {_rule(g['rule'], rules)} {g['title']} ×{g['count']}" for g in groups] + [""]
    if report.get("unanalysed"):
        out += ["## Files not analysed", ""] + [f"- `{f}`" for f in report["unanalysed"][:20]] + [""]
    out += ["---", "_Scores are explained in docs/lock-in.md; weights live in rules/lockin.toml._", ""]
    return "\n".join(out)
