"""The fix engine (neuronlint.fix): each fixer per flavour, safety classes, imports added once,
formatting and comments kept, suppressed lines left alone, idempotence, frames without a flavour."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from neuronlint.fix import FlavourError, flavour_for
from neuronlint.fix.model import Edit, apply_edits, overlaps
from neuronlint.fix.run import attach, fix_files
from neuronlint.pipeline import ScanOptions, run_scan


def scan(tmp_path: Path, code: str, **frame):
    path = tmp_path / "train.py"
    path.write_text(textwrap.dedent(code).lstrip("\n"))
    options = ScanOptions(paths=[path], base=tmp_path, jobs=1, **frame)
    return run_scan(options), options


def fix(tmp_path: Path, code: str, to: str = "portable", unsafe: bool = False, **frame) -> str:
    result, options = scan(tmp_path, code, **frame)
    flavour = flavour_for(to, result.context, result.db)
    fix_files(result, options, flavour, unsafe, True, tmp_path)
    return (tmp_path / "train.py").read_text()


def rules_left(tmp_path: Path) -> list[str]:
    result, _ = scan(tmp_path, (tmp_path / "train.py").read_text())
    return sorted(f.rule for f in result.active)


# ---- edits -------------------------------------------------------------------------------------
def test_edits_apply_in_order_and_insertions_at_one_point_keep_their_order():
    text = "a = 1\nb = 2\n"
    edits = [
        Edit(2, 1, 2, 2, "c"),
        Edit(1, 1, 1, 1, "import y\n", order=1),
        Edit(1, 1, 1, 1, "import x\n", order=0),
        Edit(1, 1, 1, 1, "import x\n", order=0),  # duplicates count once
    ]
    assert apply_edits(text, edits) == "import x\nimport y\na = 1\nc = 2\n"


def test_overlap_rules():
    assert overlaps(Edit(1, 1, 1, 5, "x"), Edit(1, 3, 1, 8, "y"))
    assert not overlaps(Edit(1, 1, 1, 5, "x"), Edit(1, 5, 1, 8, "y"))
    assert not overlaps(Edit(1, 1, 1, 1, "x"), Edit(1, 1, 1, 1, "y"))
    assert overlaps(Edit(1, 3, 1, 3, "x"), Edit(1, 1, 1, 5, "y"))
    assert not overlaps(Edit(1, 1, 1, 1, "x"), Edit(1, 1, 1, 5, "y"))


# ---- portable flavour ----------------------------------------------------------------------------
def test_portable_device_variable_is_introduced_once_after_the_imports(tmp_path):
    out = fix(
        tmp_path,
        '''
        """Train."""
        import torch  # the framework

        def step(model, x):
            model = model.cuda()   # keep this comment
            y = model(x.to("cuda", non_blocking=True))
            return y.cuda(non_blocking=True)
        ''',
    )
    assert out == textwrap.dedent(
        '''\
        """Train."""
        import torch  # the framework
        DEVICE = torch.accelerator.current_accelerator(check_available=True) or torch.device("cpu")

        def step(model, x):
            model = model.to(DEVICE)   # keep this comment
            y = model(x.to(DEVICE, non_blocking=True))
            return y.to(DEVICE, non_blocking=True)
        '''
    )
    assert out.count("DEVICE =") == 1
    assert rules_left(tmp_path) == []


def test_portable_adds_import_torch_once_when_missing(tmp_path):
    out = fix(
        tmp_path,
        """
        from torch import cuda, nn

        def f(m):
            cuda.synchronize()
            return m.cuda()
        """,
    )
    assert out.count("import torch\n") == 1
    assert "DEVICE = torch.accelerator" in out
    assert "        torch.accelerator.synchronize()" in out
    assert out.index("import torch\n") < out.index("DEVICE =")
    compile(out, "train.py", "exec")


def test_portable_uses_the_files_device_variable(tmp_path):
    out = fix(
        tmp_path,
        """
        import torch
        device = torch.device("cuda" if torch.cuda.is_available() else "cpu")

        def f(x):
            return x.cuda(), torch.zeros(2, device="cuda")
        """,
    )
    assert (
        'device = torch.accelerator.current_accelerator(check_available=True) or torch.device("cpu")' in out
    )
    assert "return x.to(device), torch.zeros(2, device=device.type)" in out
    assert "DEVICE" not in out
    assert rules_left(tmp_path) == []


def test_a_shadowed_device_name_is_not_reused(tmp_path):
    out = fix(
        tmp_path,
        """
        import torch
        device = torch.device("cuda" if torch.cuda.is_available() else "cpu")

        def f(x, device):
            return x.cuda()
        """,
    )
    assert "return x.to(DEVICE)" in out


def test_string_idiom_and_indexed_strings(tmp_path):
    out = fix(
        tmp_path,
        """
        import torch
        name = "cuda" if torch.cuda.is_available() else "cpu"
        first = torch.device("cuda:0")
        ranked = lambda rank: f"cuda:{rank}"
        """,
    )
    assert (
        'name = (torch.accelerator.current_accelerator(check_available=True) or torch.device("cpu")).type'
        in out
    )
    assert 'first = torch.device(f"{DEVICE.type}:0")' in out
    assert 'ranked = lambda rank: f"{DEVICE.type}:{rank}"' in out
    assert rules_left(tmp_path) == []


def test_accelerator_calls_are_guarded_unless_already_under_a_check(tmp_path):
    out = fix(
        tmp_path,
        """
        import torch

        def log():
            torch.cuda.synchronize()
            if torch.cuda.is_available():
                torch.cuda.synchronize()
                torch.cuda.empty_cache()
            print(torch.cuda.memory_allocated() / 2**20, torch.cuda.device_count())
        """,
    )
    assert out == textwrap.dedent(
        """\
        import torch

        def log():
            if torch.accelerator.is_available():
                torch.accelerator.synchronize()
            if torch.accelerator.is_available():
                torch.accelerator.synchronize()
                torch.accelerator.empty_cache()
            print((torch.accelerator.memory_allocated() if torch.accelerator.is_available() else 0) / 2**20, torch.accelerator.device_count())
        """
    )


def test_amp_autocast_and_grad_scaler(tmp_path):
    out = fix(
        tmp_path,
        """
        import torch

        def train(model, x):
            scaler = torch.cuda.amp.GradScaler(init_scale=1024)
            with torch.cuda.amp.autocast(True, torch.bfloat16):
                loss = model(x)
            with torch.autocast("cuda"):
                pass
            return scaler, loss
        """,
    )
    assert "scaler = torch.amp.GradScaler(DEVICE.type, init_scale=1024)" in out
    assert "with torch.autocast(device_type=DEVICE.type, enabled=True, dtype=torch.bfloat16):" in out
    assert "with torch.autocast(DEVICE.type):" in out
    assert rules_left(tmp_path) == []


def test_seed_after_manual_seed_is_removed_safely_else_unsafe(tmp_path):
    code = """
        import torch

        def seed(s):
            torch.manual_seed(s)
            torch.cuda.manual_seed_all(s)

        def other(s):
            torch.cuda.manual_seed(s)
        """
    out = fix(tmp_path, code)
    assert "torch.cuda.manual_seed_all" not in out and "torch.cuda.manual_seed(s)" in out
    out = fix(tmp_path, code, unsafe=True)
    assert "def other(s):\n    torch.manual_seed(s)" in out


def test_unsafe_fixes_need_the_flag(tmp_path):
    code = """
        import torch
        import torch.distributed as dist
        from torch.nn.parallel import DistributedDataParallel as DDP
        torch.backends.cudnn.benchmark = True

        def setup(model, rank):
            dist.init_process_group(backend="nccl")
            return DDP(model, device_ids=[rank], output_device=rank, find_unused_parameters=True)
        """
    safe = fix(tmp_path, code)
    assert "torch.backends.cudnn.benchmark = True" in safe
    assert "dist.init_process_group(backend=dist.get_default_backend_for_device(DEVICE))" in safe
    assert "device_ids" in safe
    out = fix(tmp_path, code, unsafe=True)
    assert "cudnn" not in out
    assert "return DDP(model, find_unused_parameters=True)" in out


def test_suppressed_lines_are_never_touched(tmp_path):
    out = fix(
        tmp_path,
        """
        import torch

        def f(x):
            torch.cuda.synchronize()  # neuronlint: ignore[NL102] timing on GPU only
            return x.cuda()
        """,
    )
    assert "torch.cuda.synchronize()  # neuronlint: ignore[NL102]" in out
    assert "return x.to(DEVICE)" in out


def test_second_run_is_a_no_op_and_crlf_is_kept(tmp_path):
    code = "import torch\r\n\r\ndef f(x):\r\n    torch.cuda.synchronize()\r\n    return x.cuda()\r\n"
    path = tmp_path / "train.py"
    path.write_bytes(code.encode())
    options = ScanOptions(paths=[path], base=tmp_path, jobs=1)
    result = run_scan(options)
    fix_files(result, options, flavour_for("portable", result.context, result.db), False, True, tmp_path)
    once = path.read_bytes()
    assert b"\r\n" in once and b"\n" not in once.replace(b"\r\n", b"")
    result = run_scan(options)
    report = fix_files(
        result, options, flavour_for("portable", result.context, result.db), True, True, tmp_path
    )
    assert path.read_bytes() == once and not report.changed()


def test_a_file_without_a_final_newline_is_fixed_and_keeps_its_ending(tmp_path):
    # LibCST drops the module's last newline token after its children are generated; the span
    # recorder used to index past the end and the whole scan died (found on huggingface/nanotron).
    path = tmp_path / "train.py"
    path.write_bytes(b"import torch\n\ndef f(x):\n    torch.cuda.synchronize()\n    return x.cuda()")
    options = ScanOptions(paths=[path], base=tmp_path, jobs=1)
    result = run_scan(options)
    flavour = flavour_for("portable", result.context, result.db)
    assert attach(result, flavour, tmp_path) >= 1
    report = fix_files(result, options, flavour, False, False, tmp_path)
    diff = "".join(f.diff() for f in report.files)
    assert diff.count("\\ No newline at end of file\n") == 2 and path.read_bytes().startswith(b"import")
    fix_files(result, options, flavour, False, True, tmp_path)
    fixed = path.read_bytes()
    assert b"torch.cuda.synchronize" not in fixed and not fixed.endswith(b"\n")
    compile(fixed, "train.py", "exec")


def test_attach_gives_findings_their_edits(tmp_path):
    result, _ = scan(tmp_path, "import torch\ntorch.cuda.synchronize()\n")
    assert attach(result, flavour_for("portable", result.context, result.db), tmp_path) == 1
    (finding,) = result.active
    assert finding.fix.applicability == "safe"
    assert finding.fix.edits[-1].content.startswith("if torch.accelerator.is_available():")
    assert finding.to_dict()["fix"]["edits"][-1]["line"] == 2


# ---- neuron and xla flavours ---------------------------------------------------------------------
def test_neuron_flavour(tmp_path):
    out = fix(
        tmp_path,
        """
        import torch

        def f(model, x):
            torch.cuda.synchronize()
            model = torch.compile(model.cuda(), mode="max-autotune")
            return model(x.to("cuda:1"))
        """,
        to="neuron",
        sdk="2.33",
        target="trn2",
    )
    assert "    torch.accelerator.synchronize()\n" in out
    assert 'model = torch.compile(model.to("neuron"))' in out
    assert 'return model(x.to("neuron:1"))' in out


def test_xla_flavour_uses_the_releases_torch_xla_api(tmp_path):
    code = """
        import torch
        import torch.distributed as dist

        def f(x):
            dist.init_process_group("nccl")
            torch.cuda.synchronize()
            return x.cuda()
        """
    out = fix(tmp_path, code, to="xla", unsafe=True, sdk="2.29", target="trn1")
    assert "import torch_xla.distributed.xla_backend\n" in out
    assert "import torch_xla\n" in out and "DEVICE = torch_xla.device()" in out
    assert 'dist.init_process_group("xla")' in out and "torch_xla.sync()" in out
    out = fix(tmp_path, code, to="xla", unsafe=True, sdk="2.24", target="trn1")
    assert "import torch_xla.core.xla_model as xm\n" in out
    assert "DEVICE = xm.xla_device()" in out and "xm.mark_step()" in out


@pytest.mark.parametrize(
    ("to", "frame", "message"),
    [
        ("neuron", {"sdk": "2.29", "target": "trn1"}, "needs the native backend"),
        ("xla", {"sdk": "2.33", "target": "trn2"}, "use --backend xla"),
        ("wasm", {}, "unknown --to"),
    ],
)
def test_a_flavour_the_frame_lacks_is_refused(tmp_path, to, frame, message):
    result, _ = scan(tmp_path, "import torch\n", **frame)
    with pytest.raises(FlavourError, match=message):
        flavour_for(to, result.context, result.db)


def test_no_device_variable_above_the_import_that_defines_it(tmp_path):
    out = fix(
        tmp_path,
        """
        DEFAULT_DEVICE = "cuda"
        import torch

        def f(x):
            return x.cuda()
        """,
    )
    assert 'DEFAULT_DEVICE = "cuda"' in out  # a module-level use above `import torch`: no fix
    assert out.index("import torch\nDEVICE =") < out.index("return x.to(DEVICE)")
    compile(out, "train.py", "exec")


def test_device_comparisons_count_as_cuda_guards(tmp_path):
    out = fix(
        tmp_path,
        """
        import torch

        def f(device):
            if device == "cuda":
                torch.cuda.synchronize()
        """,
    )
    assert 'if device == "cuda":\n        torch.accelerator.synchronize()' in out


def test_statement_forms_of_the_guarded_device_idiom_become_one_assignment(tmp_path):
    out = fix(
        tmp_path,
        """
        import torch

        if torch.cuda.is_available():
            device = "cuda"
        else:
            device = "cpu"

        def pick():
            target = torch.device("cpu")
            if torch.cuda.is_available():
                target = torch.device("cuda")
            return target

        def mixed():
            other = "cpu"
            if torch.cuda.is_available():
                other = torch.device("cuda")
            return other

        def chained(cpu_only):
            if cpu_only:
                chosen = "cpu"
            elif torch.cuda.is_available():
                chosen = "cuda"
            else:
                chosen = "cpu"
            return chosen
        """,
    )
    expression = 'torch.accelerator.current_accelerator(check_available=True) or torch.device("cpu")'
    assert f"device = ({expression}).type\n" in out
    assert f"def pick():\n    target = {expression}\n    return target\n" in out
    # a string on one branch and a device on the other: not the idiom, the parts are fixed one by one
    assert 'other = "cpu"\n    if torch.cuda.is_available():\n        other = DEVICE\n' in out
    # an `elif`: the branch above decides too, so only the literal is fixed
    assert "    elif torch.cuda.is_available():\n        chosen = DEVICE.type\n    else:\n" in out


def test_legacy_tensor_types(tmp_path):
    out = fix(
        tmp_path,
        """
        import torch

        def f(x, n):
            a = x.type(torch.cuda.FloatTensor)  # unsafe: x may be a module
            b = torch.cuda.LongTensor([1, 2])
            c = torch.cuda.BFloat16Tensor(2, 3)
            d = torch.cuda.FloatTensor(n)
            return isinstance(a, torch.cuda.FloatTensor), b, c, d
        """,
    )
    assert "a = x.type(torch.cuda.FloatTensor)" in out
    assert "b = torch.tensor([1, 2], dtype=torch.int64, device=DEVICE)" in out
    assert "c = torch.empty(2, 3, dtype=torch.bfloat16, device=DEVICE)" in out
    assert "d = torch.cuda.FloatTensor(n)" in out  # a size, a shape or data: not decided here
    assert "isinstance(a, torch.cuda.FloatTensor)" in out
    unsafe = fix(
        tmp_path, "import torch\n\ndef f(x):\n    return x.type(torch.cuda.HalfTensor)\n", unsafe=True
    )
    assert "return x.to(DEVICE, torch.float16)" in unsafe


def test_custom_fwd_and_custom_bwd(tmp_path):
    out = fix(
        tmp_path,
        """
        import torch

        class F(torch.autograd.Function):
            @staticmethod
            @torch.cuda.amp.custom_fwd(cast_inputs=torch.float16)
            def forward(ctx, x):
                return x

            @staticmethod
            @torch.cuda.amp.custom_bwd
            def backward(ctx, g):
                return g
        """,
    )
    assert "@torch.amp.custom_fwd(device_type=DEVICE.type, cast_inputs=torch.float16)" in out
    assert "@torch.amp.custom_bwd(device_type=DEVICE.type)" in out
    assert rules_left(tmp_path) == []
    neuron = fix(
        tmp_path,
        "import torch\n\n@torch.cuda.amp.custom_fwd\ndef f(ctx, x):\n    return x\n",
        to="neuron",
        unsafe=True,
    )
    assert '@torch.amp.custom_fwd(device_type="neuron")' in neuron


def test_stream_context_is_unsafe(tmp_path):
    code = """
        import torch

        def f(x, s):
            with torch.cuda.stream(s):
                y = x + 1
            ctx = torch.cuda.stream(s)
            return y, ctx
        """
    assert "with torch.cuda.stream(s):" in fix(tmp_path, code)
    out = fix(tmp_path, code, unsafe=True)
    assert "    with s:\n        y = x + 1\n" in out
    assert "ctx = torch.cuda.stream(s)" in out


def test_a_check_around_generic_calls_becomes_an_accelerator_check(tmp_path):
    out = fix(
        tmp_path,
        """
        import torch

        def f(rank):
            if torch.cuda.is_available():
                torch.cuda.set_device(rank)
                torch.cuda.empty_cache()
            if torch.cuda.is_available():
                print("on a GPU")
        """,
    )
    assert (
        "    if torch.accelerator.is_available():\n"
        "        torch.accelerator.set_device_index(rank)\n"
        "        torch.accelerator.empty_cache()\n"
        "    if torch.cuda.is_available():\n"
        '        print("on a GPU")\n'
    ) in out


def test_kernels_libraries_and_dynamic_shapes_say_there_is_no_automatic_fix(tmp_path):
    result, _ = scan(
        tmp_path,
        """
        import torch
        import apex

        def f(x):
            return x[torch.nonzero(x)]
        """,
    )
    attach(result, flavour_for("portable", result.context, result.db), tmp_path)
    by_rule = {f.rule: f for f in result.active}
    assert by_rule["NL401"].fix is None or not by_rule["NL401"].fix.automatic
    assert by_rule["NL401"].extra["no_fix"].startswith("No automatic fix: a CUDA-only library")
    assert by_rule["NL601"].extra["no_fix"].startswith("No automatic fix: data-dependent shapes")
