"""`rules diff` between every pair of consecutive releases, on each chip, against the release notes.

Each expectation below restates what the release notes in the Neuron facts dossier (neuron-facts.md,
section 6, and the sources each entry of rules/ cites) say changed for that chip, as platform facts,
rule verdicts (severity/status, or only the advice) and PyTorch versions. The test asserts exactly
those changed facts and rule changes, not the rendered text. Pairs are compared on the XLA backend,
the only one every release offers on every chip (TorchNeuron arrives in 2.33 on Trn2/Trn3, covered
by tests/test_rules_diff.py); Trn3 pairs start at 2.29, the first release whose manifest lists it.
"""

from __future__ import annotations

import pytest

from neuronlint.ruledb import load_ruledb
from neuronlint.ruledb.diff import diff_releases

NKI_GONE = {  # 2.29, Inf2/Trn1: "NKI 0.3.0 kernels are not supported on Trn1/Inf2" (NxD Inference notes)
    ("NL301", ""),  # Triton kernels: no NKI port offered (advice)
    ("NL302", ""),  # CUDA extensions: idem
    ("NL303", ""),  # compiled extensions: idem
    ("NL308", ""),  # host calls of an in-repo kernel module's entry points: idem
    ("NL401", ""),  # library alternatives without NKI (advice)
    ("NL402", ""),
    ("NL404", ""),
    ("NL904", ""),  # NxD Inference drops Trn1/Inf2
    ("NL905", ""),  # NKI kernels unsupported here
    ("NL905", "legacy_namespace=True"),
    ("NL905", "renamed_to=attention_kv_parallel_segmented_cte"),
    ("NL905", "kernel=True"),  # an NKI kernel's definition or launch
}
XLA_TRAINING_ENDS = {  # 2.30: "PyTorch/XLA no longer supported for training"; runtime async mode deprecated
    ("NL107", ""),  # autocast advice: inference only (advice)
    ("NL108", ""),
    ("NL115", ""),  # activation checkpointing: train with TorchNeuron (advice)
    ("NL205", ""),  # DDP: idem
    ("NL901", ""),  # XLA glue: legacy from 2.30
    ("NL907", "symbol=NEURON_RT_ASYNC_EXEC_MAX_INFLIGHT_REQUESTS"),
}
TORCH_XLA_27 = {("NL908", "removed_in=torch-xla 2.7")}  # 2.24: PyTorch 2.7 removes xm.xrt_world_size ...
TORCH_XLA_28 = {("NL908", "deprecated_in=torch-xla 2.8")}  # 2.26: xm.xla_device / mark_step deprecated
ASYNC_REMOVED = {("NL907", "symbol=NEURON_RT_ASYNC_EXEC_MAX_INFLIGHT_REQUESTS")}  # 2.31
KERNEL_RENAMED = {("NL905", "renamed_to=attention_kv_parallel_segmented_cte")}  # 2.31, NKI Library
COMPLEX64_30 = {("NL502", "")}  # 2.32 compiler: complex64 for a stated 30 operations
NXDI_MAINTENANCE = {("NL904", "")}  # 2.32: NxD Inference in maintenance
INT64_OPEN = {("NL507", "")}  # 2.33: the announced native-int64 default is not confirmed

# (old, new) -> per chip group: (torch old, torch new, platform fact changes, rule changes)
V2 = ("inf2", "trn1")  # NeuronCore-v2
V3 = ("trn2", "trn3")
EXPECTED: dict[tuple[str, str], dict[tuple[str, ...], tuple[list, list, dict, set]]] = {
    # 2.22: PyTorch 2.1 and 1.13 dropped on Trn1/Inf2 (Trn2 only ever had the 2.5 package).
    ("2.21", "2.22"): {
        V2: (["1.13", "2.1", "2.5"], ["2.5"], {}, set()),
        ("trn2",): (["2.5"], ["2.5"], {}, set()),
    },
    ("2.22", "2.23"): {V2 + ("trn2",): (["2.5"], ["2.5", "2.6"], {}, set())},  # PyTorch 2.6
    ("2.23", "2.24"): {V2 + ("trn2",): (["2.5", "2.6"], ["2.5", "2.6", "2.7"], {}, TORCH_XLA_27)},
    ("2.24", "2.25"): {
        V2 + ("trn2",): (["2.5", "2.6", "2.7"], ["2.6", "2.7"], {}, set())
    },  # announcement only
    ("2.25", "2.26"): {V2 + ("trn2",): (["2.6", "2.7"], ["2.6", "2.7", "2.8"], {}, TORCH_XLA_28)},
    # 2.27: --auto-cast default becomes none; PyTorch 2.9; PyTorch 2.6 dropped.
    ("2.26", "2.27"): {
        V2 + ("trn2",): (
            ["2.6", "2.7", "2.8"],
            ["2.7", "2.8", "2.9"],
            {"auto_cast_default": ("matmult", "none")},
            set(),
        )
    },
    ("2.27", "2.28"): {
        V2 + ("trn2",): (["2.7", "2.8", "2.9"], ["2.7", "2.8", "2.9"], {}, set())
    },  # NKI 0.2.0
    # 2.29: PyTorch 2.7/2.8 end of life; NKI 0.3.0 not supported on Trn1/Inf2.
    ("2.28", "2.29"): {
        V2: (["2.7", "2.8", "2.9"], ["2.9"], {"nki_kernels": ("supported", "unsupported")}, NKI_GONE),
        ("trn2",): (["2.7", "2.8", "2.9"], ["2.9"], {}, set()),
    },
    # 2.30: no XLA training; implicit async execution deprecated.
    ("2.29", "2.30"): {
        V2: (
            ["2.9"],
            ["2.9"],
            {"training": (True, False), "implicit_async_exec": ("available", "deprecated")},
            XLA_TRAINING_ENDS,
        ),
        V3: (
            ["2.9"],
            ["2.9"],
            {"training": (True, False), "implicit_async_exec": ("available", "deprecated")},
            XLA_TRAINING_ENDS | {("NL905", "legacy_namespace=True")},  # neuronxcc.nki fails from 2.30
        ),
    },
    # 2.31: XLA inference on Inf2/Trn1 (only) in maintenance; async mode removed; kernel renamed.
    ("2.30", "2.31"): {
        V2: (
            ["2.9"],
            ["2.9"],
            {
                "backend_status": ("supported", "maintenance"),
                "xla_inference": ("supported", "maintenance"),
                "implicit_async_exec": ("deprecated", "removed"),
            },
            ASYNC_REMOVED,  # the renamed kernel is already unsupported there (no NKI from 2.29)
        ),
        V3: (
            ["2.9"],
            ["2.9"],
            {"implicit_async_exec": ("deprecated", "removed")},
            ASYNC_REMOVED | KERNEL_RENAMED,
        ),
    },
    # 2.32: no XLA package (2.31's is pinned); --native-int64 on Trn2+; complex64 for 30 ops; NxDI maintenance.
    ("2.31", "2.32"): {
        V2: (
            ["2.9"],
            ["2.9"],
            {"backend_status": ("maintenance", "not-shipped"), "complex64": ("unknown", "partial")},
            COMPLEX64_30,
        ),
        V3: (
            ["2.9"],
            ["2.9"],
            {
                "backend_status": ("supported", "not-shipped"),
                "xla_inference": ("supported", "not-shipped"),
                "native_int64_flag": ("absent", "available"),
                "complex64": ("unknown", "partial"),
            },
            COMPLEX64_30 | NXDI_MAINTENANCE,
        ),
    },
    # 2.33 (XLA backend): still not shipped, no status change; the 2.32 announcements stay unconfirmed.
    ("2.32", "2.33"): {
        V2: (["2.9"], ["2.9"], {"auto_cast_default": ("none", "unknown")}, set()),
        V3: (
            ["2.9"],
            ["2.9"],
            {"int64": ("downcast", "unknown"), "auto_cast_default": ("none", "unknown")},
            INT64_OPEN,
        ),
    },
}
CASES = [
    (old, new, chip, expected)
    for (old, new), groups in EXPECTED.items()
    for chips, expected in groups.items()
    for chip in chips
]


def test_every_consecutive_pair_on_every_chip_is_covered() -> None:
    db = load_ruledb()
    versions = db.versions()
    covered = {(old, new, chip) for old, new, chip, _ in CASES}
    for old, new in zip(versions, versions[1:], strict=False):
        for chip in db.chips:
            if "xla" in db.releases[old].backends_for(chip):
                assert (old, new, chip) in covered, (old, new, chip)


@pytest.mark.parametrize("old, new, chip, expected", CASES, ids=[f"{c[2]}-{c[0]}-{c[1]}" for c in CASES])
def test_diff_lists_what_the_release_notes_describe(old, new, chip, expected) -> None:
    torch_old, torch_new, facts, rules = expected
    diff = diff_releases(load_ruledb(), old, new, chip, "xla")
    assert (diff.torch_old, diff.torch_new) == (torch_old, torch_new)
    assert {f.fact: (f.old, f.new) for f in diff.facts} == facts
    assert {(c.rule, c.case) for c in diff.rules} == rules
    # Every change that is a new value cites the page it rests on.
    assert all(f.source.startswith("https://") for f in diff.facts if f.new != "unknown")
    # Release notes of the newer release are listed, each with its source.
    assert diff.notes and all(n.version == new and n.source.startswith("https://") for n in diff.notes)


def test_trn3_has_no_xla_backend_before_its_manifest_lists_it() -> None:
    db = load_ruledb()
    assert [v for v in db.versions() if "xla" in db.releases[v].backends_for("trn3")][0] == "2.29"
