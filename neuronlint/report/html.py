"""The migration report as one self-contained HTML file: inline CSS, inline SVG charts, a few lines of
inline script for sortable tables and the findings filter. No network access (a Content-Security-
Policy forbids it), so the file works offline and can be attached to a ticket as is."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from html import escape
from typing import Any

from neuronlint.report import charts

_CSS = """
:root { --fg:#1d232b; --muted:#5d6875; --line:#dde1e6; --bg:#f5f6f8; --card:#fff; --accent:#3949ab; }
* { box-sizing: border-box; }
body { margin:0; font: 14px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif;
       color:var(--fg); background:var(--bg); }
header { background:#1f2a44; color:#fff; padding:22px 32px 16px; }
header h1 { margin:0 0 6px; font-size:22px; font-weight:600; }
header .frame { color:#c9d2e3; font-size:13px; }
header .frame b { color:#fff; font-weight:600; }
nav { position:sticky; top:0; z-index:5; background:#fff; border-bottom:1px solid var(--line); padding:6px 32px;
      display:flex; flex-wrap:wrap; gap:4px 14px; font-size:13px; }
nav a { color:var(--accent); text-decoration:none; padding:3px 0; }
nav a:hover { text-decoration:underline; }
main { max-width:1320px; margin:0 auto; padding:18px 28px 40px; }
section { background:var(--card); border:1px solid var(--line); border-radius:8px; padding:18px 22px; margin:0 0 18px; }
h2 { font-size:18px; margin:0 0 4px; }
h3 { font-size:15px; margin:18px 0 6px; }
p.lead { color:var(--muted); margin:0 0 14px; }
.muted { color:var(--muted); }
.cards { display:grid; grid-template-columns: repeat(auto-fit, minmax(250px, 1fr)); gap:14px; margin-bottom:14px; }
.card { border:1px solid var(--line); border-radius:8px; padding:12px 16px; background:#fbfcfd; }
.card h3 { margin:0; font-size:14px; }
.card .q { color:var(--muted); font-size:12px; margin-bottom:4px; }
.card .label { font-weight:600; }
.kpis { display:grid; grid-template-columns: repeat(auto-fit, minmax(150px, 1fr)); gap:10px; }
.kpi { border:1px solid var(--line); border-radius:8px; padding:10px 14px; background:#fbfcfd; }
.kpi .v { font-size:24px; font-weight:650; line-height:1.2; }
.kpi .k { color:var(--muted); font-size:12px; }
.headline { font-size:15px; background:#eef2fb; border-left:4px solid var(--accent); padding:10px 14px; margin:10px 0 0; border-radius:4px; }
.trendline { font-size:15px; background:#fff8e6; border-left:4px solid #f9a825; padding:10px 14px; margin:10px 0 0; border-radius:4px; }
svg text { font-family: inherit; }
svg .gauge-score { font-size:40px; font-weight:700; fill:var(--fg); }
svg .gauge-grade { font-size:15px; font-weight:650; }
svg .axis, svg .value { font-size:11px; fill:var(--muted); }
svg .label { font-size:12px; fill:var(--fg); }
svg .mono { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; font-size:11px; }
.legend { display:flex; flex-wrap:wrap; gap:6px 16px; font-size:12px; margin:6px 0 10px; color:var(--muted); }
.legend i { display:inline-block; width:11px; height:11px; border-radius:2px; margin-right:5px; vertical-align:-1px; }
table { border-collapse:collapse; width:100%; font-size:13px; margin:6px 0 4px; }
th, td { text-align:left; padding:6px 8px; border-bottom:1px solid var(--line); vertical-align:top; }
th { background:#f0f2f5; font-weight:600; white-space:nowrap; }
table.sortable th { cursor:pointer; user-select:none; }
table.sortable th::after { content:" \\2195"; color:#9aa3ad; font-size:11px; }
table.sortable th[aria-sort=ascending]::after { content:" \\2191"; color:var(--fg); }
table.sortable th[aria-sort=descending]::after { content:" \\2193"; color:var(--fg); }
tbody tr:nth-child(even) { background:#fafbfc; }
td.num, th.num { text-align:right; font-variant-numeric: tabular-nums; }
code, .mono { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; font-size:12px; }
a { color:var(--accent); }
.sev { display:inline-block; padding:1px 7px; border-radius:10px; font-size:11px; font-weight:650; color:#fff; }
.sev.blocker { background:#c62828; } .sev.warning { background:#ef8f00; } .sev.info { background:#1e88e5; }
.grade { display:inline-block; min-width:22px; text-align:center; padding:1px 6px; border-radius:4px; color:#fff; font-weight:700; font-size:12px; }
.chip { display:inline-block; background:#eef0f3; border-radius:10px; padding:1px 8px; margin:1px 2px; font-size:12px; }
.kernel { display:inline-block; background:#e8f5e9; color:#1b5e20; border-radius:10px; padding:1px 8px; margin:1px 2px; font-size:12px; font-family: ui-monospace, Menlo, Consolas, monospace; }
details { margin:6px 0; }
details > summary { cursor:pointer; padding:4px 0; }
details.group { border:1px solid var(--line); border-radius:6px; padding:4px 12px; margin:8px 0; }
details.group > summary { font-weight:600; }
.filter { width:100%; max-width:420px; padding:6px 10px; border:1px solid var(--line); border-radius:6px; font-size:13px; margin:4px 0 8px; }
.rule { border-top:1px solid var(--line); padding:10px 0; }
.rule h3 { margin:0 0 4px; }
.rule p { margin:4px 0; }
.up { color:#c62828; font-weight:650; } .down { color:#2e7d32; font-weight:650; }
footer { color:var(--muted); font-size:12px; text-align:center; padding:0 0 30px; }
.small { font-size:12px; }
.nowrap { white-space:nowrap; }
td.path { overflow-wrap:anywhere; min-width:190px; max-width:380px; }
td a.mono { overflow-wrap:anywhere; }
.scroll { overflow-x:auto; }
"""

_SCRIPT = """
(function () {
  function cellValue(row, index) {
    var cell = row.cells[index];
    if (!cell) { return ""; }
    var sort = cell.getAttribute("data-sort");
    return sort !== null ? sort : cell.textContent.trim();
  }
  function sortTable(table, index, th) {
    var body = table.tBodies[0];
    var rows = Array.prototype.slice.call(body.rows);
    var ascending = th.getAttribute("aria-sort") !== "ascending";
    var numeric = rows.every(function (r) { var v = cellValue(r, index); return v === "" || !isNaN(parseFloat(v)); });
    rows.sort(function (a, b) {
      var x = cellValue(a, index), y = cellValue(b, index);
      var order = numeric ? (parseFloat(x || "0") - parseFloat(y || "0")) : x.localeCompare(y);
      return ascending ? order : -order;
    });
    Array.prototype.forEach.call(table.tHead.rows[0].cells, function (c) { c.removeAttribute("aria-sort"); });
    th.setAttribute("aria-sort", ascending ? "ascending" : "descending");
    var fragment = document.createDocumentFragment();
    rows.forEach(function (r) { fragment.appendChild(r); });
    body.appendChild(fragment);
  }
  Array.prototype.forEach.call(document.querySelectorAll("table.sortable"), function (table) {
    Array.prototype.forEach.call(table.tHead.rows[0].cells, function (th, index) {
      th.tabIndex = 0;
      th.addEventListener("click", function () { sortTable(table, index, th); });
      th.addEventListener("keydown", function (e) { if (e.key === "Enter") { sortTable(table, index, th); } });
    });
  });
  var filter = document.getElementById("finding-filter");
  if (filter) {
    var table = document.getElementById("findings-table");
    var counter = document.getElementById("finding-count");
    filter.addEventListener("input", function () {
      var words = filter.value.toLowerCase().split(/\\s+/).filter(Boolean);
      var shown = 0;
      Array.prototype.forEach.call(table.tBodies[0].rows, function (row) {
        var text = row.textContent.toLowerCase();
        var visible = words.every(function (w) { return text.indexOf(w) >= 0; });
        row.style.display = visible ? "" : "none";
        if (visible) { shown += 1; }
      });
      counter.textContent = String(shown);
    });
  }
})();
"""


def _e(value: Any) -> str:
    return escape(str(value), quote=True)


def _sev(severity: str) -> str:
    return f'<span class="sev {_e(severity)}">{_e(severity)}</span>'


def _grade(grade: str) -> str:
    return f'<span class="grade" style="background:{charts.grade_color(grade)}">{_e(grade)}</span>'


def _loc(row: dict[str, Any]) -> str:
    return f'<a class="mono" href="{_e(row["link"])}">{_e(row["path"])}:{row["line"]}</a>'


def _rule(rule_id: str, rules: dict[str, Any]) -> str:
    info = rules.get(rule_id)
    title = f' title="{_e(info["title"])}"' if info else ""
    return f'<a href="#rule-{_e(rule_id)}"{title}>{_e(rule_id)}</a>'


def _num(value: float, digits: int = 1) -> str:
    return f'<td class="num" data-sort="{value}">{value:,.{digits}f}</td>'


def _table(
    headers: Sequence[tuple[str, bool]], rows: Iterable[str], sortable: bool = True, table_id: str = ""
) -> str:
    head = "".join(f'<th class="num">{_e(h)}</th>' if num else f"<th>{_e(h)}</th>" for h, num in headers)
    ident = f' id="{table_id}"' if table_id else ""
    cls = ' class="sortable"' if sortable else ""
    return f'<div class="scroll"><table{cls}{ident}><thead><tr>{head}</tr></thead><tbody>{"".join(rows)}</tbody></table></div>'


def _legend(items: Sequence[tuple[str, str]]) -> str:
    return (
        '<div class="legend">'
        + "".join(f'<span><i style="background:{c}"></i>{_e(t)}</span>' for t, c in items)
        + "</div>"
    )


# ---- sections -------------------------------------------------------------------------------------
def _header(report: dict[str, Any]) -> str:
    meta, frame, scope = report["meta"], report["frame"], report["scope"]
    frame_text = (
        (
            f"Neuron SDK <b>{_e(frame['sdk'])}</b> &middot; <b>{_e(frame['chip'])}</b> ({_e(frame['neuroncore'])}) &middot; "
            f"<b>{_e(frame['backend'])}</b> backend{'' if frame['training'] else ' (inference only)'}"
        )
        if frame
        else ""
    )
    return (
        f'<header><h1>{_e(meta["title"])}</h1><div class="frame">{frame_text} &middot; '
        f"{scope['files']:,} files, {scope['lines']:,} lines &middot; generated {_e(meta['generated'])} by neuronlint {_e(meta['version'])}</div></header>"
    )


def _nav(report: dict[str, Any]) -> str:
    links = [
        ("summary", "Summary"),
        ("blockers", "Blockers"),
        ("breakdown", "Score breakdown"),
        ("hotspots", "Hot spots"),
        ("libraries", "CUDA-only libraries"),
        ("kernels", "Custom kernels"),
        ("verdicts", "Dtypes & ops"),
        ("effort", "Effort"),
        ("packages", "Packages"),
        ("neuron", "Neuron coupling"),
    ]
    if report.get("comparison"):
        links.append(("whatif", "What-if"))
    if report.get("trend"):
        links.append(("trend", "Trend"))
    links += [("findings", "All findings"), ("rules", "Rules")]
    return "<nav>" + "".join(f'<a href="#{i}">{_e(t)}</a>' for i, t in links) + "</nav>"


def _summary(report: dict[str, Any]) -> str:
    s = report["summary"]
    bands = [(g["grade"], g["below"]) for g in report["grades"]]
    cards = []
    for d in ("cuda", "neuron"):
        row = s[d]
        gauge = charts.gauge(row["score"], row["grade"], row["label"], row["title"], bands)
        areas = ", ".join(row["top_areas"]) or "no findings"
        cards.append(
            f'<div class="card"><h3>{_e(row["title"])}</h3><div class="q">{_e(row["question"])}</div>{gauge}'
            f'<div><span class="label" style="color:{charts.grade_color(row["grade"])}">{_e(row["label"])}</span>'
            f" &middot; {row['blockers']:,} blockers &middot; {row['findings']:,} findings</div>"
            f'<div class="small muted">Largest areas: {_e(areas)}</div></div>'
        )
    op = s.get("op_support")
    op_text = (
        f"{op['supported_percentage']:.1f}%"
        if op and op.get("supported_percentage") is not None
        else "not traced"
    )
    kpis = [
        (f"{s['cuda']['blockers']:,}", "CUDA blockers"),
        (f"{s['cuda']['hours']:,.0f} h", f"estimated effort ({s['cuda']['weeks']:.1f} weeks)"),
        (f"{s['kernels']:,}", f"custom kernels to port ({s['kernel_units']} sites)"),
        (f"{s['libraries']:,}", "CUDA-only libraries"),
        (f"{s['cuda']['hot_spot_files']:,}", f"files hold {report['hot_spot_share']:g}% of CUDA coupling"),
        (op_text, "op calls lowered (traced)"),
    ]
    kpi_html = (
        '<div class="kpis">'
        + "".join(
            f'<div class="kpi"><div class="v">{_e(v)}</div><div class="k">{_e(k)}</div></div>'
            for v, k in kpis
        )
        + "</div>"
    )
    trend = report.get("trend")
    trend_html = (
        f'<p class="trendline">Trend against <code>{_e(trend["ref"])}</code>: {_e(trend["summary"])}</p>'
        if trend
        else ""
    )
    return (
        f'<section id="summary"><h2>Executive summary</h2>'
        f'<p class="lead">Two directions: how much must change to run this code on Neuron (CUDA coupling), and how much '
        f"Neuron-specific code would have to change to leave Neuron later (Neuron coupling). 0 is none, 100 is total.</p>"
        f'<div class="cards">{"".join(cards)}</div>{kpi_html}<p class="headline">{_e(s["headline"])}</p>{trend_html}</section>'
    )


def _area_color(index: int) -> str:
    return charts.PALETTE[index % len(charts.PALETTE)]


def _breakdown_block(report: dict[str, Any], direction: str) -> str:
    data = report["breakdown"][direction]
    title = report["summary"][direction]["title"]
    if not data["areas"]:
        return f'<h3>{_e(title)}: 0</h3><p class="muted">No findings in this direction.</p>'
    segments = [(a["title"], a["points"], _area_color(i)) for i, a in enumerate(data["areas"])]
    bar = charts.stacked_bar(segments, 100.0, label=f"{title}: points per area")
    legend = _legend(
        [(f"{a['title']} {a['points_shown']:.1f}", _area_color(i)) for i, a in enumerate(data["areas"])]
    )
    rows = []
    for i, a in enumerate(data["areas"]):
        rows.append(
            f'<tr><td><i style="display:inline-block;width:10px;height:10px;background:{_area_color(i)};margin-right:6px"></i>'
            f'<span title="{_e(a["rationale"])}">{_e(a["title"])}</span></td>'
            f'<td class="num">{a["findings"]:,}</td><td class="num">{a["counted"]:,}</td><td class="num">{a["blockers"]:,}</td>'
            f'{_num(a["evidence"])}{_num(a["half"])}<td class="num">{a["max"]:g}</td>{_num(a["coupling"])}'
            f'<td class="num" data-sort="{a["points"]}"><b>{a["points_shown"]:.1f}</b></td></tr>'
        )
    total = sum(a["points_shown"] for a in data["areas"])
    rows.append(
        f'<tr><td><b>Score</b></td><td colspan="7" class="small muted">sum of the points; half-points scaled '
        f'&times;{data["size_scale"]:.2f} for the size of the code</td><td class="num"><b>{total:.1f}</b> &rarr; {data["score"]}</td></tr>'
    )
    table = _table(
        [
            ("Area", False),
            ("Findings", True),
            ("Counted", True),
            ("Blockers", True),
            ("Evidence E", True),
            ("Half-point", True),
            ("Max", True),
            ("Coupling c", True),
            ("Points", True),
        ],
        rows,
        sortable=False,
    )
    return f"<h3>{_e(title)}: {data['score']}</h3>{bar}{legend}{table}"


def _breakdown(report: dict[str, Any]) -> str:
    formula = "".join(f"<li>{_e(line)}</li>" for line in report["formula"])
    grades = "".join(
        f"<li>{_grade(g['grade'])} below {g['below']}: {_e(g['label'])} &mdash; {_e(g['rationale'])}</li>"
        for g in report["grades"]
    )
    return (
        f'<section id="breakdown"><h2>Where the score comes from</h2>'
        f'<p class="lead">Each score is built from areas that saturate on their own, so that a thousand <code>.cuda()</code> '
        f"calls cannot outweigh one custom kernel. The points of the areas add up to the score; every finding's "
        f'share is listed under <a href="#findings">All findings</a>. Weights live in <code>rules/lockin.toml</code>.</p>'
        f"{_breakdown_block(report, 'cuda')}{_breakdown_block(report, 'neuron')}"
        f'<details><summary>Formula</summary><ol class="small">{formula}</ol></details>'
        f'<details><summary>Grade bands</summary><ul class="small">{grades}</ul></details>'
        f"<h3>Findings by category</h3>{_legend([(k, v) for k, v in charts.SEVERITY_COLORS.items()])}"
        f"{charts.category_chart(report['categories'])}</section>"
    )


def _finding_rows(rows: Sequence[dict[str, Any]], rules: dict[str, Any]) -> list[str]:
    out = []
    for r in rows:
        out.append(
            f'<tr><td data-sort="{_sev_rank(r["severity"])}">{_sev(r["severity"])}</td><td class="path">{_loc(r)}</td>'
            f"<td>{_rule(r['rule'], rules)}</td><td>{_e(r['message'])}</td>{_num(r['points'], 2)}</tr>"
        )
    return out


def _sev_rank(severity: str) -> int:
    return {"blocker": 3, "warning": 2, "info": 1}.get(severity, 0)


def _blockers(report: dict[str, Any]) -> str:
    groups = report["blockers"]
    if not groups:
        return '<section id="blockers"><h2>Blockers</h2><p class="muted">No blockers: nothing stops this code from compiling for the chosen frame.</p></section>'
    parts = []
    for i, g in enumerate(groups):
        chips = "".join(
            f'<span class="chip">{_rule(r["rule"], report["rules"])} &times;{r["count"]}</span>'
            for r in g["rules"]
        )
        rows = _finding_rows(g["findings"], report["rules"])
        more = g["count"] - len(g["findings"])
        more_text = (
            f'<p class="small muted">{more:,} more in <a href="#findings">All findings</a>.</p>'
            if more > 0
            else ""
        )
        direction = "Neuron coupling" if g["direction"] == "neuron" else "CUDA coupling"
        parts.append(
            f'<details class="group"{" open" if i < 3 else ""}><summary>{_e(g["title"])} &mdash; {g["count"]:,} '
            f"blocker{'s' if g['count'] != 1 else ''} in {g['files']:,} file{'s' if g['files'] != 1 else ''} "
            f'<span class="small muted">({direction})</span></summary><div>{chips}</div>'
            f"{_table([('Severity', False), ('Location', False), ('Rule', False), ('Message', False), ('Points', True)], rows)}{more_text}</details>"
        )
    return (
        f'<section id="blockers"><h2>Blockers that gate the migration</h2><p class="lead">Findings that stop the code from '
        f"compiling or running on the chosen frame, grouped by area, the heaviest areas first.</p>{''.join(parts)}</section>"
    )


def _hot_spot_table(spots: Sequence[dict[str, Any]], rules: dict[str, Any]) -> str:
    rows = []
    for i, h in enumerate(spots, start=1):
        rules_html = " ".join(_rule(r, rules) for r in h["rules"])
        rows.append(
            f'<tr><td class="num">{i}</td><td class="path"><a class="mono" href="{_e(h["link"])}">{_e(h["path"])}</a>'
            f'<div class="small muted">{_e(", ".join(h["areas"]))}</div></td>'
            f"{_num(h['points'], 2)}{_num(h['share'])}{_num(h['cumulative'])}"
            f'<td data-sort="{h["score"]}" class="nowrap">{h["score"]} {_grade(h["grade"])}</td><td class="num">{h["blockers"]}</td>'
            f'<td class="num">{h["findings"]}</td>{_num(h["hours"])}<td class="nowrap">{rules_html}</td></tr>'
        )
    return _table(
        [
            ("#", True),
            ("File and main areas", False),
            ("Points", True),
            ("Share %", True),
            ("Cum. %", True),
            ("File score", True),
            ("Blockers", True),
            ("Findings", True),
            ("Hours", True),
            ("Rules", False),
        ],
        rows,
    )


def _hot_spots(report: dict[str, Any]) -> str:
    spots = report["hot_spots"]["cuda"]
    count = report["hot_spot_count"]["cuda"]
    bars = charts.ranked_bars(
        [
            (
                h["path"],
                h["points"],
                charts.grade_color(h["grade"]),
                f"{h['path']}: {h['points']:.2f} points ({h['share']:.1f}% of the score), file score {h['score']} {h['grade']}",
            )
            for h in spots[:15]
        ]
    )
    return (
        f'<section id="hotspots"><h2>Hot spots</h2><p class="lead">Files ranked by their share of the repository\'s CUDA '
        f"coupling. {count:,} file{'s' if count != 1 else ''} hold {report['hot_spot_share']:g}% of it. Bar colour is the "
        f"file's own grade.</p>{bars}{_hot_spot_table(spots, report['rules'])}</section>"
    )


def _libraries(report: dict[str, Any]) -> str:
    rows = []
    for lib in report["libraries"]:
        source = f' <a class="small" href="{_e(lib["source"])}">source</a>' if lib["source"] else ""
        files = "".join(f'<div class="mono small">{_e(f)}</div>' for f in lib["top_files"])
        rows.append(
            f'<tr><td><b class="mono">{_e(lib["library"])}</b><div class="small muted">{_e(lib["kind"])} &middot; '
            f"Neuron: {_e(lib['neuron_status'])}</div></td>"
            f'<td class="num">{lib["findings"]}</td><td class="num">{lib["blockers"]}</td><td class="num">{lib["guarded"]}</td>'
            f'<td class="num">{lib["files"]}</td>{_num(lib["hours"])}<td>{_e(lib["alternative"])}{source}</td>'
            f'<td class="path">{files}</td></tr>'
        )
    body = (
        _table(
            [
                ("Library", False),
                ("Findings", True),
                ("Blockers", True),
                ("Guarded", True),
                ("Files", True),
                ("Hours", True),
                ("Neuron alternative", False),
                ("Main files", False),
            ],
            rows,
        )
        if rows
        else '<p class="muted">No CUDA-only library is imported.</p>'
    )
    return (
        f'<section id="libraries"><h2>CUDA-only libraries and their Neuron alternatives</h2><p class="lead">'
        f'"Guarded" counts imports inside <code>try/except ImportError</code>: a fallback exists, check that it is the one '
        f"Neuron takes. Alternatives come from rules/libraries.toml with their Neuron documentation source.</p>{body}</section>"
    )


def _kernels(report: dict[str, Any]) -> str:
    rows = []
    for k in report["kernels"]:
        nki = (
            "".join(f'<span class="kernel">{_e(n)}</span>' for n in k["nki_kernels"])
            or '<span class="muted">none in the library</span>'
        )
        where = f'<a class="mono" href="{_e(k["link"])}">{_e(k["subject"])}</a>'
        if k["subject_kind"] == "kernel":
            files = f'<div class="small muted">Triton kernel in {_e(k["first"]["path"])}, {k["launches"]} launch site(s) found</div>'
        elif k["subject_kind"] == "module":
            files = f'<div class="small muted">compiled module, imported in {len(k["files"])} file(s)</div>'
        else:
            files = ""
        rows.append(
            f"<tr><td>{where}{files}</td>"
            f'<td>{" ".join(_rule(r, report["rules"]) for r in k["rules"])}</td><td class="num">{k["kernels"]}</td>'
            f'{_num(k["hours"])}<td>{_e(k["kind_title"])}</td><td>{nki}<div class="small muted">{_e(k["note"])} '
            f'<a href="{_e(k["source"])}">source</a></div></td></tr>'
        )
    body = (
        _table(
            [
                ("Kernel code", False),
                ("Rules", False),
                ("Kernels", True),
                ("Hours", True),
                ("Recognised as", False),
                ("NKI Library replacement", False),
            ],
            rows,
        )
        if rows
        else '<p class="muted">No custom GPU kernel was found.</p>'
    )
    return (
        f'<section id="kernels"><h2>Custom kernels and the NKI Library kernels that replace them</h2>'
        f'<p class="lead">Recognised from kernel, module and file names (rules/nki-library.toml); a suggestion to check, '
        f"not a proof of equivalence.</p>{body}</section>"
    )


def _verdicts(report: dict[str, Any]) -> str:
    frame = report["frame"]
    chip = f"{frame['chip']}, Neuron SDK {frame['sdk']}" if frame else "the chosen chip"
    rows = []
    for d in report["dtypes"]:
        if d["chip_status"]:
            source = f' <a href="{_e(d["chip_source"])}">source</a>' if d["chip_source"] else ""
            chip_status = f'{_e(d["chip_status"])}<div class="small muted">{_e(d["chip_note"])}{source}</div>'
        else:
            chip_status = '<span class="muted">&mdash;</span>'
        rows.append(
            f'<tr><td class="mono">{_e(d["construct"])}</td><td>{_rule(d["rule"], report["rules"])} {_e(d["title"])}</td>'
            f'<td data-sort="{_sev_rank(d["severity"])}">{_sev(d["severity"])}</td><td>{_e(d["status"])}</td>'
            f'<td class="num">{d["findings"]}</td><td>{chip_status}</td></tr>'
        )
    dtype_html = (
        _table(
            [
                ("Dtype / construct", False),
                ("Rule", False),
                ("Verdict", False),
                ("Status", False),
                ("Findings", True),
                (f"On {frame['target'] if frame else 'chip'}", False),
            ],
            rows,
        )
        if rows
        else '<p class="muted">No dtype findings.</p>'
    )
    op_rows = [
        f'<tr><td class="mono">{_e(o["op"])}</td><td>{_rule(o["rule"], report["rules"])} {_e(o["title"])}</td>'
        f'<td>{_sev(o["severity"])}</td><td>{_e(o["status"])}</td><td class="num">{o["findings"]}</td>'
        f'<td class="small">{_e(o["message"])}</td></tr>'
        for o in report["ops"]
    ]
    trace = report.get("trace")
    if trace:
        models = "".join(
            f"<li><b>{_e(m['name'])}</b>: {_e(m['status'])}, {m['total_ops']:,} op calls, "
            f"{(str(m['supported_percentage']) + '%') if m['supported_percentage'] is not None else 'n/a'} lowered, "
            f"{m['unsupported']} unsupported and {m['unknown']} unknown ops</li>"
            for m in trace["models"]
        )
        share = (
            f"{trace['supported_percentage']:.2f}%" if trace["supported_percentage"] is not None else "n/a"
        )
        trace_html = f"<h3>Traced models: {share} of op calls lowered</h3><ul>{models}</ul>"
    else:
        trace_html = (
            '<p class="small muted">No model was traced, so there is no op support percentage. Run '
            "<code>neuronlint report --trace</code> with <code>[[tool.neuronlint.trace]]</code> entries to add one.</p>"
        )
    op_html = (
        _table(
            [
                ("Op", False),
                ("Rule", False),
                ("Verdict", False),
                ("Status", False),
                ("Findings", True),
                ("Message", False),
            ],
            op_rows,
        )
        if op_rows
        else ""
    )
    return (
        f'<section id="verdicts"><h2>Dtype and operator verdicts for {_e(chip)}</h2>'
        f"<h3>Data types</h3>{dtype_html}<h3>Operators</h3>{trace_html}{op_html}</section>"
    )


def _effort(report: dict[str, Any]) -> str:
    parts = []
    for d in ("cuda", "neuron"):
        e = report["effort"][d]
        title = report["summary"][d]["title"]
        rows = [
            f"<tr><td>{_rule(line['rule'], report['rules'])} {_e(line['title'])}</td><td>{_e(line['effort'])}</td>"
            f'<td class="num">{line["units"]}</td><td class="num">{line["findings"]}</td>{_num(line["hours"])}</tr>'
            for line in e["lines"]
        ]
        classes = ", ".join(f"{k} {v:,.1f} h" for k, v in e["by_class"].items() if v)
        table = (
            _table(
                [
                    ("Rule", False),
                    ("Effort class", False),
                    ("Units", True),
                    ("Findings", True),
                    ("Hours", True),
                ],
                rows,
            )
            if rows
            else '<p class="muted">Nothing to change.</p>'
        )
        parts.append(
            f'<h3>{_e(title)}: {e["hours"]:,.1f} h ({e["weeks"]:.1f} weeks)</h3><p class="small muted">{_e(classes)}</p>{table}'
        )
    assumptions = "".join(f"<li>{_e(a)}</li>" for a in report["effort"]["cuda"]["assumptions"])
    return (
        f'<section id="effort"><h2>Effort estimate</h2><p class="lead">Hours per rule, summed; an order of magnitude to '
        f'plan with, not a quote.</p>{"".join(parts)}<h3>Assumptions</h3><ul class="small">{assumptions}</ul></section>'
    )


def _packages(report: dict[str, Any]) -> str:
    rows = []
    for p in report["packages"]:
        c, n = p["cuda"], p["neuron"]
        rows.append(
            f'<tr><td class="mono">{_e(p["name"])}</td><td class="num">{p["files"]:,}</td><td class="num">{p["lines"]:,}</td>'
            f'<td data-sort="{c["value"]}">{c["score"]} {_grade(c["grade"])}</td><td class="num">{c["blockers"]:,}</td>'
            f'{_num(c["hours"])}<td data-sort="{n["value"]}">{n["score"]} {_grade(n["grade"])}</td>{_num(n["hours"])}</tr>'
        )
    depth = report["scope"]["package_depth"]
    return (
        f'<section id="packages"><h2>Packages</h2><p class="lead">Top-level directories (depth {depth}) under '
        f"<code>{_e(report['scope']['root'] or '.')}</code>, scored on their own.</p>"
        f"{_table([('Package', False), ('Files', True), ('Lines', True), ('CUDA coupling', True), ('CUDA blockers', True), ('CUDA hours', True), ('Neuron coupling', True), ('Neuron hours', True)], rows)}</section>"
    )


def _neuron(report: dict[str, Any]) -> str:
    spots = report["hot_spots"]["neuron"]
    s = report["summary"]["neuron"]
    body = (
        _hot_spot_table(spots, report["rules"])
        if spots
        else '<p class="muted">No Neuron-specific code (torch_xla, NKI, NeuronX Distributed, traced NEFF artifacts) was found.</p>'
    )
    return (
        f'<section id="neuron"><h2>Neuron coupling: the cost of leaving later</h2><p class="lead">Score {s["score"]} '
        f"({_e(s['label'])}); {s['findings']:,} findings, estimated {s['hours']:,.1f} h to undo. torch_xla glue, NKI kernels, "
        f"NeuronX Distributed layers and traced NEFF artifacts tie the code to Neuron the way CUDA ties it to NVIDIA.</p>{body}</section>"
    )


def _change(delta: int) -> str:
    if delta > 0:
        return f'<span class="up">+{delta}</span>'
    if delta < 0:
        return f'<span class="down">{delta}</span>'
    return "&plusmn;0"


def _whatif(report: dict[str, Any]) -> str:
    c = report.get("comparison")
    if not c:
        return ""
    b, o = c["base"], c["other"]
    head = (
        f"SDK {b['sdk']} on {b['target']} ({b['backend']})",
        f"SDK {o['sdk']} on {o['target']} ({o['backend']})",
    )
    rows = [
        f"<tr><td>{_e(r['title'])}</td><td>{r['base']} {_grade(r['base_grade'])}</td><td>{r['other']} {_grade(r['other_grade'])}</td>"
        f'<td>{_change(r["delta"])}</td><td class="num">{r["base_blockers"]:,} &rarr; {r["other_blockers"]:,}</td>'
        f'<td class="num">{r["base_hours"]:,.0f} &rarr; {r["other_hours"]:,.0f}</td></tr>'
        for r in c["scores"].values()
    ]
    table = _table(
        [
            ("Direction", False),
            (head[0], False),
            (head[1], False),
            ("Change", False),
            ("Blockers", True),
            ("Hours", True),
        ],
        rows,
        sortable=False,
    )

    def listing(title: str, groups: Sequence[dict[str, Any]]) -> str:
        if not groups:
            return f"<h3>{_e(title)}: none</h3>"
        items = "".join(
            f"<li>{_rule(g['rule'], report['rules'])} {_e(g['title'])} &times;{g['count']}: "
            + ", ".join(f'<span class="mono">{_e(x["path"])}:{x["line"]}</span>' for x in g["examples"])
            + "</li>"
            for g in groups
        )
        return f'<h3>{_e(title)}: {sum(g["count"] for g in groups):,}</h3><ul class="small">{items}</ul>'

    return (
        f'<section id="whatif"><h2>What-if: {_e(head[0])} &rarr; {_e(head[1])}</h2>{table}'
        f"{listing('Blockers gone', c['blockers_gone'])}{listing('Blockers new', c['blockers_new'])}"
        f'<p class="small muted">{_e(c["note"])}</p></section>'
    )


def _trend(report: dict[str, Any]) -> str:
    t = report.get("trend")
    if not t:
        return ""
    rows = [
        f"<tr><td>{_e(r['title'])}</td><td>{r['base']} {_grade(r['base_grade'])}</td><td>{r['now']} {_grade(r['now_grade'])}</td>"
        f'<td>{_change(r["delta"])}</td><td class="num">+{r["blockers_added"]} / &minus;{r["blockers_removed"]}</td></tr>'
        for r in t["scores"].values()
    ]
    added = [x for r in t["scores"].values() for x in r["added"]]
    items = "".join(
        f'<li>{_rule(x["rule"], report["rules"])} <span class="mono">{_e(x["path"])}:{x["line"]}</span> {_e(x["message"])}</li>'
        for x in added
    )
    return (
        f'<section id="trend"><h2>Trend against <code>{_e(t["ref"])}</code></h2><p class="lead">{_e(t["summary"])} '
        f"(base commit <code>{_e(t['commit'][:12])}</code>)</p>"
        f"{_table([('Direction', False), ('Base', False), ('Now', False), ('Change', False), ('Blockers added / removed', True)], rows, sortable=False)}"
        f"{'<h3>New blockers</h3><ul class=small>' + items + '</ul>' if items else ''}</section>"
    )


def _findings(report: dict[str, Any]) -> str:
    titles = {a["area"]: a["title"] for d in ("cuda", "neuron") for a in report["breakdown"][d]["areas"]}
    directions = {"cuda": "CUDA", "neuron": "Neuron", "none": "not scored"}
    rows = []
    for r in report["findings"]:
        counted = (
            ""
            if r["counted"]
            else ' <span class="small muted" title="over the per-file cap of its rule">(not counted)</span>'
        )
        where = f"{directions.get(r['direction'], r['direction'])} &middot; {_e(titles.get(r['area'], r['area']))}"
        rows.append(
            f'<tr><td data-sort="{_sev_rank(r["severity"])}">{_sev(r["severity"])}</td><td class="path">{_loc(r)}</td>'
            f'<td>{_rule(r["rule"], report["rules"])}</td><td class="small">{where}</td><td>{_e(r["message"])}</td>'
            f'<td class="num" data-sort="{r["weight"]}" title="{_e(r["weight_source"])}">{r["weight"]:g}{counted}</td>'
            f"{_num(r['points'], 3)}<td>{_e(r['effort'])}</td>{_num(r['hours'], 2)}</tr>"
        )
    table = _table(
        [
            ("Severity", False),
            ("Location", False),
            ("Rule", False),
            ("Score · area", False),
            ("Message", False),
            ("Weight", True),
            ("Points", True),
            ("Effort", False),
            ("Hours", True),
        ],
        rows,
        table_id="findings-table",
    )
    return (
        f'<section id="findings"><h2>All findings</h2><p class="lead">Every active finding with the weight and points it '
        f"adds to its direction's repository score (hover a weight for where it comes from). Click a header to sort.</p>"
        f'<input id="finding-filter" class="filter" type="search" placeholder="Filter: path, rule, word..." aria-label="Filter findings">'
        f' <span class="small muted"><span id="finding-count">{len(rows):,}</span> shown</span>{table}</section>'
    )


def _rules(report: dict[str, Any]) -> str:
    cards = []
    for rule_id, r in report["rules"].items():
        sources = " &middot; ".join(
            f'<a href="{_e(u)}">{_e(u.split("/en/")[-1] if "/en/" in u else u)}</a>' for u in r["sources"]
        )
        cards.append(
            f'<div class="rule" id="rule-{_e(rule_id)}"><h3>{_e(rule_id)} {_e(r["name"])}: {_e(r["title"])}</h3>'
            f'<p class="small muted">{_e(r["category"])} &middot; effort {_e(r["effort"])} &middot; '
            f'<a href="{_e(r["doc_url"])}">rule documentation</a></p><p>{_e(r["summary"])}</p>'
            f'<p><b>Why:</b> {_e(r["why"])}</p><p><b>Instead:</b> {_e(r["instead"])}</p><p class="small">Sources: {sources}</p></div>'
        )
    return f'<section id="rules"><h2>Rules in this report</h2>{"".join(cards) or "<p class=muted>None.</p>"}</section>'


def _unanalysed(report: dict[str, Any]) -> str:
    files = report.get("unanalysed") or []
    if not files:
        return ""
    items = "".join(f'<li class="mono">{_e(f)}</li>' for f in files[:50])
    more = f"<li>{len(files) - 50} more</li>" if len(files) > 50 else ""
    return (
        f'<section id="unanalysed"><h2>Files not analysed</h2><p class="lead">{len(files)} file(s) could not be parsed or '
        f"analysed; their coupling is not in the scores.</p><ul>{items}{more}</ul></section>"
    )


def render(report: dict[str, Any]) -> str:
    """The whole report as one HTML document."""
    body = "".join(
        [
            _summary(report),
            _blockers(report),
            _breakdown(report),
            _hot_spots(report),
            _libraries(report),
            _kernels(report),
            _verdicts(report),
            _effort(report),
            _packages(report),
            _neuron(report),
            _whatif(report),
            _trend(report),
            _unanalysed(report),
            _findings(report),
            _rules(report),
        ]
    )
    csp = "default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:"
    return (
        f'<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        f'<meta name="viewport" content="width=device-width, initial-scale=1">'
        f'<meta http-equiv="Content-Security-Policy" content="{csp}">'
        f"<title>{_e(report['meta']['title'])}</title><style>{_CSS}</style></head><body>"
        f"{_header(report)}{_nav(report)}<main>{body}</main>"
        f"<footer>neuronlint {_e(report['meta']['version'])} &middot; scores explained in docs/lock-in.md &middot; "
        f"weights in rules/lockin.toml</footer><script>{_SCRIPT}</script></body></html>\n"
    )
