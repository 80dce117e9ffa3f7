"""The operator database (rules/ops/*.toml) and the verdict logic that reads it.

The op names are checked against the installed PyTorch's operator registry; the per-version
counts against the reference dossier (neuron-facts.md §1.4); verdicts against hand-picked ops
whose status the dossier states. The torch facts given to OpDatabase.lowering here have the
shape the tracing child produces (tests/test_graph_trace.py checks the child produces them).
"""

from __future__ import annotations

import pytest

from neuronlint.graph.ops import LOWERED, NOT_LOWERED, REJECTED, UNKNOWN, OpDatabase
from neuronlint.ruledb import load_ruledb
from neuronlint.ruledb.versions import parse_version

torch = pytest.importorskip("torch")


@pytest.fixture(scope="module")
def db():
    return load_ruledb()


def _frame(db, sdk="2.29", target="trn2", backend="xla"):
    return OpDatabase(db, db.context(sdk, target, backend))


def _registered() -> set[str]:
    return set(torch._C._dispatch_get_all_op_names())


def _exists(name: str, registered: set[str]) -> bool:
    """An op name with overload must be registered as is; a base name needs any overload."""
    if "." in name.split("::", 1)[1]:
        return name in registered
    return name in registered or any(n.startswith(name + ".") for n in registered)


def _running_torch() -> tuple[int, ...]:
    return parse_version(torch.__version__.split("+", 1)[0])[:2]


def test_every_op_in_the_database_is_a_real_aten_op_of_the_running_torch(db):
    """Ops PyTorch dropped carry `absent_from_torch`: this torch registers exactly the others.

    On torch 2.14 `aten::cholesky` and `aten::qr` are gone (2.13 has them): their lowering rows
    stay (torch-xla's lists name them), and no trace on 2.14 can contain them.
    """
    registered = _registered()
    running = _running_torch()
    problems = []
    for table in ("op", "op_confirmed"):
        for entry in db.tables[table]:
            exists = _exists(entry["name"], registered)
            marker = entry.get("absent_from_torch")
            gone = marker is not None and parse_version(marker) <= running
            if gone and exists:
                problems.append(
                    f"[[{table}]] {entry['name']}: absent_from_torch = {marker!r}, "
                    f"but torch {torch.__version__} registers it"
                )
            elif not gone and not exists:
                problems.append(
                    f"[[{table}]] {entry['name']} is not an op of torch {torch.__version__}: "
                    "regenerate rules/ops/xla-lowerings.toml on this torch (scripts/build_op_tables.py) "
                    "to mark it absent_from_torch"
                )
    for entry in db.tables["op_rejection"]:
        problems += [
            f"[[op_rejection]] {entry['id']}: {op} is not an op of torch {torch.__version__}"
            for op in entry.get("ops", ())
            if not _exists(op, registered)
        ]
    assert not problems, "\n".join(problems)


def test_ops_absent_from_a_torch_are_marked_with_the_version(db):
    markers = {
        e["name"]: e["absent_from_torch"]
        for e in db.tables["op"] + db.tables["op_confirmed"]
        if "absent_from_torch" in e
    }
    assert markers == {
        "aten::_s_where": "2.13",  # gone before the tracer's floor
        "aten::symeig": "2.13",
        "aten::upsample_nearest2d_backward.vec": "2.13",
        "aten::cholesky": "2.14",  # torch 2.14 dropped them (linalg_cholesky_ex, linalg_qr remain)
        "aten::qr": "2.14",
    }
    # The verdicts do not depend on the marker: a lowering row stays a lowering row.
    assert _frame(db).is_lowered("aten::cholesky") and _frame(db).is_lowered("aten::qr")


def test_lowering_counts_per_torch_xla_version_match_the_reference(db):
    # neuron-facts.md §1.4: overload entries per torch-xla tag (verified by the second reader).
    expected = {"1.13": 335, "2.1": 368, "2.5": 383, "2.6": 383, "2.7": 387, "2.8": 389, "2.9": 389}
    counts = {v: sum(1 for op in db.tables["op"] if v in op["torch_xla"]) for v in expected}
    assert counts == expected
    assert {t["version"] for t in db.tables["torch_xla"]} == set(expected)
    assert len(db.tables["op_confirmed"]) == 41


def test_ops_gained_between_releases_are_answerable(db):
    def lowered(version: str) -> set[str]:
        return {op["name"] for op in db.tables["op"] if version in op["torch_xla"]}

    assert lowered("2.8") - lowered("2.7") == {
        "aten::bitwise_left_shift.Tensor",
        "aten::bitwise_right_shift.Tensor",
    }
    gained = {name.split(".")[0] for name in lowered("2.7") - lowered("2.6")}
    assert gained == {"aten::_conj_copy", "aten::alias", "aten::cummax", "aten::isneginf"}
    assert lowered("2.9") == lowered("2.8")


def test_every_release_with_an_xla_backend_maps_to_an_op_table(db):
    for version in db.versions():
        release = db.releases[version]
        if "xla" not in release.backends:
            continue
        chip = release.backends["xla"]["chips"][0]
        frame = OpDatabase(db, db.context(version, chip, "xla"))
        assert frame.torch_xla == max(release.backends["xla"]["torch_xla"], key=parse_version)


@pytest.mark.parametrize(
    ("op", "lowered"),
    [
        ("aten::nonzero", True),
        ("aten::masked_select", True),
        ("aten::triangular_solve", True),
        ("aten::topk", True),
        ("aten::_linalg_eigh", True),
        ("aten::mm", True),
        ("aten::addmm", True),
        ("aten::_unique2", False),
        ("aten::histc", False),
        ("aten::bincount", False),
        ("aten::bucketize.Tensor", False),
        ("aten::searchsorted.Tensor", False),
        ("aten::_fft_r2c", False),
        ("aten::grid_sampler_2d", False),
        ("aten::_scaled_dot_product_flash_attention", False),
    ],
)
def test_reference_lowerings_at_torch_xla_2_9(db, op, lowered):
    # neuron-facts.md, second reader: "Present at v2.9.0" / "Absent at v2.9.0".
    assert _frame(db).is_lowered(op) is lowered


def test_views_are_lowered_through_their_copy_form(db):
    frame = _frame(db)
    facts = {"aten::squeeze.dims": {"view": True}, "aten::unsqueeze": {"view": True}}
    assert not frame.is_lowered("aten::squeeze.dims")
    verdict = frame.lowering("aten::squeeze.dims", facts)
    assert verdict.verdict == LOWERED and "aten::squeeze_copy.dims" in verdict.reason
    assert frame.lowering("aten::unsqueeze", facts).verdict == LOWERED
    # Without the view fact the copy form is not consulted.
    assert frame.lowering("aten::squeeze.dims", {}).verdict == NOT_LOWERED


def test_composite_ops_are_judged_by_what_their_kernel_calls(db):
    frame = _frame(db)
    facts = {
        "aten::arange.start_step": {
            "composite": ["CompositeExplicitAutograd"],
            "expands_to": ["aten::empty.memory_format", "aten::arange.start_out"],
        },
        "aten::cummin": {
            "composite": ["CompositeExplicitAutograd"],
            "expands_to": ["aten::empty.memory_format", "aten::cummin.out"],
        },
        "aten::cummin.out": {},
        "aten::linear": {"composite": ["CompositeImplicitAutograd"], "expands_to": None},
        "aten::digamma": {"composite": [], "wraps_out": True, "out_variants": ["aten::digamma.out"]},
    }
    assert frame.lowering("aten::arange.start_step", facts).verdict == LOWERED
    cummin = frame.lowering("aten::cummin", facts)
    assert cummin.verdict == NOT_LOWERED and "aten::cummin.out" in cummin.reason
    assert (
        frame.lowering("aten::linear", facts).verdict == UNKNOWN
    )  # decomposed before XLA: never "unsupported"
    assert frame.lowering("aten::digamma", facts).verdict == NOT_LOWERED
    # A functional kernel that only wraps its out= kernel is served when torch-xla lowers that one.
    wrapped = frame.lowering(
        "aten::eye.m", {"aten::eye.m": {"wraps_out": True, "out_variants": ["aten::eye.m_out"]}}
    )
    assert wrapped.verdict == LOWERED and "aten::eye.m_out" in wrapped.reason
    # Without that fact an out= form says nothing about the op itself.
    assert (
        frame.lowering("aten::eye.m", {"aten::eye.m": {"out_variants": ["aten::eye.m_out"]}}).verdict
        == NOT_LOWERED
    )


def test_confirmed_ops_count_as_lowered_but_are_not_an_allow_list(db):
    frame = _frame(db)
    assert not frame.is_lowered("aten::addcdiv_")
    assert frame.lowering("aten::addcdiv_", {}).verdict == LOWERED  # only Neuron's own page lists it
    assert frame.lowering("aten::gelu", {}).verdict == LOWERED  # lowered, although not on the page


def test_compiler_rejections_per_chip_release_and_dtype(db):
    fp8 = ("aten::_to_copy", ["float8_e4m3fn"], ["bfloat16"])
    assert _frame(db, target="trn2").judge(*fp8, {}).code == "NCC_EVRF051"
    assert _frame(db, target="trn2").judge(*fp8, {}).verdict == REJECTED
    assert _frame(db, target="trn3").judge(*fp8, {}).verdict == LOWERED
    assert _frame(db, target="inf2").judge(*fp8, {}).verdict == UNKNOWN  # EVRF051 does not name Inf2

    complex_mul = ("aten::mul.Tensor", ["complex64", "complex64"], ["complex64"])
    # Before 2.32 some complex64 ops compiled (2.32 adds "additional" ones); which is not documented.
    assert _frame(db, sdk="2.29").judge(*complex_mul, {}).verdict == UNKNOWN
    assert _frame(db, sdk="2.32").judge(*complex_mul, {}).verdict == UNKNOWN  # 2.32: "30 operations"
    assert (
        _frame(db, sdk="2.32").judge("aten::mul.Tensor", ["complex128"] * 2, ["complex128"], {}).verdict
        == REJECTED
    )

    topk = _frame(db)
    assert topk.judge("aten::topk", ["int32"], ["int32", "int64"], {}).code == "NCC_EVRF013"
    assert topk.judge("aten::topk", ["float32"], ["float32", "int64"], {}).verdict == LOWERED
    # scatter-reduce: the data's dtype decides, not the int64 index operand.
    # scatter_add on int32: EVRF016 (reject) and EVRF060 (fp32 downcast, a warning) disagree -> unknown
    scatter = topk.judge("aten::scatter_add", ["int32", "int64", "int32"], ["int32"], {})
    assert (scatter.verdict, scatter.code) == (UNKNOWN, "NCC_EVRF060")
    reduce = topk.judge("aten::scatter_reduce.two", ["int32", "int64", "int32"], ["int32"], {})
    assert (reduce.verdict, reduce.code) == (REJECTED, "NCC_EVRF016")
    assert (
        topk.judge("aten::scatter_add", ["float32", "int64", "float32"], ["float32"], {}).verdict == LOWERED
    )
    assert (
        topk.judge("aten::triangular_solve", ["float32", "float32"], ["float32", "float32"], {}).code
        == "NCC_EVRF001"
    )
    fft = topk.judge("aten::_fft_r2c", ["float32"], ["complex64"], {})
    assert (
        fft.verdict == REJECTED and fft.code == "" and "analyze" in fft.reason
    )  # the FFT rule, not the complex one


def test_native_backend_has_no_public_op_table(db):
    frame = _frame(db, sdk="2.33", target="trn2", backend="native")
    assert frame.torch_xla is None
    assert frame.judge("aten::addmm", ["float32"] * 3, ["float32"], {}).verdict == UNKNOWN
    # Compiler rejections still apply: TorchNeuron compiles with neuronx-cc too.
    assert frame.judge("aten::_to_copy", ["float8_e4m3fnuz"], ["float32"], {}).verdict == REJECTED
