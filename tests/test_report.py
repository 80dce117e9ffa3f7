"""`neuronlint report`: the report's content against the score it is built on, HTML validity and
self-containment, Markdown tables, what-if against real scans of the other frame, trend on a real
temporary git repository, and one-line errors for bad input."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path

import pytest

from neuronlint.lockin import score
from neuronlint.report.build import SourceLinker, build_report
from neuronlint.report.render import render
from tests.conftest import FIXTURES, ROOT, scan_paths

NEURONLINT = [sys.executable, "-m", "neuronlint"]
VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track", "wbr"}


def run(args: list[str], cwd: Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    environment = {**os.environ, "NEURONLINT_NO_CACHE": "1", "SOURCE_DATE_EPOCH": "1800000000", **(env or {})}
    return subprocess.run(
        [*NEURONLINT, *args], cwd=cwd, capture_output=True, text=True, timeout=300, env=environment
    )


@pytest.fixture(scope="module")
def fixture_report():
    result = scan_paths([FIXTURES], cwd=ROOT)
    lockin = score(result.findings, result.results, result.db, result.context)
    report = build_report(
        lockin, result.db, result.context, paths=["fixtures"], link=SourceLinker(None, None, ROOT), base=ROOT
    )
    return result, lockin, report


# ---- content ----------------------------------------------------------------------------------------
def test_report_numbers_are_the_score(fixture_report) -> None:
    _, lockin, report = fixture_report
    for d in ("cuda", "neuron"):
        repo = lockin.repository.scores[d]
        assert report["summary"][d]["score"] == repo.score
        assert report["summary"][d]["grade"] == repo.grade
        assert report["summary"][d]["blockers"] == repo.blockers
        assert report["summary"][d]["hours"] == pytest.approx(lockin.effort[d].hours, abs=0.05)
        shown = [a["points_shown"] for a in report["breakdown"][d]["areas"]]
        assert sum(shown) == pytest.approx(round(repo.value, 1), abs=1e-9)  # displayed points add up too
    assert len(report["findings"]) == len(lockin.findings)
    assert sum(f["points"] for f in report["findings"] if f["direction"] == "cuda") == pytest.approx(
        lockin.repository.scores["cuda"].value, abs=0.01
    )


def test_blockers_come_grouped_with_the_heaviest_area_first(fixture_report) -> None:
    _, lockin, report = fixture_report
    groups = [g for g in report["blockers"] if g["direction"] == "cuda"]
    order = [a.name for a in lockin.repository.scores["cuda"].breakdown]
    assert [g["area"] for g in groups] == [a for a in order if a in {g["area"] for g in groups}]
    assert groups[0]["area"] == "custom-kernel"
    assert all(f["severity"] == "blocker" for g in report["blockers"] for f in g["findings"])
    assert sum(g["count"] for g in groups) == lockin.repository.scores["cuda"].blockers


def test_kernels_get_nki_library_suggestions(fixture_report) -> None:
    _, _, report = fixture_report
    kernels = {k["subject"]: k for k in report["kernels"]}
    assert kernels["rmsnorm_fwd_kernel"]["kind"] == "rmsnorm"
    assert "rmsnorm-quant" in kernels["rmsnorm_fwd_kernel"]["nki_kernels"]
    assert kernels["rmsnorm_fwd_kernel"]["launches"] == 1  # launched from layers.py, defined in kernels.py
    assert kernels["swiglu_fwd_kernel"]["kind"] == "mlp"
    assert all(
        k["source"].startswith("https://awsdocs-neuron.readthedocs-hosted.com/en/v2.")
        for k in report["kernels"]
    )


def test_libraries_carry_neuron_alternatives(fixture_report) -> None:
    _, _, report = fixture_report
    libraries = {row["library"]: row for row in report["libraries"]}
    assert "triton" in libraries
    assert "NKI" in libraries["triton"]["alternative"]
    assert libraries["triton"]["source"].startswith("https://")


def test_serving_section_lists_every_tool_with_its_verdict(fixture_report) -> None:
    _, _, report = fixture_report
    rows = {row["name"]: row for row in report["serving"]}
    assert set(rows) >= {
        "vllm",
        "tgi",
        "triton-server",
        "tensorrt-llm",
        "sglang",
        "torchserve",
        "onnxruntime-gpu",
    }
    assert rows["vllm"]["neuron_status"] == "supported" and "vllm-neuron" in rows["vllm"]["verdict"]
    assert rows["vllm"]["uses"] >= 3  # the import, the image and the launcher in the fixtures
    assert rows["tensorrt-llm"]["gpu_only"] and rows["tgi"]["neuron_status"] == "unknown"
    assert all(row["source"].startswith("https://") for row in rows.values())
    markdown = render("markdown", report)
    assert "## Serving" in markdown and "vLLM" in markdown
    html = render("html", report)
    assert '<section id="serving">' in html and "vllm-neuron" in html and 'href="#serving"' in html


def test_new_file_kinds_count_in_their_own_areas(fixture_report) -> None:
    _, lockin, _ = fixture_report
    areas = {
        item.area for item in lockin.findings if item.finding.category in ("environment", "config", "serving")
    }
    assert areas == {"environment", "config", "serving"}


def test_dtype_verdicts_use_the_chip_table(fixture_report) -> None:
    _, _, report = fixture_report
    rows = {d["construct"]: d for d in report["dtypes"]}
    assert rows["float64"]["chip_status"] == "unsupported"
    assert rows["float8_e4m3fnuz"]["severity"] == "blocker"
    assert report["trace"] is None and report["summary"]["op_support"] is None


def test_hot_spots_are_ranked_and_linked(fixture_report) -> None:
    _, _, report = fixture_report
    spots = report["hot_spots"]["cuda"]
    assert [h["points"] for h in spots] == sorted((h["points"] for h in spots), reverse=True)
    assert spots[0]["path"].startswith("fixtures/triton_kernels/")
    assert all(h["link"] == f"./{h['path']}#L1" for h in spots)  # relative, never a scheme
    assert report["findings"][0]["link"].endswith(f"#L{report['findings'][0]['line']}")


def test_source_url_template() -> None:
    link = SourceLinker("https://github.com/o/r/blob/main/{path}#L{line}", None, ROOT)
    assert link("fixtures/a.py", 7) == "https://github.com/o/r/blob/main/fixtures/a.py#L7"
    relative = SourceLinker(None, ROOT / "out" / "reports", ROOT)
    assert relative("fixtures/a.py", 3) == "../../fixtures/a.py#L3"


# ---- HTML ----------------------------------------------------------------------------------------------
class _Checker(HTMLParser):
    """Tag balance, unique ids, and every resource inline: what a self-contained report needs."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.stack: list[str] = []
        self.ids: list[str] = []
        self.hrefs: list[str] = []
        self.problems: list[str] = []
        self.tags: dict[str, int] = {}

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags[tag] = self.tags.get(tag, 0) + 1
        values = dict(attrs)
        if "id" in values:
            self.ids.append(values["id"] or "")
        if tag == "a" and values.get("href"):
            self.hrefs.append(values["href"])
        if tag in ("script", "img", "iframe") and values.get("src"):
            self.problems.append(f"external resource <{tag} src={values['src']}>")
        if tag == "link":
            self.problems.append(f"<link href={values.get('href')}>")
        if tag not in VOID:
            self.stack.append(tag)

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags[tag] = self.tags.get(tag, 0) + 1  # SVG elements such as <rect .../>

    def handle_endtag(self, tag: str) -> None:
        if tag in VOID:
            return
        if not self.stack or self.stack[-1] != tag:
            self.problems.append(
                f"</{tag}> closes <{self.stack[-1] if self.stack else 'nothing'}> at {self.getpos()}"
            )
            return
        self.stack.pop()


def test_html_is_well_formed_and_self_contained(fixture_report) -> None:
    _, _, report = fixture_report
    text = render("html", report)
    assert text.startswith("<!DOCTYPE html>")
    checker = _Checker()
    checker.feed(text)
    checker.close()
    assert checker.problems == []
    assert checker.stack == []
    assert len(checker.ids) == len(set(checker.ids)), "duplicate ids"
    anchors = set(checker.ids)
    assert all(h[1:] in anchors for h in checker.hrefs if h.startswith("#")), "an in-page link has no target"
    assert "Content-Security-Policy" in text and "default-src 'none'" in text
    assert checker.tags["svg"] >= 4 and checker.tags.get("table", 0) >= 8
    assert "http://" not in text.split("<body>")[0]  # nothing fetched from the head
    rule_links = [h for h in checker.hrefs if h.startswith("#rule-")]
    assert rule_links and all(h[1:] in anchors for h in rule_links)


def test_html_escapes_messages(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text(
        'import torch\nx = torch.zeros(2, device="cuda")  # <script>alert(1)</script>\n', encoding="utf-8"
    )
    (tmp_path / "b<c>.py").write_text("import torch\ny = torch.ones(1).cuda()\n", encoding="utf-8")
    result = scan_paths([tmp_path], cwd=tmp_path)
    lockin = score(result.findings, result.results, result.db, result.context)
    report = build_report(
        lockin,
        result.db,
        result.context,
        paths=["."],
        link=SourceLinker(None, None, tmp_path),
        title="<b>t</b>",
    )
    text = render("html", report)
    assert "<b>t</b>" not in text and "&lt;b&gt;t&lt;/b&gt;" in text
    assert "b<c>.py" not in text and "b&lt;c&gt;.py" in text
    checker = _Checker()
    checker.feed(text)
    assert checker.problems == [] and checker.stack == []


def test_html_shows_backticked_code_as_code_and_keeps_it_escaped(tmp_path: Path) -> None:
    # Messages quote code in backticks; the page shows <code>, never the backticks. A snippet that a
    # message quotes comes from the scanned file, so markup inside a span must stay text.
    (tmp_path / "t.py").write_text(
        "import torch\ndef f(x):\n    return x.double().cpu().numpy()  # `<img src=x>`\n", encoding="utf-8"
    )
    result = scan_paths([tmp_path], cwd=tmp_path)
    lockin = score(result.findings, result.results, result.db, result.context)
    report = build_report(
        lockin, result.db, result.context, paths=["."], link=SourceLinker(None, None, tmp_path)
    )
    text = render("html", report)
    body = text.split("<body>", 1)[1]
    visible = re.sub(r'title="[^"]*"', "", body)  # tooltips are plain text by nature
    assert "<code>" in visible and "`" not in visible
    assert "<img" not in text
    checker = _Checker()
    checker.feed(text)
    assert checker.problems == [] and checker.stack == []


# ---- Markdown and JSON ---------------------------------------------------------------------------------
def test_markdown_tables_are_rectangular(fixture_report) -> None:
    _, lockin, report = fixture_report
    text = render("markdown", report)
    assert text.startswith("# Neuron migration report")
    assert f"CUDA coupling {lockin.repository.scores['cuda'].score}/100" in text
    table: list[str] = []
    for line in [*text.splitlines(), ""]:
        if line.startswith("|"):
            table.append(line)
            continue
        if table:
            widths = {len(row.replace("\\|", "").split("|")) for row in table}
            assert len(widths) == 1, table[:3]
            table = []


def test_json_round_trips(fixture_report) -> None:
    _, _, report = fixture_report
    data = json.loads(render("json", report))
    assert data["schema_version"] == 1
    assert set(data) >= {
        "summary",
        "breakdown",
        "blockers",
        "hot_spots",
        "libraries",
        "serving",
        "kernels",
        "dtypes",
        "effort",
        "findings",
        "rules",
    }


# ---- the command ---------------------------------------------------------------------------------------
def test_cli_writes_each_format(tmp_path: Path) -> None:
    for suffix, marker in (
        (".html", "<!DOCTYPE html>"),
        (".md", "# Neuron migration report"),
        (".json", '"schema_version": 1'),
    ):
        out = tmp_path / f"report{suffix}"
        done = run(["report", "fixtures", "-o", str(out)], ROOT)
        assert done.returncode == 0, done.stderr
        assert (
            out.read_text(encoding="utf-8").startswith(marker)
            or marker in out.read_text(encoding="utf-8")[:200]
        )
        assert "wrote" in done.stderr and "CUDA coupling" in done.stderr


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["report", "fixtures", "--format", "pdf"], "unknown report format 'pdf'"),
        (
            ["report", "fixtures", "--source-url", "https://x/blob/main"],
            "--source-url: the template needs a {path} placeholder",
        ),
        (["report", "fixtures", "--compare-target", "trn9"], "unknown target 'trn9'"),
        (["report", "nowhere"], "nowhere: no such file or directory"),
    ],
)
def test_cli_bad_input_is_one_line(args: list[str], message: str) -> None:
    done = run(args, ROOT)
    assert done.returncode == 2
    assert message in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1 and "Traceback" not in done.stderr


def test_against_outside_git_is_a_clear_error(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text("import torch\nx = torch.zeros(1).cuda()\n", encoding="utf-8")
    done = run(
        ["report", ".", "--against", "main"], tmp_path, env={"GIT_CEILING_DIRECTORIES": str(tmp_path.parent)}
    )
    assert done.returncode == 2
    assert "is not inside a git work tree" in done.stderr and "Traceback" not in done.stderr


# ---- what-if --------------------------------------------------------------------------------------------
def test_what_if_matches_a_real_scan_of_the_other_frame(fixture_report) -> None:
    from neuronlint.pipeline import ScanOptions
    from neuronlint.report.whatif import compare

    result, lockin, _ = fixture_report
    other = result.db.context("2.29", "trn1")
    options = ScanOptions(paths=[FIXTURES], base=ROOT, jobs=1)
    comparison = compare(result, options, other)
    direct = scan_paths([FIXTURES], cwd=ROOT, sdk="2.29", target="trn1")
    direct_score = score(direct.findings, direct.results, direct.db, direct.context)
    for d in ("cuda", "neuron"):
        assert comparison["scores"][d]["other"] == direct_score.repository.scores[d].score
        assert comparison["scores"][d]["base"] == lockin.repository.scores[d].score
        assert (
            comparison["scores"][d]["delta"]
            == comparison["scores"][d]["other"] - comparison["scores"][d]["base"]
        )
    base_blockers = {(f.path, f.line, f.rule) for f in result.active if f.severity.value == "blocker"}
    other_blockers = {(f.path, f.line, f.rule) for f in direct.active if f.severity.value == "blocker"}
    assert comparison["counts"]["blockers_gone"] == len(base_blockers - other_blockers)
    assert comparison["counts"]["blockers_new"] == len(other_blockers - base_blockers)
    assert comparison["counts"]["blockers_gone"] + comparison["counts"]["blockers_new"] > 0
    assert comparison["other"] == {
        "sdk": other.sdk,
        "target": "trn1",
        "backend": other.backend,
        "training": other.training,
    }


def test_what_if_on_the_command_line(tmp_path: Path) -> None:
    out = tmp_path / "whatif.json"
    done = run(
        ["report", "fixtures", "--compare-sdk", "2.33", "--compare-target", "trn3", "-o", str(out)], ROOT
    )
    assert done.returncode == 0, done.stderr
    data = json.loads(out.read_text(encoding="utf-8"))
    assert data["comparison"]["other"]["target"] == "trn3"
    # float8_e4m3fn is native on Trn3 (NCC_EVRF051): its findings are no longer warnings there
    assert any(
        g["rule"] == "NL505" for g in data["comparison"]["blockers_gone"] + data["comparison"]["blockers_new"]
    ) or any(c["from"] == "warning" for c in data["comparison"]["counts"]["severity_changes"])
    html = run(["report", "fixtures", "--compare-target", "trn3", "-f", "html"], ROOT)
    assert 'id="whatif"' in html.stdout


# ---- trend on a real git repository ---------------------------------------------------------------------
def _git(repo: Path, *args: str) -> None:
    subprocess.run(
        ["git", "-C", str(repo), *args],
        check=True,
        capture_output=True,
        env={
            **os.environ,
            "GIT_AUTHOR_NAME": "t",
            "GIT_AUTHOR_EMAIL": "t@example.com",
            "GIT_COMMITTER_NAME": "t",
            "GIT_COMMITTER_EMAIL": "t@example.com",
        },
    )


def test_trend_against_the_base_branch(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    (repo / "src").mkdir(parents=True)
    (repo / "src" / "model.py").write_text(
        "import torch\nmodel = torch.nn.Linear(2, 2).cuda()\n", encoding="utf-8"
    )
    _git(repo, "init", "-q", "-b", "main")
    _git(repo, "add", ".")
    _git(repo, "commit", "-q", "-m", "base")
    _git(repo, "checkout", "-q", "-b", "feature")
    (repo / "src" / "train.py").write_text(
        'import torch\nimport torch.distributed as dist\n\ndist.init_process_group("nccl")\nx = torch.zeros(2, device="cuda")\n',
        encoding="utf-8",
    )
    _git(repo, "add", ".")
    _git(repo, "commit", "-q", "-m", "feature")
    done = run(["report", "src", "--against", "main", "-f", "markdown"], repo)
    assert done.returncode == 0, done.stderr
    # independent scores of both trees
    base_tree = tmp_path / "base"
    (base_tree / "src").mkdir(parents=True)
    (base_tree / "src" / "model.py").write_text(
        (repo / "src" / "model.py").read_text(encoding="utf-8"), encoding="utf-8"
    )
    base = scan_paths([base_tree / "src"], cwd=base_tree)
    now = scan_paths([repo / "src"], cwd=repo)
    base_score = score(base.findings, base.results, base.db).repository.scores["cuda"].score
    now_score = score(now.findings, now.results, now.db).repository.scores["cuda"].score
    assert now_score > base_score
    assert f"this change adds 2 CUDA blockers, CUDA coupling {base_score} \u2192 {now_score}" in done.stdout
    assert "Neuron coupling 0 \u2192 0" in done.stdout
    assert "src/train.py:4" in done.stdout and "src/train.py:5" in done.stdout
    # the work tree and the repository are untouched
    status = subprocess.run(
        ["git", "-C", str(repo), "status", "--porcelain"], capture_output=True, text=True, check=True
    )
    assert status.stdout == ""


def test_trend_removing_blockers_and_unknown_ref(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "train.py").write_text('import torch\nx = torch.zeros(2, device="cuda")\n', encoding="utf-8")
    _git(repo, "init", "-q", "-b", "main")
    _git(repo, "add", ".")
    _git(repo, "commit", "-q", "-m", "base")
    (repo / "train.py").write_text("import torch\nx = torch.zeros(2)\n", encoding="utf-8")  # uncommitted fix
    out = repo.parent / "trend.json"
    done = run(["report", ".", "--against", "HEAD", "-o", str(out)], repo)
    assert done.returncode == 0, done.stderr
    trend = json.loads(out.read_text(encoding="utf-8"))["trend"]
    assert trend["scores"]["cuda"]["blockers_removed"] == 1 and trend["scores"]["cuda"]["blockers_added"] == 0
    assert trend["scores"]["cuda"]["now"] == 0 and trend["scores"]["cuda"]["base"] > 0
    assert "removes 1 CUDA blocker," in trend["summary"]
    bad = run(["report", ".", "--against", "no-such-branch"], repo)
    assert bad.returncode == 2 and "--against no-such-branch: no such commit" in bad.stderr


def test_only_the_html_report_imports_jinja2(tmp_path: Path) -> None:
    """Jinja2 renders the HTML report; a scan (and a Markdown report) never pays for importing it."""
    (tmp_path / "train.py").write_text("import torch\nx = torch.zeros(2).cuda()\n", encoding="utf-8")
    probe = (
        "import runpy, sys\n"
        "sys.argv = ['neuronlint', *sys.argv[1:]]\n"
        "try:\n    runpy.run_module('neuronlint', run_name='__main__')\n"
        "except SystemExit:\n    pass\n"
        "print('jinja2' in sys.modules, file=sys.stderr)\n"
    )

    def imports_jinja2(*args: str) -> bool:
        done = subprocess.run(
            [sys.executable, "-c", probe, *args, "--no-cache"], cwd=tmp_path, capture_output=True, text=True
        )
        return done.stderr.strip().splitlines()[-1] == "True"

    assert not imports_jinja2("scan", ".")
    assert not imports_jinja2("report", ".", "-f", "markdown", "-q")
    assert imports_jinja2("report", ".", "-f", "html", "-q")
