"""dtype rules (NL501-NL509): positive and negative cases, and verdicts that differ by chip and SDK."""

from __future__ import annotations

from neuronlint.findings import Severity
from tests.annotated_source import check, only


# ---- NL501 float64 ---------------------------------------------------------------------------
def test_float64_creation_and_conversion(tmp_path):
    findings = check(
        tmp_path,
        """
        import torch


        def accumulate(x, n):
            total = torch.zeros(n, dtype=torch.float64)  # expect: NL501
            precise = x.double()  # expect: NL501
            also = x.to(torch.double)  # expect: NL501
            torch.set_default_dtype(torch.float64)  # expect: NL501
            return total, precise, also
        """,
    )
    method = only([f for f in findings if f.line == 6], "NL501")
    assert "`.double()`" in method.message
    assert method.fix is not None and method.fix.replacement == "float()"


def test_float64_only_inspected_is_not_a_use(tmp_path):
    check(
        tmp_path,
        """
        import numpy as np
        import torch

        NAMES = {torch.float64: "fp64", torch.float32: "fp32"}


        def describe(x):
            if x.dtype == torch.float64 or x.dtype in (torch.double, torch.complex128):
                return "wide"
            if x.dtype is torch.float64:
                return "wide"
            eps = torch.finfo(torch.float64).eps
            big = torch.iinfo(torch.int64).max
            host = np.zeros(3, dtype=np.float64)
            return eps, big, host
        """,
    )


def test_dtype_tables_are_not_uses(tmp_path):
    """Tables that map names to dtypes (or list the dtypes a function accepts) make no tensor: the
    dtype is chosen where a configuration value is looked up in them. Lists of dtypes passed to a
    call or looped over run each entry, and stay findings."""
    check(
        tmp_path,
        """
        import pytest
        import torch

        DTYPES = {"fp32": torch.float32, "fp64": torch.float64, "bf16": torch.bfloat16}
        LEGACY = {
            "FloatTensor": torch.float,
            "DoubleTensor": torch.double,
            "LongTensor": torch.long,
        }
        PAIRS = (
            (torch.float32, "float32"),
            (torch.float64, "float64"),
            (torch.complex64, "complex64"),
        )
        SUPPORTED = [torch.float32, torch.float64]
        ONE = {"dtype": torch.float64}  # expect: NL501
        FP8_FORMATS = {
            "e4m3": torch.float8_e4m3fn,  # expect: NL505
            "e4m3fnuz": torch.float8_e4m3fnuz,  # expect: NL504
        }


        def precise(n, name):
            return torch.zeros(n, dtype=DTYPES[name])


        @pytest.mark.parametrize("dtype", [torch.float32, torch.float64])  # expect: NL501
        def test_each(dtype):
            for other in (torch.float16, torch.float64):  # expect: NL501
                torch.ones(2, dtype=other)
        """,
    )


def test_float64_is_reported_where_it_is_chosen_not_where_the_variable_is_used(tmp_path):
    check(
        tmp_path,
        """
        import torch
        from torch import float64


        def build(n, wide=True):
            dtype = torch.float64  # expect: NL501
            index_dtype = torch.long  # expect: NL507
            copy = dtype
            x = torch.zeros(n, dtype=dtype)
            y = torch.ones(n).to(copy)
            z = torch.arange(n, dtype=index_dtype)
            w = torch.zeros(n, dtype=float64)  # expect: NL501
            v = torch.zeros(n, dtype=torch.float64 if wide else torch.float32)  # expect: NL501
            return x, y, z, w, v
        """,
    )


# ---- NL502 complex ---------------------------------------------------------------------------
def test_complex_creation(tmp_path):
    check(
        tmp_path,
        """
        import torch


        def rotary(xq, freqs, t):
            freqs_cis = torch.polar(torch.ones_like(freqs), freqs)  # expect: NL502
            xq_ = torch.view_as_complex(xq.float().reshape(*xq.shape[:-1], -1, 2))  # expect: NL502
            z = torch.complex(xq, xq)  # expect: NL502
            spec = torch.stft(t, 400, return_complex=True)  # expect: NL503, NL502
            buf = torch.zeros(4, dtype=torch.complex64)  # expect: NL502
            wide = buf.to(torch.cdouble)  # expect: NL502
            return freqs_cis, xq_, z, spec, wide
        """,
    )


def test_real_valued_rotary_embedding_is_clean(tmp_path):
    check(
        tmp_path,
        """
        import torch


        def rotate_half(x):
            x1, x2 = x.chunk(2, dim=-1)
            return torch.cat((-x2, x1), dim=-1)


        def apply_rotary(q, cos, sin, return_complex=False):
            spec_kwargs = {"return_complex": False}
            return q * cos + rotate_half(q) * sin, torch.view_as_real
        """,
    )


def test_complex_verdict_changes_with_the_2_32_compiler(tmp_path):
    source = """
        import torch

        a = torch.zeros(2, dtype=torch.complex64)  # expect: NL502
        b = torch.zeros(2, dtype=torch.complex128)  # expect: NL502
        """
    # Before 2.32 some complex64 ops compiled (2.32 adds "additional" ones), which is not documented.
    old = {f.line: f for f in check(tmp_path, source, sdk="2.31", target="trn2")}
    assert old[3].severity is Severity.WARNING and old[3].status == "unknown"
    assert old[4].severity is Severity.BLOCKER and old[4].status == "unsupported"
    new = {f.line: f for f in check(tmp_path, source, sdk="2.32", target="trn2")}
    assert new[3].severity is Severity.WARNING and new[3].status == "partial"
    assert new[4].severity is Severity.BLOCKER and new[4].status == "unsupported"


# ---- NL503 FFT, NL509 triangular solve ---------------------------------------------------------
def test_fft_and_triangular_solve(tmp_path):
    check(
        tmp_path,
        """
        import torch
        import torch.fft as fft


        def filters(x, A, b):
            spec = torch.fft.rfft(x)  # expect: NL503
            back = fft.irfft(spec)  # expect: NL503
            sol = torch.linalg.solve_triangular(A, b, upper=False)  # expect: NL509
            inv = torch.inverse(A) @ b
            return back, sol, inv
        """,
    )


# ---- NL504 / NL505 / NL508 fp8 and fp4 ----------------------------------------------------------
FP8 = """
    import torch


    def quantize(w, kv):
        w8 = w.to(torch.float8_e4m3fn)  # expect: NL505
        kv8 = kv.to(torch.float8_e5m2)
        amd = w.to(torch.float8_e4m3fnuz)  # expect: NL504
        amd2 = w.to(torch.float8_e5m2fnuz)  # expect: NL504
        return w8, kv8, amd, amd2
    """


def test_fp8_e4m3fn_is_native_only_on_trn3(tmp_path):
    trn2 = {f.line: f for f in check(tmp_path, FP8, target="trn2")}
    trn3 = {f.line: f for f in check(tmp_path, FP8, target="trn3")}
    assert (trn2[5].severity, trn2[5].status) == (Severity.WARNING, "unsupported")
    assert (trn3[5].severity, trn3[5].status) == (Severity.INFO, "supported")


def test_fnuz_fp8_is_unsupported_on_every_chip(tmp_path):
    for target in ("trn1", "trn2", "trn3"):
        findings = check(tmp_path, FP8, sdk="2.32", target=target)
        assert {(f.severity, f.status) for f in findings if f.rule == "NL504"} == {
            (Severity.BLOCKER, "unsupported")
        }


def test_fp4_and_mx_scale_types(tmp_path):
    source = """
        import torch


        def pack(w, scales):
            w4 = w.view(torch.float4_e2m1fn_x2)  # expect: NL508
            s = scales.to(torch.float8_e8m0fnu)  # expect: NL508
            return w4, s
        """
    assert {f.severity for f in check(tmp_path, source, target="trn2")} == {Severity.BLOCKER}
    assert {f.severity for f in check(tmp_path, source, target="trn3")} == {Severity.INFO}


# ---- NL507 int64 (opt-in) ----------------------------------------------------------------------
INT64 = """
    import torch


    def positions(n, mask):
        ids = torch.arange(n, dtype=torch.long)  # expect: NL507
        idx = mask.long()  # expect: NL507
        big = torch.zeros(n, dtype=torch.int64)  # expect: NL507
        if ids.dtype == torch.int64:
            pass
        return ids, idx, big
    """


def test_int64_is_opt_in(tmp_path):
    findings = check(
        tmp_path,
        """
        import torch

        ids = torch.arange(8, dtype=torch.long)
        """,
        select=[],
    )
    assert findings == []


def test_int64_verdict_trn1_versus_trn2_with_sdk_2_32(tmp_path):
    trn1 = check(tmp_path, INT64, select=["NL507"], sdk="2.32", target="trn1")
    trn2 = check(tmp_path, INT64, select=["NL507"], sdk="2.32", target="trn2")
    assert {f.message for f in trn1} != {f.message for f in trn2}
    assert all("always compute them as 32-bit" in f.message for f in trn1)
    assert all("--native-int64=enabled" in f.message for f in trn2)
    native = check(
        tmp_path,
        INT64,
        select=["NL507"],
        sdk="2.32",
        target="trn2",
        compiler_flags=["--native-int64=enabled"],
    )
    assert {f.status for f in native} == {"supported"}
    older = check(tmp_path, INT64, select=["NL507"], sdk="2.31", target="trn2")
    assert all("downcasts them to 32-bit" in f.message for f in older)


def test_host_side_float64_and_fft_are_not_device_work(tmp_path):
    check(
        tmp_path,
        """
        import numpy as np
        import scipy.fft
        import torch


        def spectrum(signal, weights):
            spec = np.fft.rfft(signal)
            also = scipy.fft.fft(signal)
            exact = weights.detach().cpu().double()  # expect: NL703
            host = np.asarray(signal).astype(np.float64)
            packed = torch.from_numpy(host).float()
            return spec, also, exact, packed
        """,
    )


def test_fp8_e5m2_and_bf16_are_fine_everywhere(tmp_path):
    for target in ("trn1", "trn2", "trn3"):
        check(
            tmp_path,
            """
            import torch


            def cast(w):
                return w.to(torch.float8_e5m2), w.to(torch.bfloat16), w.float(), w.half()
            """,
            sdk="2.32",
            target=target,
        )


def test_numpy_to_torch_dtype_tables_are_not_uses(tmp_path):
    check(
        tmp_path,
        """
        import numpy as np
        import torch

        NUMPY_TO_TORCH = {
            np.float32: torch.float32,
            np.float64: torch.float64,
            np.complex64: torch.complex64,
            np.complex128: torch.complex128,
        }
        """,
    )


def test_a_cast_registered_as_module_state_is_device_state(tmp_path):
    """torchmetrics' FID keeps float64 sums as metric state: `self.add_state("s",
    torch.zeros(n).double())` makes a CPU fill, but the metric's `.to(device)` moves its state
    with it, as it moves buffers and parameters. A cast of a fill kept in a local stays host data.
    `torch.linalg.eigvals` always returns complex values (NL502)."""
    check(
        tmp_path,
        """
        import torch
        from torch import nn
        from torchmetrics import Metric


        class FrechetDistance(Metric):
            def __init__(self, n):
                super().__init__()
                self.add_state("real_sum", torch.zeros(n).double(), dist_reduce_fx="sum")  # expect: NL501
                self.register_buffer("cov", torch.zeros(n, n).double())  # expect: NL501
                self.scale = nn.Parameter(torch.ones(n).double())  # expect: NL501
                table = torch.zeros(n).double()
                self.names = [str(v) for v in table.tolist()]

            def compute(self, sigma1, sigma2):
                return torch.linalg.eigvals(sigma1 @ sigma2).sqrt().real.sum(dim=-1)  # expect: NL502
        """,
        select=["dtype"],
    )
