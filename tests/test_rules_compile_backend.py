"""compile-backend rules (NL801-NL804): positive and negative cases, XLA versus native verdicts."""

from __future__ import annotations

from neuronlint.findings import Severity
from tests.annotated_source import check, only
from tests.conftest import scan_source

PLAIN = """
    import torch


    def build(model):
        return torch.compile(model)  # expect: NL801
    """


def test_plain_torch_compile_verdict_xla_trn1_versus_native_trn2(tmp_path):
    xla = only(check(tmp_path, PLAIN, sdk="2.29", target="trn1"), "NL801")
    native = only(check(tmp_path, PLAIN, sdk="2.33", target="trn2"), "NL801")
    assert (xla.severity, xla.status) == (Severity.WARNING, "unsupported")
    assert "does not support torch.compile" in xla.message
    assert (native.severity, native.status) == (Severity.INFO, "supported")
    assert 'backend="neuron"' in native.message
    assert "Inductor" in native.message


def test_compile_forms(tmp_path):
    check(
        tmp_path,
        """
        import torch
        from torch import compile as tcompile


        @torch.compile  # expect: NL801
        def fused_gelu(x):
            return x * torch.sigmoid(1.702 * x)


        @torch.compile(fullgraph=True)  # expect: NL801
        def fused_add(x, y):
            return x + y


        def build(model, blocks, cfg, kwargs):
            model = tcompile(model)  # expect: NL801
            for block in blocks:
                block.compile(fullgraph=True)  # expect: NL801
            chosen = torch.compile(model, backend=cfg.backend)  # expect: NL801
            forwarded = torch.compile(model, **kwargs)  # expect: NL801
            return model, chosen, forwarded
        """,
    )


def test_backend_text_in_the_message(tmp_path):
    findings = check(
        tmp_path,
        """
        import torch

        a = torch.compile(object(), backend=BACKENDS["train"])  # expect: NL801
        b = torch.compile(object())  # expect: NL801
        """,
    )
    by_line = {f.line: f for f in findings}
    assert 'the backend in `BACKENDS["train"]`' in by_line[3].message
    assert "the default backend, Inductor" in by_line[4].message


def test_not_torch_compile(tmp_path):
    check(
        tmp_path,
        """
        import re

        import torch

        pattern = re.compile(r"layer\\.(\\d+)")
        code = compile("x + 1", "<expr>", "eval")
        eager = torch.compile(object(), backend="eager")
        debug = torch.compile(object(), backend="aot_eager", mode="default", dynamic=False)


        def build(keras_model, jitted, example):
            keras_model.compile(optimizer="adam", loss="mse")
            return jitted.lower(example).compile()
        """,
    )


def test_cuda_modes_and_options(tmp_path):
    check(
        tmp_path,
        """
        import torch

        a = torch.compile(object(), mode="reduce-overhead")  # expect: NL801, NL802
        b = torch.compile(object(), mode="max-autotune-no-cudagraphs", fullgraph=True)  # expect: NL801, NL802
        c = torch.compile(object(), options={"triton.cudagraphs": True})  # expect: NL801, NL803
        d = torch.compile(object(), backend="inductor")  # expect: NL803
        e = torch.compile(object(), backend="cudagraphs", mode="max-autotune")  # expect: NL803, NL802
        """,
    )


def test_options_forwarded_from_a_caller_are_not_inductor_keys(tmp_path):
    """Only keys the code writes are Inductor options it chooses: a literal dict, a dict literal
    held by a name at module level or in the same function. A wrapper forwarding its caller's
    `options` (a parameter, a config attribute) chooses none; its call is the plain NL801."""
    check(
        tmp_path,
        """
        import torch

        DEFAULTS = {
            "max_autotune": True,  # ok: NL803
        }
        UNUSED = {"epilogue_fusion": True}  # ok: NL803


        def compile_model(model, options=None, mode=None):
            return torch.compile(model, options=options, mode=mode)  # expect: NL801


        def compile_from_config(model, cfg):
            return torch.compile(model, options=cfg.compile_options)  # expect: NL801


        def compile_local(model):
            opts = {
                "triton.cudagraphs": True,  # expect: NL803
            }
            return torch.compile(model, options=opts)  # expect: NL801


        def compile_merged(model, extra):
            return torch.compile(  # expect: NL801
                model,
                options={
                    **extra,
                    "shape_padding": True,  # expect: NL803
                },
            )


        def compile_shadowed(model):
            DEFAULTS = dict(model.options)
            return torch.compile(model, options=DEFAULTS)  # expect: NL801


        DEFAULTS = {
            "max_autotune": True,  # expect: NL803
        }
        tuned = torch.compile(object(), options=DEFAULTS)  # expect: NL801
        """,
    )


def test_inductor_config(tmp_path):
    check(
        tmp_path,
        """
        import torch
        import torch._inductor.config as inductor_config  # expect: NL803
        from torch._inductor import config  # expect: NL803

        torch._inductor.config.coordinate_descent_tuning = True  # expect: NL803
        inductor_config.triton.unique_kernel_names = True  # expect: NL803
        config.fx_graph_cache = True  # expect: NL803
        torch._dynamo.config.cache_size_limit = 64
        torch._dynamo.config.suppress_errors = True


        def replay(pipe, graph_nodes):
            torch._inductor.cudagraph_mark_step_begin()  # expect: NL803
            torch.compiler.cudagraph_mark_step_begin()  # expect: NL803
            # FX-graph helpers that live in Inductor's package are not Inductor configuration
            from torch._inductor.fx_passes.bucketing import is_wait_tensor

            return [n for n in graph_nodes if is_wait_tensor(n)]
        """,
    )


def test_dynamic_shapes_requested(tmp_path):
    findings = check(
        tmp_path,
        """
        import torch


        def build(model, batch):
            fast = torch.compile(model, dynamic=True)  # expect: NL801, NL804
            static = torch.compile(model, dynamic=False)  # expect: NL801
            torch._dynamo.mark_dynamic(batch, 0)  # expect: NL804
            return fast, static
        """,
    )
    assert {f.severity for f in findings if f.rule == "NL804"} == {Severity.BLOCKER}
    assert "torch._dynamo.mark_dynamic" in [f for f in findings if f.rule == "NL804"][1].message


def test_neuron_backend_is_not_a_compile_backend_problem(tmp_path):
    # backend="neuron" is the target itself (lock-in rules may mention it; compile-backend must not).
    findings = scan_source(
        tmp_path, 'import torch\n\nmodel = torch.compile(object(), backend="neuron", fullgraph=True)\n'
    )
    assert [f for f in findings if f.category == "compile-backend"] == []


def test_compile_mentions_in_strings_and_comments(tmp_path):
    check(
        tmp_path,
        '''
        """Wrap the model with torch.compile(model, mode="max-autotune") on GPUs."""

        # torch.compile(model, dynamic=True) recompiles less on GPUs
        HELP = "set torch._inductor.config.freezing = True for inference"
        ''',
    )


def test_a_backend_parameter_defaulting_to_neuron(tmp_path):
    """esmc-neuronx's `compile_esm_model(model, backend="neuron")`: the backend it passes on is
    Neuron's unless a caller chooses another, so the call is the Neuron backend's note (NL909), not
    a compile of an unknown backend (NL801), and the default is no Neuron device string (NL902)."""
    check(
        tmp_path,
        """
        import torch


        def compile_esm_model(model, backend: str = "neuron"):
            return torch.compile(model, backend=backend, dynamic=False)  # expect: NL909


        def compile_any(model, backend):
            return torch.compile(model, backend=backend)  # expect: NL801
        """,
    )
