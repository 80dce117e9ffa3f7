"""`scan --diff-base REF` on real temporary git repositories: branches, spans, untracked files,
shallow clones, and the diff parser on awkward input."""

from __future__ import annotations

import json
from pathlib import Path

from neuronlint.filters.changed_lines import parse_unified_diff
from tests.reporting_support import commit_all, git, init_repo, neuronlint, neuronlint_process

BASE_MODEL = """\
import torch


def build(layers):
    model = torch.nn.Sequential(*layers)
    model = model.cuda()
    return model


def step(model, batch):
    loss = model(batch).sum()
    if (loss.sum()
            .item() > 0):
        loss.backward()
    return loss
"""


def _findings(completed) -> list[tuple[str, str, int]]:
    assert completed.returncode in (0, 1), completed.stderr
    return [(f["rule"], f["path"], f["line"]) for f in json.loads(completed.stdout)["findings"]]


def _repo_on_branch(tmp_path: Path) -> Path:
    repo = tmp_path / "repo"
    init_repo(repo, {"model.py": BASE_MODEL, "data.py": "import torch\nx = torch.ones(2).to('cuda')\n"})
    git(repo, "checkout", "-q", "-b", "feature")
    return repo


def test_branch_adding_two_blockers_prints_exactly_those_annotations(tmp_path: Path) -> None:
    repo = _repo_on_branch(tmp_path)
    text = BASE_MODEL.replace("    return model\n", "    model.half().cuda()\n    return model\n", 1)
    text += '\n\ndef setup():\n    torch.distributed.init_process_group(backend="nccl")\n'
    (repo / "model.py").write_text(text, encoding="utf-8")
    commit_all(repo, "two new blockers")
    completed = neuronlint_process("scan", "--diff-base", "main", "--format", "github", cwd=repo)
    assert completed.returncode == 1, completed.stderr
    lines = completed.stdout.splitlines()
    assert len(lines) == 2, completed.stdout
    assert lines[0].startswith(
        "::error file=model.py,line=7,endLine=7,col=18,endColumn=24,title=NL101 cuda-device::"
    )
    assert lines[1].startswith(
        "::error file=model.py,line=20,endLine=20,col=50,endColumn=56,title=NL201 nccl-backend::"
    )
    assert "on lines changed since" in completed.stderr and "elsewhere not reported" in completed.stderr


def test_a_span_touching_a_changed_line_counts_even_when_it_starts_on_an_old_line(tmp_path: Path) -> None:
    repo = _repo_on_branch(tmp_path)
    (repo / "model.py").write_text(BASE_MODEL.replace(".item() > 0):", ".item() > 1):"), encoding="utf-8")
    commit_all(repo, "change the threshold")
    found = _findings(neuronlint("scan", "--diff-base", "main", "-f", "json", "--select", "ALL", cwd=repo))
    # NL603 spans lines 12-13 and is anchored on unchanged line 12; NL701 sits on changed line 13.
    assert found == [("NL603", "model.py", 12), ("NL701", "model.py", 13)]


def test_uncommitted_edits_and_untracked_files_count_as_changed(tmp_path: Path) -> None:
    repo = _repo_on_branch(tmp_path)
    (repo / "data.py").write_text(
        "import torch\nx = torch.ones(2).to('cuda')\ny = x.cuda()\n", encoding="utf-8"
    )
    (repo / "new_module.py").write_text(
        "import torch\n\na = torch.zeros(1).cuda()\nb = a.to('cuda:1')\n", encoding="utf-8"
    )
    (repo / ".gitignore").write_text("ignored.py\n", encoding="utf-8")
    (repo / "ignored.py").write_text("import torch\nz = torch.zeros(1).cuda()\n", encoding="utf-8")
    found = _findings(neuronlint("scan", "--diff-base", "main", "-f", "json", "--select", "NL101", cwd=repo))
    assert found == [("NL101", "data.py", 3), ("NL101", "new_module.py", 3), ("NL101", "new_module.py", 4)]


def test_scanning_from_a_subdirectory_maps_paths_to_the_repository(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    init_repo(repo, {"pkg/sub/m.py": "import torch\na = torch.ones(1).cuda()\n"})
    git(repo, "checkout", "-q", "-b", "feature")
    (repo / "pkg" / "sub" / "m.py").write_text(
        "import torch\na = torch.ones(1).cuda()\nb = a.cuda()\n", encoding="utf-8"
    )
    found = _findings(
        neuronlint("scan", ".", "--diff-base", "main", "-f", "json", "--select", "NL101", cwd=repo / "pkg")
    )
    assert found == [("NL101", "sub/m.py", 3)]


def test_a_renamed_file_without_edits_reports_nothing(tmp_path: Path) -> None:
    repo = _repo_on_branch(tmp_path)
    git(repo, "mv", "model.py", "network.py")
    commit_all(repo, "rename")
    assert _findings(neuronlint("scan", "--diff-base", "main", "-f", "json", cwd=repo)) == []


def test_missing_base_in_a_shallow_clone_says_how_to_fetch_it(tmp_path: Path) -> None:
    upstream = tmp_path / "upstream"
    init_repo(upstream, {"model.py": BASE_MODEL})
    for number in range(3):
        (upstream / "notes.txt").write_text(f"main commit {number}\n", encoding="utf-8")
        commit_all(upstream, f"main {number}")
    git(upstream, "checkout", "-q", "-b", "feature")
    (upstream / "model.py").write_text(
        BASE_MODEL + "\n\ndef extra(x):\n    return x.cuda()\n", encoding="utf-8"
    )
    commit_all(upstream, "feature work")
    (upstream / "model.py").write_text(
        BASE_MODEL + "\n\ndef extra(x):\n    return x.cuda()\n\n\nY = 1\n", encoding="utf-8"
    )
    commit_all(upstream, "more feature work")
    clone = tmp_path / "clone"
    # What actions/checkout does by default: one commit of one branch.
    git(
        tmp_path,
        "clone",
        "-q",
        "--depth",
        "1",
        "--single-branch",
        "--branch",
        "feature",
        upstream.as_uri(),
        str(clone),
    )

    missing = neuronlint("scan", "--diff-base", "origin/main", cwd=clone)
    assert missing.returncode == 2
    assert "this clone does not have origin/main" in missing.stderr
    assert "git fetch --no-tags origin main" in missing.stderr
    assert len(missing.stderr.strip().splitlines()) == 1

    git(clone, "fetch", "-q", "--no-tags", "--depth", "1", "origin", "main:refs/remotes/origin/main")
    shallow = neuronlint("scan", "--diff-base", "origin/main", cwd=clone)
    assert shallow.returncode == 2
    assert "shallow clone" in shallow.stderr and "git fetch --unshallow" in shallow.stderr

    git(clone, "fetch", "-q", "--unshallow", "--no-tags", "origin")
    fixed = neuronlint("scan", "--diff-base", "origin/main", "-f", "json", cwd=clone)
    assert _findings(fixed) == [("NL101", "model.py", 19)]


def test_outside_git_and_unknown_refs_give_one_line_errors(tmp_path: Path) -> None:
    plain = tmp_path / "plain"
    plain.mkdir()
    (plain / "a.py").write_text("x = 1\n", encoding="utf-8")
    outside = neuronlint("scan", "--diff-base", "main", cwd=plain)
    assert outside.returncode == 2 and "--diff-base needs a git work tree" in outside.stderr
    repo = _repo_on_branch(tmp_path)
    unknown = neuronlint("scan", "--diff-base", "no-such-branch", cwd=repo)
    assert unknown.returncode == 2 and "no branch or commit 'no-such-branch'" in unknown.stderr
    dash = neuronlint("scan", "--diff-base=--output=/tmp/x", cwd=repo)
    assert dash.returncode == 2 and "no branch or commit" in dash.stderr


def test_diff_parser_handles_headers_inside_content_quoted_paths_and_deletions() -> None:
    diff = "\n".join(
        [
            "diff --git a/m.py b/m.py",
            "--- a/m.py",
            "+++ b/m.py",
            "@@ -3,0 +4,2 @@ def f():",
            "++++ looks like a header but is content",
            "+--- so does this",
            "@@ -10 +11 @@",
            "-old",
            "+new",
            "\\ No newline at end of file",
            "@@ -20,4 +21,0 @@",
            "-a",
            "-b",
            "-c",
            "-d",
            'diff --git "a/dir/tab\\there.py" "b/dir/tab\\there.py"',
            '--- "a/dir/tab\\there.py"',
            '+++ "b/dir/tab\\there.py"',
            "@@ -0,0 +1 @@",
            "+x",
            "diff --git a/gone.py b/gone.py",
            "--- a/gone.py",
            "+++ /dev/null",
            "@@ -1,2 +0,0 @@",
            "-x",
            "-y",
            "diff --git a/caf\\303\\251.py b/caf\\303\\251.py",
            '+++ "b/caf\\303\\251.py"',
            "@@ -1 +1 @@",
            "-a",
            "+b",
        ]
    )
    assert parse_unified_diff(diff) == {"m.py": {4, 5, 11}, "dir/tab\there.py": {1}, "café.py": {1}}
