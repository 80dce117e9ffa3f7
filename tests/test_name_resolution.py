"""Name resolution (neuronlint/static/context.py, bindings.py), observed through real scans.

Each snippet is scanned with every rule selected; `# expect:` comments list everything that must be
reported, so a wrong resolution shows up either as a missing finding or as an unexpected one.
"""

from __future__ import annotations

from tests.annotated_source import check


def test_import_aliases_resolve_to_qualified_names(tmp_path):
    check(
        tmp_path,
        """
        import torch as T
        import torch.cuda as tc
        from torch import float64 as f64
        from torch import compile as compile_model

        x = T.zeros(3, dtype=T.float64)  # expect: NL501
        y = x.to(f64)  # expect: NL501
        tc.synchronize()  # expect: NL102
        net = compile_model(object())  # expect: NL801
        """,
    )


def test_assigned_alias_of_a_module_resolves(tmp_path):
    check(
        tmp_path,
        """
        import numpy as np
        import torch

        xp = np
        th = torch
        first = xp.asarray([1.0, 2.0]).item()
        z = th.zeros(2, dtype=th.float64)  # expect: NL501
        """,
    )


def test_function_parameters_shadow_imports(tmp_path):
    check(
        tmp_path,
        """
        import numpy as np
        import torch


        def scale(np, values):
            # `np` is whatever the caller passes here, not numpy: its results may be tensors.
            return np.stack(values).sum().item()  # expect: NL701


        def widen(torch, x):
            return x.to(torch.float64)


        def keyword_only(*, torch):
            return torch.float64


        def star(*torch):
            return torch.float64
        """,
    )


def test_lambda_parameters_shadow_imports(tmp_path):
    check(
        tmp_path,
        """
        import torch

        pick = lambda torch: torch.float64
        to_host = lambda np: np.asarray([1]).item()  # expect: NL701
        """,
    )


def test_for_loop_targets_rebind_names(tmp_path):
    check(
        tmp_path,
        """
        import numpy as np
        import torch

        table = np.arange(10).reshape(5, 2)
        for row in table:
            first = row[0].item()

        for torch in ("cpu", "other"):  # the loop rebinds the module name
            value = torch.float64

        for scores in batches:
            best = scores.max().item()  # expect: NL701
        """,
    )


def test_for_loop_over_tensor_values_gives_host_numbers(tmp_path):
    check(
        tmp_path,
        """
        def lengths_of(batch):
            out = []
            for n in batch.lengths.tolist():  # expect: NL702
                out.append(n.bit_length())
            return out
        """,
    )


def test_with_targets_rebind_names(tmp_path):
    check(
        tmp_path,
        """
        import numpy as np
        from torch import float64

        with np.load("weights.npz") as archive:
            scale = archive["scale"].item()

        with open("dtype.txt") as float64:  # rebinds the imported name
            text = float64.read()

        with np.errstate(all="ignore") as state:
            pass
        """,
    )


def test_class_body_names_are_not_visible_in_methods(tmp_path):
    check(
        tmp_path,
        """
        import numpy as np
        import torch


        class Loader:
            np = NotImplemented  # a class attribute, not the module numpy
            dtype = torch.float64  # expect: NL501

            def first(self, values):
                # Inside a method, `np` is the module: numpy values live on the host.
                return np.asarray(values).item()
        """,
    )


def test_class_attribute_named_like_a_module_does_not_leak_into_methods(tmp_path):
    check(
        tmp_path,
        """
        import torch


        class Registry:
            torch = {"name": "shadow"}

            def build(self):
                return torch.zeros(2, dtype=torch.float64)  # expect: NL501
        """,
    )


def test_comprehension_variables_do_not_leak(tmp_path):
    check(
        tmp_path,
        """
        import numpy as np


        def summarise(batch):
            t = np.zeros(3)
            firsts = [t.item() for t in batch]  # expect: NL701
            return t.item(), firsts
        """,
    )


def test_numpy_values_are_host_values(tmp_path):
    check(
        tmp_path,
        """
        import numpy as np
        import pandas as pd


        def stats(x, frame_path):
            arr = np.asarray(x)
            total = arr.sum().item()
            scaled = (arr * 2).tolist()
            first = arr[0].item()
            frame = pd.read_csv(frame_path)
            labels = frame["label"].unique()
            values = frame["value"].to_numpy().tolist()
            if arr.max() > 1:
                arr = arr / arr.max()
            picked = arr[arr > 0]
            a, b = np.histogram(arr)
            edges = b.tolist()
            return total, scaled, first, labels, values, picked, edges
        """,
    )


def test_tuple_assignment_binds_element_wise(tmp_path):
    check(
        tmp_path,
        """
        import numpy as np
        import torch

        t, a = torch.zeros(2, device=device), np.ones(2)
        on_host = a.tolist()
        from_device = t.tolist()  # expect: NL702
        """,
    )


def test_conditional_import_with_none_fallback_keeps_the_import(tmp_path):
    check(
        tmp_path,
        """
        try:
            import numpy as np
        except ImportError:
            np = None

        try:
            import torch
        except ImportError:
            torch = None


        def first(values):
            return np.asarray(values).item()


        def widen(x):
            return x.to(torch.float64)  # expect: NL501
        """,
    )


def test_imports_in_both_branches_of_an_if(tmp_path):
    check(
        tmp_path,
        """
        import os

        if os.environ.get("USE_NP"):
            import numpy as backend
        else:
            import torch as backend

        half = backend.float64  # expect: NL501
        """,
    )


def test_global_declaration_binds_in_the_module_scope(tmp_path):
    check(
        tmp_path,
        """
        np = None


        def setup():
            global np
            import numpy as np


        def first(values):
            return np.asarray(values).item()
        """,
    )


def test_dunder_all_strings_are_not_bindings(tmp_path):
    check(
        tmp_path,
        """
        import torch

        __all__ = ["float64", "compile", "torch.float64"]
        source = compile("x = 1", "<cfg>", "exec")
        """,
    )


def test_star_imports_bind_nothing(tmp_path):
    check(
        tmp_path,
        """
        from torch import *
        from numpy import *

        dtype = float64
        code = compile("1 + 1", "<expr>", "eval")
        """,
    )


def test_relative_imports_resolve_inside_the_package(tmp_path):
    check(
        tmp_path,
        """
        from ..compat import compile
        from . import float64

        model = compile(object())
        kind = float64
        """,
        name="pkg/models/net.py",
    )


def test_later_assignment_shadows_an_import(tmp_path):
    check(
        tmp_path,
        """
        import torch
        from torch import compile

        compile = lambda model: model
        net = compile(object())
        torch.compile(object())  # expect: NL801
        """,
    )


def test_string_constants_resolve_through_names(tmp_path):
    check(
        tmp_path,
        """
        HOST = "cpu"
        where = "cpu" if True else HOST


        def fetch(t):
            a = t.to(HOST)  # expect: NL703
            b = t.to(device=where)  # expect: NL703
            return a, b
        """,
    )


def test_tensor_annotations_and_torch_results_are_tensors(tmp_path):
    check(
        tmp_path,
        """
        import torch
        from torch import Tensor


        def report(x: Tensor, y: torch.Tensor, steps: int, name: str):
            z = torch.zeros(3, device=x.device)
            w = x + 1
            print(x)  # expect: NL704
            print(y[0])  # expect: NL704
            print(z)  # expect: NL704
            print(w)  # expect: NL704
            print(steps, name, x.shape, x.dtype)
            print(torch.numel(x))
        """,
    )


def test_clean_model_fixture_has_no_findings_in_any_frame():
    """fixtures/clean_model is the false-positive guard: nothing at all, on every chip and SDK."""
    from tests.conftest import FIXTURES, ROOT, scan_paths

    for sdk, target in (("2.29", "trn1"), ("2.32", "trn2"), ("2.33", "trn2"), ("2.33", "trn3")):
        result = scan_paths([FIXTURES / "clean_model"], cwd=ROOT, select=["ALL"], sdk=sdk, target=target)
        assert len(result.files) == 2
        assert result.active == [], [(f.path, f.line, f.rule) for f in result.active]


def test_findings_inside_annotations_keep_the_file_analysed(tmp_path):
    # The snippet of a finding in a return annotation used to crash the file (NL002). Annotations
    # are not API uses (the call that makes the stream is), so only the default value is reported.
    findings = check(
        tmp_path,
        """
        import torch


        def make_stream() -> torch.cuda.Stream:
            return make()


        def widen(x: torch.Tensor, dtype: torch.dtype = torch.float64) -> torch.Tensor:  # expect: NL501
            return x.to(dtype)
        """,
    )
    assert all(f.snippet for f in findings)
