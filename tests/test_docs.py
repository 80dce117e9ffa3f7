"""Generated rule pages: committed copies are current, and every page has the sections users need."""

from __future__ import annotations

import re

from typer.testing import CliRunner

from neuronlint.cli import app
from neuronlint.ruledb import load_ruledb
from neuronlint.ruledb.pages import REGENERATE, generated_pages
from scripts.generate_rule_docs import docs_dir

SECTIONS = (
    "## What it detects",
    "## Why it matters on Neuron",
    "## Example",
    "## What to do instead",
    "## Verdict by Neuron SDK release and chip",
    "## Sources",
)


def test_committed_docs_are_current() -> None:
    pages = generated_pages(load_ruledb())
    directory = docs_dir()
    committed = {p.name for p in directory.glob("*.md")}
    stale = sorted(
        name
        for name, text in pages.items()
        if not (directory / name).is_file() or (directory / name).read_text(encoding="utf-8") != text
    )
    extra = sorted(committed - set(pages))
    assert not stale and not extra, (
        f"docs/rules/ is out of date with rules/ (stale or missing: {stale}; no longer generated: {extra}). "
        f"Regenerate with `{REGENERATE}` and commit docs/rules/."
    )


def test_every_rule_page_is_complete() -> None:
    db = load_ruledb()
    pages = generated_pages(db)
    assert set(pages) == {f"{rid}.md" for rid in db.rules} | {"README.md"}
    for rule in db.rules.values():
        page = pages[f"{rule.id}.md"]
        positions = [page.find(section) for section in SECTIONS]
        assert all(p >= 0 for p in positions) and positions == sorted(positions), rule.id
        instead = page.split("## What to do instead", 1)[1].split("\n## ", 1)[0]
        assert (
            "PyTorch/XLA backend" in instead and "Native TorchNeuron" in instead
        ) or "On any Neuron backend" in instead
        table = page.split("## Verdict by Neuron SDK release and chip", 1)[1].split("\n## ", 1)[0]
        assert "| SDK | inf2 | trn1 | trn2 | trn3 |" in table  # the chips of rules/chips.toml
        for version in db.versions():
            assert re.search(rf"^\| {re.escape(version)} \|", table, re.M), (rule.id, version)
        sources = page.split("## Sources", 1)[1]
        assert set(re.findall(r"<(https://[^>]+)>", sources)) == set(rule.all_sources()), rule.id


def test_version_table_shows_both_backends_where_a_release_offers_two() -> None:
    page = generated_pages(load_ruledb())["NL801.md"]
    row_233 = next(line for line in page.splitlines() if line.startswith("| 2.33 |"))
    row_229 = next(line for line in page.splitlines() if line.startswith("| 2.29 |"))
    assert "xla: warning, unsupported<br>native: info, supported" in row_233
    assert (
        row_229
        == "| 2.29 | warning, unsupported (xla) | warning, unsupported (xla) | warning, unsupported (xla) | warning, unsupported (xla) |"
    )
    assert "- **trn2, TorchNeuron:** info, supported in 2.33" in page


def test_index_lists_rules_releases_chips_and_platform_facts() -> None:
    db = load_ruledb()
    index = generated_pages(db)["README.md"]
    assert all(f"[{rid}]({rid}.md)" in index for rid in db.rules)
    assert "| 2.33 | 2026-10-19 | TorchNeuron | beta | yes | trn2, trn3 | 2.13, 2.14 | — |" in index
    assert "| 2.30 | 2026-05-21 | PyTorch/XLA | supported | no |" in index
    assert "| trn3 (AWS Trainium3 (Trn3)) | NeuronCore-v4 | 8 | 144 GiB |" in index
    # Inf2 is not named by NCC_EVRF051 (Trn1/Trn2 only): unknown, not unsupported.
    assert "| `float8_e4m3fn` | unknown | unsupported | unsupported | supported |" in index
    assert "| int64 | native | >=2.32 | trn2, trn3 | any | --native-int64=enabled |" in index


def test_explain_shows_the_page_and_the_frame_verdict() -> None:
    runner = CliRunner()
    result = runner.invoke(app, ["explain", "NL801"])
    assert result.exit_code == 0
    assert result.output == generated_pages(load_ruledb())["NL801.md"]
    framed = runner.invoke(app, ["explain", "torch-compile", "--sdk", "2.29", "--target", "trn1"])
    assert framed.exit_code == 0
    assert "> **Neuron SDK 2.29 on trn1 (xla backend):** warning, unsupported." in framed.output
    assert runner.invoke(app, ["explain", "NL000"]).exit_code == 2
