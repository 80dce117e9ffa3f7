"""The triage a user sees: `scan` text leads with root causes, test code never blocks and is
summarised apart, --scope / --full / --show-ok, and every machine format carries group and scope."""

from __future__ import annotations

import json
from pathlib import Path

from tests.test_cli import run
from tests.test_groups import LAYOUT, write

# Many sites of one construct: more than the text output lists one by one.
MANY = {
    f"src/tinyft/layer_{i}.py": "import torch\n\ndef f(x):\n    y = torch.ones(2, device='cuda')\n    return x.cuda() + y\n"
    for i in range(25)
}


def test_text_leads_with_root_causes_and_summarises_tests(tmp_path: Path):
    write(tmp_path, LAYOUT)
    # A test that also runs on Neuron (LAYOUT's own test is a flash_attn test, left out).
    write(tmp_path, {"tests/test_model.py": "import torch\n\ndef test_m():\n    x = torch.ones(1).cuda()\n"})
    result = run(["scan", ".", "--no-cache"], tmp_path)
    lines = result.output.splitlines()
    assert lines[0].startswith("root causes block this code on trn2 / SDK", lines[0].index("root causes"))
    assert "flash_attn (no Neuron backend)" in result.output
    assert any(line.startswith("tests: ") and "test code never blocks" in line for line in lines)
    assert (
        "tests/test_model.py"
        not in result.output.partition("tests: ")[2].partition("Findings by category")[0]
    )
    # Piped output is not wrapped (one line per item, for grep), these two lines included.
    assert any(
        line.startswith("left out: 3 test findings in code that runs only with CUDA")
        and line.endswith("`--show-ok` lists them")
        for line in lines
    )
    assert any(line.startswith("tests: ") and line.endswith("`--scope test` lists them") for line in lines)
    assert "tests/test_attention.py" not in result.output
    assert result.exit_code == 1


def test_test_code_never_blocks(tmp_path: Path):
    write(tmp_path, {"tests/test_model.py": "import torch\nx = torch.ones(1).cuda()\n"})
    result = run(["scan", ".", "--no-cache", "--format", "json", "--fail-on", "blocker"], tmp_path)
    data = json.loads(result.output)
    [finding] = data["findings"]
    assert (finding["scope"], finding["severity"], finding["capped_from"]) == ("test", "warning", "blocker")
    assert finding["group"] == data["groups"][0]["id"]
    assert result.exit_code == 0  # nothing at or above blocker


def test_large_scans_condense_the_detail_and_full_lists_it(tmp_path: Path):
    write(tmp_path, MANY)
    default = run(["scan", ".", "--no-cache"], tmp_path).output
    assert "Findings by file (25 files, most severe first):" in default
    assert "`--full` lists every finding" in default
    assert "^^^" not in default  # no source excerpts
    assert len(default.splitlines()) < 60
    full = run(["scan", ".", "--no-cache", "--full"], tmp_path).output
    assert sum(1 for line in full.splitlines() if line.strip().startswith("^")) == 50


def test_scope_selects_and_show_ok_adds_notes(tmp_path: Path):
    write(
        tmp_path,
        {
            "train.py": "from torch.nn.parallel import DistributedDataParallel as DDP\n\ndef wrap(m):\n    return DDP(m)\n",
            "tests/test_train.py": "import torch\nx = torch.ones(1).cuda()\n",
        },
    )
    data = json.loads(run(["scan", ".", "--no-cache", "-f", "json"], tmp_path).output)
    assert [f["rule"] for f in data["findings"]] == ["NL101"]  # the DDP note is not a finding
    data = json.loads(run(["scan", ".", "--no-cache", "-f", "json", "--show-ok"], tmp_path).output)
    assert sorted(f["rule"] for f in data["findings"]) == ["NL101", "NL205"]
    data = json.loads(
        run(["scan", ".", "--no-cache", "-f", "json", "--show-ok", "--scope", "source"], tmp_path).output
    )
    assert [f["rule"] for f in data["findings"]] == ["NL205"]
    bad = run(["scan", ".", "--scope", "unit"], tmp_path)
    assert bad.exit_code == 2 and "unknown scope 'unit'" in bad.output


def test_sarif_and_gitlab_carry_group_and_scope(tmp_path: Path):
    write(tmp_path, {"train.py": "import torch\nx = torch.ones(1).cuda()\n"})
    sarif = json.loads(run(["scan", ".", "--no-cache", "-f", "sarif"], tmp_path).output)
    props = sarif["runs"][0]["results"][0]["properties"]
    assert props["scope"] == "source" and props["group"].startswith("RC")
    gitlab = json.loads(run(["scan", ".", "--no-cache", "-f", "gitlab"], tmp_path).output)
    assert gitlab[0]["neuronlint"]["group"] == props["group"]
    github = run(["scan", ".", "--no-cache", "-f", "github"], tmp_path).output
    assert f"Root cause {props['group']}" in github


def test_html_report_shows_the_same_root_causes(tmp_path: Path):
    write(tmp_path, {"train.py": "import torch\nx = torch.ones(1).cuda()\n"})
    data = json.loads(run(["scan", ".", "--no-cache", "-f", "json"], tmp_path).output)
    run(["report", ".", "--no-cache", "--format", "html", "-o", "r.html"], tmp_path)
    html = (tmp_path / "r.html").read_text(encoding="utf-8")
    assert 'id="root-causes"' in html and data["groups"][0]["id"] in html


# One site each of many CUDA APIs (more root causes than the text lists), 25 files of `.cuda()`
# (more findings than it lists one by one), a test that runs on Neuron (summarised on one line) and
# a test skipped without CUDA (left out, counted).
APIS = [
    "torch.cuda.synchronize()",
    "torch.cuda.empty_cache()",
    "torch.cuda.memory_allocated()",
    "torch.cuda.max_memory_allocated()",
    "torch.cuda.reset_peak_memory_stats()",
    "torch.cuda.manual_seed(0)",
    "torch.cuda.manual_seed_all(0)",
    "torch.cuda.get_device_name(0)",
    "torch.cuda.set_device(0)",
    "torch.cuda.nvtx.range_push('step')",
    "torch.backends.cudnn.benchmark = True",
    "torch.backends.cuda.matmul.allow_tf32 = True",
    "torch.distributed.init_process_group('nccl')",
    "torch.cuda.amp.GradScaler()",
]
CONDENSED = {
    **MANY,
    **{
        f"src/tinyft/api_{i}.py": f"import torch\nimport torch.distributed\n\n{api}\n"
        for i, api in enumerate(APIS)
    },
    "tests/test_model.py": "import torch\n\ndef test_m():\n    x = torch.ones(1).cuda()\n",
    "tests/test_gpu_only.py": (
        "import pytest\nimport torch\n\n\n"
        "@pytest.mark.skipif(not torch.cuda.is_available(), reason='needs CUDA')\n"
        "def test_gpu():\n    torch.cuda.synchronize()\n    x = torch.ones(1).cuda()\n"
    ),
}


def _key(path: str, line: int, rule: str) -> tuple[str, int, str]:
    return (path, line, rule)


def test_every_format_names_the_group_of_every_finding_the_text_leaves_out(tmp_path: Path):
    import re

    write(tmp_path, CONDENSED)
    text = run(["scan", ".", "--no-cache", "--exit-zero"], tmp_path).output
    data = json.loads(run(["scan", ".", "--no-cache", "--exit-zero", "-f", "json"], tmp_path).output)
    findings, groups = data["findings"], {g["id"]: g for g in data["groups"]}
    # The text output does leave findings out: root causes past the 12th, files past the 15th,
    # the test's finding (one summary line), the CUDA-only test (counted only).
    assert re.search(r"… \d+ more root causes", text) and "--full` lists every finding" in text
    unnamed = {f["path"] for f in findings} - {p for p in {f["path"] for f in findings} if p in text}
    assert unnamed and "tests/test_model.py" in unnamed
    assert data["summary"]["left_out"] == {"test": 3}  # the skip condition too
    # JSON: every finding has a group, and the groups are exactly the findings' groups.
    assert len(groups) > 12 and all(f["group"] in groups for f in findings)
    for gid, group in groups.items():
        assert group["count"] == sum(f["group"] == gid for f in findings), gid
    expected = {_key(f["path"], f["line"], f["rule"]): f["group"] for f in findings}

    sarif = json.loads(run(["scan", ".", "--no-cache", "--exit-zero", "-f", "sarif"], tmp_path).output)
    got = {
        _key(
            r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"],
            r["locations"][0]["physicalLocation"]["region"]["startLine"],
            r["ruleId"],
        ): r["properties"]["group"]
        for r in sarif["runs"][0]["results"]
    }
    assert got == expected

    gitlab = json.loads(run(["scan", ".", "--no-cache", "--exit-zero", "-f", "gitlab"], tmp_path).output)
    got = {
        _key(i["location"]["path"], i["location"]["lines"]["begin"], i["neuronlint"]["rule"]): i[
            "neuronlint"
        ]["group"]
        for i in gitlab
    }
    assert got == expected

    markdown = run(["scan", ".", "--no-cache", "--exit-zero", "-f", "markdown"], tmp_path).output
    rows = re.findall(
        r"^\| \w+ \| \[(NL\d+) [^]]*\]\([^)]*\) \| `([^`]+):(\d+)` \| \w+ \| `(RC\w+)` \|", markdown, re.M
    )
    assert {_key(path, int(line), rule): gid for rule, path, line, gid in rows} == expected

    # GitHub: 10 annotations per level; every other finding is a log line, each with its group.
    github = run(["scan", ".", "--no-cache", "--exit-zero", "-f", "github"], tmp_path).output
    got = {}
    for line in github.splitlines():
        if match := re.match(
            r"::\w+ file=([^,]+),line=(\d+),.*?title=(NL\d+)[^:]*::.*Root cause (RC\w+)", line
        ):
            got[_key(match[1], int(match[2]), match[3])] = match[4]
        elif match := re.match(r"neuronlint: ([^:]+):(\d+):\d+: \w+ (NL\d+) .*\(root cause (RC\w+)", line):
            got[_key(match[1], int(match[2]), match[3])] = match[4]
    assert len(got) == len(findings) > 30 and got == expected

    # --show-ok lists the CUDA-only test too, each finding with its group.
    shown = json.loads(
        run(["scan", ".", "--no-cache", "--exit-zero", "-f", "json", "--show-ok"], tmp_path).output
    )
    cuda_only = [f for f in shown["findings"] if f["extra"].get("cuda_only")]
    assert {f["path"] for f in cuda_only} == {"tests/test_gpu_only.py"} and len(cuda_only) == 3
    assert all(f["group"] in {g["id"] for g in shown["groups"]} for f in shown["findings"])


def test_a_construct_over_several_lines_keeps_one_finding_per_category(tmp_path: Path):
    """`torch.compile(` on one line and its `mode="max-autotune"` on the next are one construct:
    the call's info note (NL801) is folded into the mode's warning (NL802); each Inductor option key
    stays a finding of its own; in a frame where the call itself is a warning, nothing is folded
    (only notes are); nor is a multi-line branch condition folded with the constructs inside it."""
    from tests.conftest import scan_paths

    source = (
        "import torch\n"
        "\n"
        "\n"
        "def build(model):\n"
        "    model.forward = torch.compile(\n"
        "        model.forward,\n"
        '        mode="max-autotune",\n'
        "        fullgraph=True,\n"
        "    )\n"
        "    return torch.compile(\n"
        "        model,\n"
        '        options={"triton.cudagraphs": True,\n'
        '                 "max_autotune": True},\n'
        "    )\n"
    )
    (tmp_path / "build.py").write_text(source, encoding="utf-8")
    findings = scan_paths([tmp_path], cwd=tmp_path, select=["ALL"], triage=True).active
    compile_findings = sorted(
        (f.line, f.rule, tuple(f.extra.get("also", ()))) for f in findings if f.category == "compile-backend"
    )
    assert compile_findings == [(7, "NL802", ("NL801",)), (12, "NL803", ("NL801",)), (13, "NL803", ())]
    xla = scan_paths([tmp_path], cwd=tmp_path, select=["ALL"], triage=True, backend="xla").active
    # torch-neuronx on PyTorch/XLA does not support torch.compile: the call is a warning of its own
    xla_compile = {(f.line, f.rule) for f in xla if f.category == "compile-backend"}
    assert {(5, "NL801"), (7, "NL802"), (10, "NL801"), (12, "NL803"), (13, "NL803")} <= xla_compile
    branch = (
        "import torch\n"
        "\n"
        "\n"
        "def decode(next_generation, current_generation, lengths, itr, limit):\n"
        "    if (\n"
        "        torch.all(torch.eq(next_generation, current_generation)).item()\n"
        "        and itr == limit\n"
        "        or len(torch.where(current_generation == 0)[0]) > 0\n"
        "    ):\n"
        "        return next_generation[:, : lengths.max().item()]\n"
    )
    (tmp_path / "build.py").unlink()
    (tmp_path / "decode.py").write_text(branch, encoding="utf-8")
    dynamic = scan_paths([tmp_path], cwd=tmp_path, select=["ALL"], triage=True).active
    # NL603 sits on the line of its tensor read (`torch.all(...)`), not on the `if`
    assert {(f.line, f.rule) for f in dynamic if f.category == "dynamic-shape"} >= {
        (6, "NL603"),
        (8, "NL601"),
    }


def test_a_real_compile_call_over_several_lines_is_one_finding(tmp_path: Path):
    """sam2's `self.image_encoder.forward = torch.compile(..., mode="max-autotune", fullgraph=True,
    dynamic=False)` (read from a local mirror; skipped without it): one compile-backend finding,
    the mode's, with the call's default-backend note folded into it."""
    from tests import mirrors
    from tests.conftest import scan_paths

    target = tmp_path / "sam2/modeling/sam2_base.py"
    target.parent.mkdir(parents=True)
    target.write_bytes(mirrors.blob("facebookresearch/sam2", "d9f4e515b0d161942bf2bb64560056b3efbe6dac"))
    findings = scan_paths([tmp_path], cwd=tmp_path, select=["ALL"], triage=True).active
    compile_findings = [
        (f.line, f.rule, f.extra.get("also")) for f in findings if f.category == "compile-backend"
    ]
    assert compile_findings == [(192, "NL802", ["NL801"])]
