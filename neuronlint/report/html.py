"""The migration report as one self-contained HTML file: inline CSS, inline SVG charts, a few lines of
inline script for sortable tables and the findings filter. No network access (a Content-Security-
Policy forbids it), so the file works offline and can be attached to a ticket as is. The policy
allows that one stylesheet and that one script by their hashes and nothing inline besides (no
style or event-handler attributes, no `javascript:` links): colours are classes (`bg()`, `fg()`).

The markup is in Jinja2 templates (templates/report.html.j2 and one file per section under
templates/sections/), rendered with autoescape; the stylesheet and the script are assets/report.css
and assets/report.js, inlined as they are. Jinja2 is imported here only, so a plain scan never
loads it.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

from neuronlint.report import charts

HERE = Path(__file__).resolve().parent
TEMPLATES = HERE / "templates"
ASSETS = HERE / "assets"
# The one <style> and the one <script> are allowed by their SHA-256 (computed when the report is
# rendered), nothing else is: no 'unsafe-inline', so no style attribute, no event handler attribute
# and no `javascript:` URL can run, whatever a file name or message puts into the page.
CSP = (
    "default-src 'none'; style-src '{style}'; script-src '{script}'; img-src data:; "
    "base-uri 'none'; form-action 'none'"
)
_COLOR = re.compile(r"#[0-9a-f]{6}")
# Messages and advice mark code with Markdown backticks (`torch.where(...)`); the page shows them as
# <code>. The text is escaped first, so a span holds no markup of its own.
_CODE_SPAN = re.compile(r"`([^`\n]+)`")


def _code_spans(text: object) -> Any:
    """`text` escaped, with each backtick pair turned into a <code> element."""
    from markupsafe import Markup, escape

    return Markup(_CODE_SPAN.sub(r"<code>\1</code>", str(escape(text))))


def _colors() -> list[str]:
    """Every colour the templates may ask a class for (the charts' fixed palettes)."""
    known = [*charts.GRADE_COLORS.values(), *charts.SEVERITY_COLORS.values(), *charts.PALETTE]
    known.append(charts.grade_color(""))
    return list(dict.fromkeys(known))


def _color_class(prefix: str) -> Callable[[str], str]:
    def name(color: str) -> str:
        if not _COLOR.fullmatch(color):
            raise ValueError(f"not a chart colour: {color!r}")
        return f"{prefix}-{color[1:]}"

    return name


def _color_css() -> str:
    """Classes for the palette colours: the templates use classes, never a style attribute."""
    rules = [f".bg-{c[1:]} {{ background:{c}; }}\n.fg-{c[1:]} {{ color:{c}; }}" for c in _colors()]
    return "\n".join(rules) + "\n"


def _hash_source(text: str) -> str:
    import base64
    import hashlib

    return "sha256-" + base64.b64encode(hashlib.sha256(text.encode("utf-8")).digest()).decode("ascii")


# A line break and the indentation after it carry no meaning in the templates: they are removed at
# load time, so that markup can be laid out on several lines and the output stays as compact as
# markup written on one line (text that needs a space keeps it on the same line).
_LAYOUT = re.compile(r"[ \t]*\n[ \t]*")


def _sev_rank(severity: str) -> int:
    return {"blocker": 3, "warning": 2, "info": 1}.get(severity, 0)


def _area_color(index: int) -> str:
    return charts.PALETTE[index % len(charts.PALETTE)]


def _helpers() -> dict[str, Callable[..., Any]]:
    """Functions the templates call: the SVG charts (already escaped markup) and small row shapes."""
    from markupsafe import Markup

    def svg(chart: Callable[..., str]) -> Callable[..., Markup]:
        return lambda *args, **kwargs: Markup(chart(*args, **kwargs))

    return {
        "gauge": svg(charts.gauge),
        "stacked_bar": svg(charts.stacked_bar),
        "ranked_bars": svg(charts.ranked_bars),
        "category_chart": svg(charts.category_chart),
        "grade_color": charts.grade_color,
        "severity_colors": list(charts.SEVERITY_COLORS.items()),
        "sev_rank": _sev_rank,
        "area_color": _area_color,
        "bg": _color_class("bg"),  # class="{{ bg(color) }}": a background from the palette
        "fg": _color_class("fg"),
        "grade_bands": lambda grades: [(g["grade"], g["below"]) for g in grades],
        "area_segments": lambda areas: [
            (a["title"], a["points"], _area_color(i)) for i, a in enumerate(areas)
        ],
        "area_legend": lambda areas: [
            (f"{a['title']} {a['points_shown']:.1f}", _area_color(i)) for i, a in enumerate(areas)
        ],
        "hot_spot_bars": lambda spots: [
            (
                h["path"],
                h["points"],
                charts.grade_color(h["grade"]),
                f"{h['path']}: {h['points']:.2f} points ({h['share']:.1f}% of the score), "
                f"file score {h['score']} {h['grade']}",
            )
            for h in spots
        ],
        "class_hours": lambda by_class: ", ".join(f"{k} {v:,.1f} h" for k, v in by_class.items() if v),
        "added_blockers": lambda trend: [x for r in trend["scores"].values() for x in r["added"]],
        "area_titles": lambda report: {
            a["area"]: a["title"] for d in ("cuda", "neuron") for a in report["breakdown"][d]["areas"]
        },
    }


def _environment() -> Any:
    import jinja2

    class CompactLoader(jinja2.FileSystemLoader):
        def get_source(self, environment: jinja2.Environment, template: str) -> tuple[str, str, Any]:
            source, filename, uptodate = super().get_source(environment, template)
            return _LAYOUT.sub("", source), filename, uptodate

    env = jinja2.Environment(
        loader=CompactLoader(str(TEMPLATES)),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
    )
    env.filters["fmt"] = format  # {{ value|fmt(',.1f') }} is f"{value:,.1f}"
    env.filters["code"] = _code_spans  # {{ r['message']|code }}
    env.globals.update(_helpers())
    return env


_ENV: list[Any] = []


def render(report: dict[str, Any]) -> str:
    """The whole report as one HTML document."""
    from markupsafe import Markup

    if not _ENV:
        _ENV.append(_environment())
    template = _ENV[0].get_template("report.html.j2")
    css = "\n" + (ASSETS / "report.css").read_text(encoding="utf-8") + _color_css()
    script = "\n" + (ASSETS / "report.js").read_text(encoding="utf-8")
    if "</" in css or "</" in script:  # would end the element early, and the hash would not match
        raise ValueError("the report's stylesheet or script contains '</'")
    csp = CSP.format(style=_hash_source(css), script=_hash_source(script))
    return template.render(report=report, csp=Markup(csp), css=Markup(css), script=Markup(script))
