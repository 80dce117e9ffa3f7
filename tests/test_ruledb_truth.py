"""The corrected verdicts of issue 12, pinned against the sources the database cites for them.

Each test names the fact, the frame and the page the verdict rests on (rules/*.toml): library
claims from the library's own record, XLA-era evidence kept to the XLA backend, lifecycle per chip,
release notes that change the advice, and `--sdk` that refuses a release that does not exist.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from neuronlint.ruledb import load_ruledb
from neuronlint.ruledb.diff import diff_releases
from tests.annotated_source import check
from tests.conftest import ROOT

LIBS = {"select": ["cuda-only-lib"]}
BNB_SOURCE = "https://huggingface.co/docs/bitsandbytes/v0.46.0/installation"
DEEPSPEED_SOURCE = (
    "https://github.com/deepspeedai/DeepSpeed/blob/0769c13a3eef085c68d42cf3b6fe7cca96f8b6ae/"
    "accelerator/real_accelerator.py"
)
BEST_PRACTICES = "https://awsdocs-neuron.readthedocs-hosted.com/en/latest/torch/reference/best-practices-pytorch-neuron.html"
ANALYZE = "https://awsdocs-neuron.readthedocs-hosted.com/en/v2.32.0/frameworks/torch/torch-neuronx/api-reference-guide/inference/api-torch-neuronx-analyze.html"
NXDI_NOTES = (
    "https://awsdocs-neuron.readthedocs-hosted.com/en/v2.32.0/release-notes/components/nxd-inference.html"
)
MAINTENANCE = "https://awsdocs-neuron.readthedocs-hosted.com/en/v2.32.0/about-neuron/announcements/neuron2.x/announce-maintenance-pytorch-xla-inference.html"
UPDATE_233 = "https://awsdocs-neuron.readthedocs-hosted.com/en/v2.33.0/setup/pytorch/update-manual.html"


def _library(name: str) -> dict:
    return next(lib for lib in load_ruledb().tables["library"] if lib["name"] == name)


# ---- libraries: the claim comes from the library's record --------------------------------------
def test_deepspeed_is_reported_at_its_kernels_not_its_engine(tmp_path: Path) -> None:
    """DeepSpeed's engine, ZeRO, `get_accelerator()` and logger run on whichever accelerator it
    detects (CUDA, CPU, XPU, ...), like torch.accelerator: three blind labellers and the category's
    definition (CUDA- or GPU-vendor-only packages) leave them out. Its kernels (`deepspeed.ops`)
    are CUDA-only-library findings, and the message says what DeepSpeed runs on."""
    record = _library("deepspeed")
    assert record["support"] == "multi-backend" and record["support_source"] == DEEPSPEED_SOURCE
    assert record["modules"] == ["deepspeed.ops"]
    findings = check(
        tmp_path,
        """
        import deepspeed
        from deepspeed.accelerator import get_accelerator
        from deepspeed.ops.adam import FusedAdam  # expect: NL401
        from deepspeed.utils import logger

        logger.info("hi")
        device = get_accelerator().device_name()
        engine = deepspeed.initialize(model=None, optimizer=FusedAdam([]))  # expect: NL402
        """,
        **LIBS,
    )
    assert {f.severity.value for f in findings if f.rule == "NL401"} == {"warning"}
    (call,) = [f for f in findings if f.rule == "NL402"]
    assert "`deepspeed.ops.adam.FusedAdam`" in call.message
    assert call.severity.value == "blocker" and "runs only on NVIDIA" not in call.message
    assert "Intel XPU" in call.message and "None of these is Neuron" in call.message


def test_deepspeed_logger_verdict_is_not_reported() -> None:
    db = load_ruledb()
    ctx = db.context("2.33", "trn2")
    verdict = db.judge("NL402", {"library": "deepspeed", "api": "deepspeed.utils.logger.info"}, ctx)
    assert (verdict.enabled, verdict.severity.value) == (False, "info")
    kernel = db.judge("NL402", {"library": "deepspeed", "api": "deepspeed.ops.adam.FusedAdam"}, ctx)
    assert (kernel.enabled, kernel.severity.value, kernel.status) == (True, "blocker", "unsupported")


def test_bitsandbytes_import_says_what_its_installation_guide_says(tmp_path: Path) -> None:
    record = _library("bitsandbytes")
    assert (record["support"], record["support_source"]) == ("multi-backend", BNB_SOURCE)
    (finding,) = check(tmp_path, "import bitsandbytes as bnb  # expect: NL401\n", **LIBS)
    assert finding.severity.value == "warning" and finding.status == "unsupported"
    for backend in ("CUDA", "CPU", "AMD ROCm", "Intel XPU", "Gaudi HPU"):
        assert backend in finding.message
    assert "None of these is Neuron" in finding.message and "CUDA-only" not in finding.message
    (flag,) = check(tmp_path, "m = load(name, load_in_8bit=True)  # expect: NL403\n", **LIBS)
    assert "none for Neuron" in flag.message and BNB_SOURCE in flag.extra["sources"]


def test_a_neuron_path_is_a_warning_and_unknown_libraries_are_not_blockers() -> None:
    # No library record has a Neuron path at present (vLLM's compiled ops are custom kernels, NL303):
    # the verdict is judged on a record's facts as the library table would give them.
    db = load_ruledb()
    facts = {
        "library": "x",
        "module": "x",
        "support": "neuron-path",
        "neuron_path": "the X Neuron plugin",
        "runs_on": "NVIDIA GPUs",
        "alternative": "the X Neuron plugin",
    }
    path = db.judge("NL401", facts, db.context("2.33", "trn2"))
    assert (path.severity.value, path.status) == ("warning", "partial")
    assert "On Neuron it runs through the X Neuron plugin." in path.message
    unknown = db.judge(
        "NL401", {"library": "x", "module": "x", "support": "unknown"}, db.context("2.33", "trn2")
    )
    assert (unknown.severity.value, unknown.status) == ("warning", "unknown")
    # Every library record states what it runs on, from its own documentation, and its alternative.
    for lib in db.tables["library"]:
        assert lib["support"] != "unknown" and lib["support_source"] and lib["alternative"] and lib["source"]


# ---- native TorchNeuron is not the XLA backend -------------------------------------------------
def test_fft_on_native_is_unknown_on_xla_a_blocker(tmp_path: Path) -> None:
    source = "import torch\nspec = torch.fft.rfft(x)  # expect: NL503\n"
    (native,) = check(tmp_path, source, sdk="2.33", target="trn2")
    assert (native.severity.value, native.status) == ("warning", "unknown")
    assert "fall back to the CPU" in native.message and BEST_PRACTICES in native.extra["sources"]
    (xla,) = check(tmp_path, source, sdk="2.33", target="trn2", backend="xla")
    assert (xla.severity.value, xla.status) == ("blocker", "unsupported")
    assert "torch_neuronx.analyze" in xla.message and ANALYZE in xla.extra["sources"]
    # The op rejection carries a backend key: rejected on XLA, unknown on native.
    rejections = {r["id"]: r for r in load_ruledb().tables["op_rejection"]}
    assert (rejections["fft"]["backend"], rejections["fft"]["status"]) == ("xla", "unsupported")
    assert (rejections["fft-native"]["backend"], rejections["fft-native"]["status"]) == ("native", "unknown")
    assert rejections["fft-native"]["source"] == BEST_PRACTICES


def test_xla_era_dtype_evidence_is_unknown_on_native() -> None:
    db = load_ruledb()
    native, xla = db.context("2.33", "trn2"), db.context("2.33", "trn2", "xla")
    for rule, facts in (("NL501", {}), ("NL502", {"dtype": "complex128"}), ("NL509", {})):
        assert db.judge(rule, facts, native).status == "unknown", rule
        assert db.judge(rule, facts, xla).status == "unsupported", rule


# ---- NKI is not offered where NKI kernels are unsupported --------------------------------------
def test_nki_advice_on_trn1_at_229(tmp_path: Path) -> None:
    db = load_ruledb()
    trn1, trn1_old, trn2 = db.context("2.29", "trn1"), db.context("2.28", "trn1"), db.context("2.29", "trn2")
    assert trn1.platform["nki_kernels"] == "unsupported" and trn2.platform["nki_kernels"] == "supported"
    assert db.platform_source(trn1, "nki_kernels") == NXDI_NOTES
    kernel = db.judge("NL301", {"kernel": "k"}, trn1)
    assert "no NKI port here" in kernel.advice and NXDI_NOTES in kernel.sources
    assert "Port the kernel to NKI" in db.judge("NL301", {"kernel": "k"}, trn1_old).advice
    assert "Port the kernel to NKI" in db.judge("NL301", {"kernel": "k"}, trn2).advice
    (flash,) = check(tmp_path, "import flash_attn  # expect: NL401\n", sdk="2.29", target="trn1", **LIBS)
    advice = flash.message.split("Neuron alternative:", 1)[1]
    assert "scaled_dot_product_attention" in advice and "NKI attention" not in advice
    nki = db.judge("NL905", {"module": "nki.jit"}, trn1)
    assert (nki.severity.value, nki.status) == ("warning", "unsupported")
    assert db.judge("NL905", {"module": "nki.jit"}, trn2).status == "supported"


# ---- the XLA backend's lifecycle per chip and per release --------------------------------------
def test_xla_on_trn2_at_231_and_233() -> None:
    db = load_ruledb()
    at_231 = db.context("2.31", "trn2", "xla")
    assert (at_231.platform["backend_status"], at_231.platform["xla_inference"]) == ("supported", "supported")
    inf2 = db.context("2.31", "inf2", "xla")
    assert (inf2.platform["backend_status"], inf2.platform["xla_inference"]) == ("maintenance", "maintenance")
    assert db.platform_source(inf2, "xla_inference") == MAINTENANCE
    at_233 = db.context("2.33", "trn2", "xla")
    assert (at_233.platform["backend_status"], at_233.platform["xla_inference"]) == (
        "not-shipped",
        "not-shipped",
    )
    assert db.platform_source(at_233, "backend_status") == UPDATE_233
    diff = diff_releases(db, "2.32", "2.33", "trn2", "xla")
    assert "backend_status" not in {f.fact for f in diff.facts}
    assert db.context("2.33", "trn2", "xla").training is False


# ---- releases and versions ---------------------------------------------------------------------
def _cli(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "neuronlint", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=120,
        env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(ROOT), "NO_COLOR": "1"},
    )


def test_sdk_2_33_7_is_an_error_listing_the_known_releases(tmp_path: Path) -> None:
    (tmp_path / "x.py").write_text("import torch\n", encoding="utf-8")
    proc = _cli("scan", "x.py", "--no-cache", "--sdk", "2.33.7", cwd=tmp_path)
    assert proc.returncode == 2 and proc.stdout == ""
    (line,) = proc.stderr.strip().splitlines()
    assert line.startswith("neuronlint: error: unknown Neuron SDK release '2.33.7'; known releases: 2.21.0")
    assert line.endswith("2.32.0, 2.33.0, 2.33.1")
    assert _cli("rules", "--sdk", "2.33.1", "--format", "json", cwd=tmp_path).returncode == 0
    assert "2.33.1 (2026-11-11)" in load_ruledb().releases["2.33"].raw["patches"]


# ---- facts from field reports are shown as reported, never as documented support -------------------
REPORTED_PACK = """
[[rule]]
id = "NL201"
verdict = [
  { when = { backend = "native" }, status = "unknown", evidence = "reported", note = "A field report runs init_process_group(backend='neuron') on TorchNeuron.", sources = ["https://github.com/example/report/blob/0123456789abcdef0123456789abcdef01234567/REPORT.md"] },
]

[[platform]]
fact = "c10d_backend"
value = "neuron"
backend = "native"
evidence = "reported"
note = "named in a field report"
source = "https://github.com/example/report/blob/0123456789abcdef0123456789abcdef01234567/REPORT.md"
"""


def test_reported_facts_are_shown_as_reported(tmp_path: Path) -> None:
    from neuronlint.ruledb.loader import default_rules_dir, load_dirs
    from neuronlint.ruledb.model import REPORTED_PREFIX

    (tmp_path / "pack.toml").write_text(REPORTED_PACK, encoding="utf-8")
    db = load_dirs([default_rules_dir(), tmp_path])
    ctx = db.context("2.33", "trn2")
    verdict = db.judge("NL201", {"symbol": "backend='nccl'"}, ctx)
    assert verdict.status == "unknown" and verdict.note.startswith(REPORTED_PREFIX)
    assert REPORTED_PREFIX in verdict.message
    assert ctx.platform["c10d_backend"] == "neuron"
    assert db.platform_entry(ctx, "c10d_backend").evidence == "reported"
    # An unversioned source for a reported fact is refused like any other.
    (tmp_path / "pack.toml").write_text(
        REPORTED_PACK.replace("blob/0123456789abcdef0123456789abcdef01234567/", ""), encoding="utf-8"
    )
    try:
        load_dirs([default_rules_dir(), tmp_path])
    except Exception as exc:  # RuleDBError
        assert "is not a versioned page" in str(exc)
    else:
        raise AssertionError("an unversioned source was accepted")
