"""Inline SVG charts for the HTML report: score gauges, stacked bars, ranked bars. No scripts, no fonts
from the network; every element carries a <title> so values show on hover and in screen readers."""

from __future__ import annotations

import math
from collections.abc import Sequence
from html import escape

GRADE_COLORS = {"A": "#2e7d32", "B": "#689f38", "C": "#f9a825", "D": "#ef6c00", "F": "#c62828"}
SEVERITY_COLORS = {"blocker": "#c62828", "warning": "#ef8f00", "info": "#1e88e5"}
PALETTE = (
    "#5b4fc4",
    "#1e88e5",
    "#00897b",
    "#c0ca33",
    "#f9a825",
    "#ef6c00",
    "#d81b60",
    "#8e24aa",
    "#6d4c41",
    "#546e7a",
    "#26a69a",
    "#7cb342",
)


def grade_color(grade: str) -> str:
    return GRADE_COLORS.get(grade[:1], "#546e7a")


def _arc(cx: float, cy: float, r: float, start: float, end: float) -> str:
    """SVG path of a circular arc between two fractions (0 = left, 1 = right) of a half circle."""
    a0, a1 = math.pi * (1 - start), math.pi * (1 - end)
    x0, y0 = cx + r * math.cos(a0), cy - r * math.sin(a0)
    x1, y1 = cx + r * math.cos(a1), cy - r * math.sin(a1)
    large = 1 if (end - start) > 1 else 0
    return f"M {x0:.2f} {y0:.2f} A {r} {r} 0 {large} 1 {x1:.2f} {y1:.2f}"


def gauge(score: int, grade: str, label: str, title: str, bands: Sequence[tuple[str, int]]) -> str:
    """A half-circle gauge 0-100 with the grade bands as a thin outer ring and the score as a thick arc."""
    cx, cy, r = 110, 108, 86
    parts = [
        f'<svg class="gauge" viewBox="0 0 220 150" width="220" height="150" role="img" '
        f'aria-label="{escape(title)}: {score} of 100, grade {escape(grade)}">',
        f"<title>{escape(title)}: {score}/100, grade {escape(grade)} ({escape(label)})</title>",
        f'<path d="{_arc(cx, cy, r, 0, 1)}" fill="none" stroke="#e6e8eb" stroke-width="18"/>',
    ]
    low = 0
    for band_grade, below in bands:
        high = min(below, 100)
        if high > low:
            parts.append(
                f'<path d="{_arc(cx, cy, r + 14, low / 100, high / 100)}" fill="none" '
                f'stroke="{grade_color(band_grade)}" stroke-width="4" opacity="0.55">'
                f"<title>grade {escape(band_grade)}: {low} to {high - 1}</title></path>"
            )
        low = high
    if score > 0:
        parts.append(
            f'<path d="{_arc(cx, cy, r, 0, max(score, 0.5) / 100)}" fill="none" '
            f'stroke="{grade_color(grade)}" stroke-width="18" stroke-linecap="butt"/>'
        )
    parts.append(f'<text x="{cx}" y="{cy - 14}" text-anchor="middle" class="gauge-score">{score}</text>')
    parts.append(
        f'<text x="{cx}" y="{cy + 12}" text-anchor="middle" class="gauge-grade" fill="{grade_color(grade)}">'
        f"grade {escape(grade)}</text>"
    )
    parts.append(f'<text x="{cx - r}" y="{cy + 26}" text-anchor="middle" class="axis">0</text>')
    parts.append(f'<text x="{cx + r}" y="{cy + 26}" text-anchor="middle" class="axis">100</text>')
    parts.append("</svg>")
    return "".join(parts)


def stacked_bar(
    segments: Sequence[tuple[str, float, str]], total: float, width: int = 640, label: str = ""
) -> str:
    """One horizontal bar 0..total split into (name, value, color) segments, with a legend below."""
    height = 26
    parts = [
        f'<svg class="stacked" viewBox="0 0 {width} {height + 4}" width="100%" preserveAspectRatio="none" '
        f'role="img" aria-label="{escape(label)}"><title>{escape(label)}</title>',
        f'<rect x="0" y="2" width="{width}" height="{height}" fill="#eef0f3" rx="3"/>',
    ]
    x = 0.0
    for name, value, color in segments:
        w = width * value / total if total else 0
        if w <= 0:
            continue
        parts.append(
            f'<rect x="{x:.2f}" y="2" width="{w:.2f}" height="{height}" fill="{color}">'
            f"<title>{escape(name)}: {value:.1f}</title></rect>"
        )
        x += w
    parts.append("</svg>")
    return "".join(parts)


def category_chart(rows: Sequence[dict], width: int = 640) -> str:
    """Findings per category, stacked by severity (blockers first)."""
    if not rows:
        return '<p class="muted">No findings.</p>'
    label_w, row_h, gap = 140, 22, 8
    biggest = max(r["total"] for r in rows)
    bar_w = width - label_w - 60
    height = len(rows) * (row_h + gap) + 8
    parts = [
        f'<svg class="chart" viewBox="0 0 {width} {height}" width="{width}" height="{height}" role="img" '
        f'aria-label="Findings by category and severity"><title>Findings by category and severity</title>'
    ]
    for i, row in enumerate(rows):
        y = 4 + i * (row_h + gap)
        parts.append(
            f'<text x="{label_w - 8}" y="{y + row_h * 0.72:.1f}" text-anchor="end" class="label">'
            f"{escape(row['category'])}</text>"
        )
        x = float(label_w)
        for severity in ("blocker", "warning", "info"):
            value = row.get(severity, 0)
            if not value:
                continue
            w = bar_w * value / biggest
            parts.append(
                f'<rect x="{x:.2f}" y="{y}" width="{max(w, 1):.2f}" height="{row_h}" '
                f'fill="{SEVERITY_COLORS[severity]}"><title>{escape(row["category"])}: {value} '
                f"{severity}{'s' if value != 1 else ''}</title></rect>"
            )
            x += w
        parts.append(f'<text x="{x + 6:.1f}" y="{y + row_h * 0.72:.1f}" class="value">{row["total"]}</text>')
    parts.append("</svg>")
    return "".join(parts)


def ranked_bars(rows: Sequence[tuple[str, float, str, str]], width: int = 760, unit: str = "points") -> str:
    """Horizontal bars for ranked items: (label, value, color, tooltip). Labels are shortened on the left."""
    if not rows:
        return '<p class="muted">Nothing to rank.</p>'
    label_w, row_h, gap = 330, 18, 6
    biggest = max(v for _, v, _, _ in rows) or 1.0
    bar_w = width - label_w - 70
    height = len(rows) * (row_h + gap) + 6
    parts = [
        f'<svg class="chart" viewBox="0 0 {width} {height}" width="{width}" height="{height}" role="img" '
        f'aria-label="Hot spots ranked by {escape(unit)}"><title>Hot spots ranked by {escape(unit)}</title>'
    ]
    for i, (label, value, color, tooltip) in enumerate(rows):
        y = 3 + i * (row_h + gap)
        shown = label if len(label) <= 52 else "\u2026" + label[-51:]
        w = max(bar_w * value / biggest, 1.0)
        parts.append(
            f'<text x="{label_w - 8}" y="{y + row_h * 0.75:.1f}" text-anchor="end" class="label mono">'
            f"<title>{escape(label)}</title>{escape(shown)}</text>"
        )
        parts.append(
            f'<rect x="{label_w}" y="{y}" width="{w:.2f}" height="{row_h}" rx="2" fill="{color}">'
            f"<title>{escape(tooltip)}</title></rect>"
        )
        parts.append(
            f'<text x="{label_w + w + 6:.1f}" y="{y + row_h * 0.75:.1f}" class="value">{value:.1f}</text>'
        )
    parts.append("</svg>")
    return "".join(parts)
