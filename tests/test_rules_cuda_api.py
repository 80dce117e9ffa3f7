"""cuda-api rules (NL101-NL115) on real scans of small snippets, both ways.

Each snippet marks the lines that must fire with `# expect: NLxxx`; every other line must stay quiet.
Scans select only the cuda-api category so that other categories' changes do not move these tests.
"""

from __future__ import annotations

from tests.annotated_source import check, only
from tests.conftest import scan_source

CUDA_API = {"select": ["cuda-api"]}


# ---- name resolution of torch.cuda.* -----------------------------------------------------------
def test_torch_cuda_names_resolve_through_every_import_form(tmp_path):
    check(
        tmp_path,
        """
        import torch
        import torch.cuda as tc
        from torch import cuda
        from torch.cuda import synchronize as sync
        from torch.cuda import Stream

        def step(model, batch):
            loss = model(batch)
            tc.synchronize()  # expect: NL102
            sync()  # expect: NL102
            cuda.synchronize()  # expect: NL102
            torch.cuda.synchronize()  # expect: NL102
            side = Stream()  # expect: NL103
            return loss
    """,
        **CUDA_API,
    )


def test_module_level_alias_of_torch_cuda(tmp_path):
    source = "import torch\n\naccel = torch.cuda\n\ndef free_memory():\n    accel.empty_cache()\n"
    findings = scan_source(tmp_path, source, select=["NL105"])
    assert [(f.line, f.message.split("`")[1]) for f in findings] == [(6, "torch.cuda.empty_cache")]


def test_comments_docstrings_messages_and_other_libraries_stay_quiet(tmp_path):
    check(
        tmp_path,
        '''
        """Training helpers. Call torch.cuda.synchronize() before timing; device='cuda' is the default."""
        import numpy as np
        import torch

        # torch.cuda.empty_cache() here would hide the leak
        def report(x):
            print("moving the batch to cuda")
            print(f"cuda memory is not tracked on {x.device}")
            a = np.zeros(3)
            b = a.astype(np.float32)
            return b
    ''',
        **CUDA_API,
    )


def test_device_generic_code_stays_quiet(tmp_path):
    check(
        tmp_path,
        """
        import torch

        device = torch.accelerator.current_accelerator()
        n = torch.accelerator.device_count()

        def place(model, x):
            model = model.to(device)
            with torch.autocast(device_type=device.type, dtype=torch.bfloat16):
                return model(x.to(device, non_blocking=True))
    """,
        **CUDA_API,
    )


# ---- NL101 device placement ---------------------------------------------------------------------
def test_cuda_device_strings_in_device_positions(tmp_path):
    check(
        tmp_path,
        """
        import torch

        def setup(model, rank, local_rank):
            x = torch.zeros(4, device="cuda")  # expect: NL101
            y = x.to("cuda:1")  # expect: NL101
            z = x.to(f"cuda:{local_rank}")  # expect: NL101
            d = torch.device("cuda", rank)  # expect: NL101
            model.cuda()  # expect: NL101
            w = torch.cuda.FloatTensor(3)  # expect: NL101
            v = x.type("torch.cuda.FloatTensor")  # expect: NL101
            return model, y, z, d, w, v
    """,
        **CUDA_API,
    )


def test_device_variable_is_reported_at_its_literal(tmp_path):
    findings = check(
        tmp_path,
        """
        import torch

        device = "cuda"  # expect: NL101

        def run(model, batch):
            model = model.to(device)
            return model(batch.to(device))
    """,
        **CUDA_API,
    )
    finding = only(findings, "NL101")
    assert (finding.line, finding.column) == (3, 10)
    assert finding.fix is not None and finding.fix.replacement == '"neuron"'


def test_cuda_fallback_is_a_warning_not_a_blocker(tmp_path):
    findings = check(
        tmp_path,
        """
        import torch

        device = "cuda" if torch.cuda.is_available() else "cpu"  # expect: NL101, NL106
        if torch.cuda.is_available():  # expect: NL106
            other = "cuda"  # expect: NL101
        pinned = "cuda:0"  # expect: NL101
    """,
        **CUDA_API,
    )
    severities = {f.line: f.severity.value for f in findings if f.rule == "NL101"}
    assert severities == {3: "warning", 5: "warning", 6: "blocker"}
    assert "the other branch runs" in next(f for f in findings if f.line == 3 and f.rule == "NL101").message


def test_cuda_strings_that_place_nothing_stay_quiet(tmp_path):
    check(
        tmp_path,
        """
        import torch
        from typing import Literal

        BACKEND_MODULES = {"cuda": "torch.cuda", "xpu": "torch.xpu", "cpu": None}
        TOLERANCES = {("cuda", 8): 1e-3, ("cpu", None): 1e-5}
        Device = Literal["cuda", "cpu"]

        def args(parser, torch_backends, monkeypatch, table):
            parser.add_argument("--device", choices=["cuda", "cpu"])
            if hasattr(torch_backends, "cuda"):
                monkeypatch.setattr(torch.version, "cuda", "12.4")
            return table["cuda"]
    """,
        **CUDA_API,
    )


def test_build_variant_names_in_a_build_script_are_no_devices(tmp_path):
    """In setup.py, `"cuda"` names a build variant (pytorch_scatter's `suffices`, a source folder);
    the build and the `torch.cuda` probe that gates it are the findings. The same lines in a module
    are devices."""
    source = """import os
import torch
from torch.utils.cpp_extension import CUDAExtension

suffices = ["cpu", "cuda"] if torch.cuda.is_available() else ["cpu"]
for suffix in suffices:
    if suffix == "cuda":
        sources = [os.path.join("csrc", suffix, "scatter_cuda.cu")]
        ext = CUDAExtension("pkg._scatter_cuda", sources)
"""
    in_build = scan_source(tmp_path / "build", source, name="setup.py")
    assert sorted((f.line, f.rule) for f in in_build if f.category == "cuda-api") == [(5, "NL106")]
    in_module = scan_source(tmp_path / "module", source, name="variants.py")
    assert {(5, "NL101"), (7, "NL111")} <= {(f.line, f.rule) for f in in_module}


def test_default_device_parameter_is_reported(tmp_path):
    check(
        tmp_path,
        """
        import torch

        def make_buffer(n, device: str = "cuda"):  # expect: NL101
            return torch.empty(n, device=device)
    """,
        **CUDA_API,
    )


# ---- NL102-NL106, NL108, NL109, NL113, NL114 (torch.cuda.* table) ---------------------------------
def test_streams_events_graphs_memory_queries_rng_and_flags(tmp_path):
    check(
        tmp_path,
        """
        import torch
        from torch.profiler import ProfilerActivity, profile

        def bench(model, x, seed, local_rank):
            torch.cuda.set_device(local_rank)  # expect: NL106
            torch.cuda.manual_seed_all(seed)  # expect: NL108
            torch.backends.cudnn.benchmark = True  # expect: NL109
            torch.backends.cuda.matmul.allow_tf32 = True  # expect: NL109
            start = torch.cuda.Event(enable_timing=True)  # expect: NL103
            with torch.cuda.stream(torch.cuda.Stream()):  # expect: NL103
                y = model(x)
            g = torch.cuda.CUDAGraph()  # expect: NL104
            with torch.cuda.graph(g):  # expect: NL104
                y = model(x)
            peak = torch.cuda.max_memory_allocated() / 2**30  # expect: NL105
            name = torch.cuda.get_device_properties(0).name  # expect: NL106
            count = torch.cuda.device_count()  # expect: NL106
            with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]):  # expect: NL113
                y = model(x)
            torch.cuda.nvtx.range_push("fwd")  # expect: NL113
            torch.cuda.ipc_collect()  # expect: NL105
            torch.cuda.cudart()  # expect: NL114
            return start, y, peak, name, count
    """,
        **CUDA_API,
    )


def test_submodules_and_class_attributes_of_torch_cuda(tmp_path):
    check(
        tmp_path,
        """
        import torch

        lo, hi = torch.cuda.Stream.priority_range()  # expect: NL103
        pool = torch.cuda.MemPool()  # expect: NL105
        torch.cuda.memory._record_memory_history()  # expect: NL105
        state = torch.cuda.random.get_rng_state()  # expect: NL108
        capturing = torch.cuda.is_current_stream_capturing()  # expect: NL104
    """,
        **CUDA_API,
    )


# ---- NL107 mixed precision ----------------------------------------------------------------------
def test_cuda_autocast_and_grad_scaler(tmp_path):
    check(
        tmp_path,
        """
        import functools
        import torch

        scaler = torch.cuda.amp.GradScaler()  # expect: NL107
        fwd = functools.partial(torch.amp.custom_fwd, device_type="cuda")  # expect: NL107

        def step(model, x):
            with torch.autocast("cuda", dtype=torch.float16):  # expect: NL107
                y = model(x)
            with torch.amp.autocast(device_type="cuda"):  # expect: NL107
                y = model(y)
            with torch.cuda.amp.autocast():  # expect: NL107
                y = model(y)
            return y
    """,
        **CUDA_API,
    )


def test_device_type_keyword_outside_autocast_is_a_device(tmp_path):
    findings = check(
        tmp_path,
        """
        from torch.distributed.device_mesh import init_device_mesh

        mesh = init_device_mesh(device_type="cuda", mesh_shape=(2, 4))  # expect: NL101
    """,
        **CUDA_API,
    )
    assert only(findings, "NL101").message.startswith("'cuda' places tensors on a CUDA device")


def test_autocast_literal_gets_a_per_backend_fix(tmp_path):
    native = scan_source(tmp_path, 'import torch\nctx = torch.autocast("cuda")\n', select=["NL107"])
    assert only(native, "NL107").fix.replacement == '"neuron"'
    xla = scan_source(
        tmp_path, 'import torch\nctx = torch.autocast("cuda")\n', select=["NL107"], sdk="2.31", target="trn1"
    )
    assert only(xla, "NL107").fix.replacement == '"xla"'


# ---- NL110 pin_memory ---------------------------------------------------------------------------
def test_pin_memory(tmp_path):
    check(
        tmp_path,
        """
        from torch.utils.data import DataLoader

        def loaders(ds, pin):
            a = DataLoader(ds, batch_size=8, pin_memory=True)  # expect: NL110
            b = DataLoader(ds, batch_size=8, pin_memory=pin)
            c = DataLoader(ds, batch_size=8, pin_memory=False)
            return a, b, c

        def to_host(batch):
            return batch.pin_memory()  # expect: NL110
    """,
        **CUDA_API,
    )


def test_pin_memory_is_found_where_its_value_is_set(tmp_path):
    """OpenRLHF's `def offload_states(..., pin_memory=True)` passes `pin_memory=pin_memory` on; dlrm
    hands `args.pin_memory` on. The finding sits where the value is set (a default, MAE's
    `pin_mem=True`, an assignment of the literal), not at every pass-through."""
    check(
        tmp_path,
        """
        from torch.utils.data import DataLoader


        class LoaderConfig:
            drop_last: bool = True


        def offload_states(model, pin_memory=True, non_blocking=True):  # expect: NL110
            return model.offload(pin_memory=pin_memory)


        def build(args, backend, ds):
            args.pin_memory = True  # expect: NL110
            train = DataLoader(ds, pin_memory=args.pin_memory)
            return train, get_data_loader(ds, pin_mem=True)  # expect: NL110
    """,
        **CUDA_API,
    )


# ---- NL111 checks keyed on CUDA -----------------------------------------------------------------
def test_cuda_checks(tmp_path):
    check(
        tmp_path,
        """
        import torch

        def pick(x, device, dev_type, param):
            if x.is_cuda:  # expect: NL111
                pass
            if x.device.type == "cuda":  # expect: NL111
                pass
            if dev_type in ("cuda", "xpu"):  # expect: NL111
                pass
            if str(device).startswith("cuda"):  # expect: NL111
                pass
            if param.type() == "torch.cuda.HalfTensor":  # expect: NL111
                pass
            if torch.version.cuda is not None:  # expect: NL111
                pass
            match dev_type:
                case "cuda":  # expect: NL111
                    pass
                case _:
                    pass
    """,
        **CUDA_API,
    )


def test_numpy_attribute_named_is_cuda_is_not_a_tensor(tmp_path):
    check(
        tmp_path,
        """
        import numpy as np

        flags = np.zeros(3).is_cuda
    """,
        **CUDA_API,
    )


# ---- NL112 integer ordinals ---------------------------------------------------------------------
def test_integer_device_ordinals(tmp_path):
    check(
        tmp_path,
        """
        import os
        import torch

        def place(model, x, args, local_rank):
            model.to(local_rank)  # expect: NL112
            x = x.to(0)  # expect: NL112
            d = torch.device(0)  # expect: NL112
            t = torch.zeros(3, device=args.gpu)  # expect: NL112
            return model, x, d, t

        def worker(i, num_gpus, num_shards):
            d = torch.device(i % num_gpus)  # expect: NL112
            shard = i % num_shards
            return d, shard

        def batch_processor(data, **kwargs):
            # CenterPoint's trainer: the ordinal under a key named for it; an environment
            # variable is a string
            device = torch.device(kwargs["local_rank"])  # expect: NL112
            other = torch.device(os.environ["LOCAL_RANK"])
            name = torch.device(kwargs["device_name"])
            return device, other, name
    """,
        **CUDA_API,
    )


def test_ordinals_that_are_not_devices_stay_quiet(tmp_path):
    check(
        tmp_path,
        """
        import numpy as np
        import torch

        def f(x, world_size, device_idx, steps):
            x = x.to(torch.float16)
            x = x.to(dtype=torch.bfloat16)
            a = np.arange(4).astype(np.int32)
            summary = torch.cuda.memory_summary(device=device_idx)  # expect: NL105
            return x[:steps], a, summary, world_size
    """,
        **CUDA_API,
    )


# ---- NL115 activation checkpointing ---------------------------------------------------------------
CHECKPOINT_CODE = """
    import functools
    import torch
    import torch.utils.checkpoint
    from torch.utils.checkpoint import checkpoint as ckpt, checkpoint_sequential

    def forward(blocks, h):
        for block in blocks:
            h = torch.utils.checkpoint.checkpoint(block, h, use_reentrant=False)  # expect: NL115
            h = ckpt(block, h)  # expect: NL115
        run = functools.partial(torch.utils.checkpoint.checkpoint, use_reentrant=False)  # expect: NL115
        return checkpoint_sequential(blocks, 2, h), run  # expect: NL115
"""


def test_activation_checkpointing_on_the_xla_backend(tmp_path):
    findings = check(tmp_path, CHECKPOINT_CODE, sdk="2.31", target="trn1", **CUDA_API)
    by_line = {f.line: f for f in findings}
    assert by_line[8].severity.value == "blocker" and by_line[8].status == "unsupported"
    assert "torch_xla.utils.checkpoint.checkpoint" in by_line[8].message
    assert "use_reentrant=True" in by_line[8].message
    # checkpoint_sequential is not documented by Neuron: unknown, not unsupported.
    assert by_line[11].severity.value == "warning" and by_line[11].status == "unknown"


def test_activation_checkpointing_on_torchneuron(tmp_path):
    findings = check(tmp_path, CHECKPOINT_CODE, sdk="2.33", target="trn2", **CUDA_API)
    assert {(f.severity.value, f.status) for f in findings} == {("info", "supported")}


def test_torch_xla_checkpoint_and_distributed_checkpoint_are_not_nl115(tmp_path):
    check(
        tmp_path,
        """
        import torch.distributed.checkpoint as dcp
        from torch_xla.utils.checkpoint import checkpoint

        def save(state, h, block):
            dcp.save(state, checkpoint_id="ckpt")
            return checkpoint(block, h, use_reentrant=True)
    """,
        **CUDA_API,
    )


def test_findings_point_at_the_triggering_token(tmp_path):
    source = (
        "import torch\n"
        "from torch.utils.data import DataLoader\n"
        "\n"
        "def run(model, ds):\n"
        "    loader = DataLoader(\n"
        "        ds,\n"
        "        pin_memory=True,\n"
        "    )\n"
        "    torch.cuda.synchronize(\n"
        "    )\n"
        "    return model.to(\n"
        '        "cuda"\n'
        "    ), loader\n"
    )
    findings = scan_source(tmp_path, source, **CUDA_API)
    assert sorted((f.rule, f.line, f.column) for f in findings) == [
        ("NL101", 12, 9),
        ("NL102", 9, 5),
        ("NL110", 7, 9),
    ]


def test_sdpa_kernel_choices_are_no_finding(tmp_path):
    # finding-conventions: SDPA backend enums are no finding; the sdpa_kernel context is generic
    check(
        tmp_path,
        """
        import torch.nn.functional as F
        from torch.nn.attention import SDPBackend, sdpa_kernel

        def attend(q, k, v):
            with sdpa_kernel([SDPBackend.FLASH_ATTENTION, SDPBackend.EFFICIENT_ATTENTION]):
                out = F.scaled_dot_product_attention(q, k, v, is_causal=True)
            with sdpa_kernel(SDPBackend.MATH):
                out = F.scaled_dot_product_attention(q, k, v)
            return out
    """,
        **CUDA_API,
    )


def test_reflection_on_torch_cuda_and_annotations_are_not_api_uses(tmp_path) -> None:
    from tests.conftest import scan_source

    source = (
        "import torch\n"
        "from unittest import mock\n"
        "\n"
        "def probe(stream: torch.cuda.Stream) -> torch.cuda.Event:\n"
        "    if hasattr(torch.cuda, 'is_bf16_supported'):\n"
        "        torch.cuda.synchronize()\n"
        "    with mock.patch.object(torch.cuda, 'is_available', return_value=False):\n"
        "        pass\n"
        "    return torch.cuda.Event()\n"
        "\n"
        "def test_x(monkeypatch):\n"
        "    monkeypatch.setattr(torch.cuda, 'device_count', lambda: 0)\n"
    )
    findings = scan_source(tmp_path, source, select=["cuda-api"])
    assert [(f.line, f.rule) for f in findings] == [(6, "NL102"), (9, "NL103")]


def test_cuda_call_behind_a_cuda_check_is_info(tmp_path):
    """Already guarded: reported as what it is (skipped on Neuron), not as a missing guard."""
    findings = check(
        tmp_path,
        """
        import torch

        def free():
            if torch.cuda.is_available():  # expect: NL106
                torch.cuda.empty_cache()  # expect: NL105
            torch.cuda.empty_cache()  # expect: NL105
            return torch.get_autocast_gpu_dtype()  # expect: NL107
    """,
        **CUDA_API,
    )
    assert [f.severity.value for f in findings if f.rule == "NL105"] == ["info", "warning"]


def test_pin_memory_in_a_cuda_cache_manager_is_not_a_device_abstraction(tmp_path):
    """`_cuda_id` and `_gpu_idxs` name one kind of device: the class is CUDA code, not an
    abstraction over several device types (docs/what-counts.md)."""
    check(
        tmp_path,
        """
        import torch


        class CachedParamMgr(torch.nn.Module):
            def _id_to_cached_cuda_id(self, ids):
                return ids

            def _find_evict_gpu_idxs(self, count):
                return count

            def reorder(self, weight):
                self.weight = weight.pin_memory()  # expect: NL110


        class DeviceHelper:
            def is_npu(self):
                return False

            def is_cuda(self):
                return True

            def pin(self, tensor):
                return tensor.pin_memory()  # ok: NL110
        """,
    )


def test_replacing_a_cuda_api_with_a_stub_queries_nothing(tmp_path):
    # A test helper that spoofs CUDA assigns lambdas over the memory API; a real query after it,
    # and a setting assigned a value, stay findings.
    check(
        tmp_path,
        """
        import torch
        import torch.cuda.memory as cuda_memory


        def spoof():
            cuda_memory.max_memory_allocated = lambda *a, **k: 0
            torch.cuda.is_available = lambda: True
            torch.backends.cudnn.benchmark = True  # expect: NL109
            return cuda_memory.max_memory_allocated()  # expect: NL105
        """,
    )


def test_device_id_parameter_whose_value_the_file_does_not_show(tmp_path):
    # open_flamingo train/train_utils.py: `device_id` comes from the caller, which may pass a device;
    # where the file shows an integer (a default, an `int` annotation, `int(...)`) it is an ordinal.
    check(
        tmp_path,
        """
        import os

        import torch


        def train_one_epoch(args, model, loader, device_id, cast_dtype):
            for images, labels in loader:
                images = images.to(device_id, dtype=cast_dtype, non_blocking=True)
                labels = labels.to(device_id)
                model(images, labels)


        def evaluate(model, batch, device_id: int):
            return model(batch.to(device_id))  # expect: NL112


        def predict(model, batch, dev_id=0):
            return model(batch.to(dev_id))  # expect: NL112


        def main(model, batch):
            device_id = int(os.environ["LOCAL_RANK"])
            return model(batch.to(device_id))  # expect: NL112


        def test(model_engine, images, local_device):
            # DeepSpeedExamples' CIFAR: `local_device` is `get_accelerator().device_name(rank)`
            return model_engine(images.to(local_device))


        def test_on(model_engine, images, local_device: int):
            return model_engine(images.to(local_device))  # expect: NL112


        def main(model_engine, data, get_accelerator):
            local_device = get_accelerator().device_name(model_engine.local_rank)
            return model_engine(data.to(local_device))


        def main_on(model_engine, data, rank):
            local_device = rank % 8
            return model_engine(data.to(local_device))  # expect: NL112
    """,
        select=["cuda-api"],
    )


def test_severity_of_device_queries_and_synchronize(tmp_path):
    """A query that raises without CUDA (`set_device`, `current_device`, `get_device_*`) and
    `torch.cuda.synchronize()` are blockers; `device_count()` (0 off CUDA) a warning; behind a CUDA
    check any of them is info."""
    from neuronlint.findings import Severity

    findings = check(
        tmp_path,
        """
        import torch


        def setup(local_rank):
            torch.cuda.set_device(local_rank)  # expect: NL106
            major, _ = torch.cuda.get_device_capability()  # expect: NL106
            count = torch.cuda.device_count()  # expect: NL106
            torch.cuda.synchronize()  # expect: NL102
            if torch.cuda.is_available():  # expect: NL106
                name = torch.cuda.get_device_name(0)  # expect: NL106
                torch.cuda.synchronize()  # expect: NL102
            hopper = local_rank.type == "cuda" and torch.cuda.get_device_capability()[0] >= 9  # expect: NL106, NL111
            return major, count, hopper
        """,
        select=["cuda-api"],
    )
    severity = {f.line: f.severity for f in findings if f.rule in ("NL102", "NL106")}
    assert severity[5] is severity[6] is severity[8] is Severity.BLOCKER
    assert severity[7] is Severity.WARNING
    assert severity[10] is severity[11] is severity[12] is Severity.INFO


def test_an_objects_own_is_cuda_attribute_and_enum_tables_of_devices(tmp_path):
    # timm's prefetcher sets `self.is_cuda` from a device test (reported there) and then branches
    # on its own attribute; torchtune's DeviceSupport enum tabulates device names and backends.
    check(
        tmp_path,
        """
        from enum import Enum

        import torch


        class DeviceSupport(Enum):
            CPU = ("cpu", "CPU", "gloo")
            CUDA = ("cuda", "GPU", "nccl")  # expect: NL201


        class PrefetchLoader:
            def __init__(self, device):
                self.is_cuda = device.type == "cuda"  # expect: NL111

            def __iter__(self, batch):
                if self.is_cuda:
                    yield batch
                if batch.is_cuda:  # expect: NL111
                    yield batch


        class Settings:
            device = "cuda"  # expect: NL101
        """,
    )


def test_fsdp_device_id_ordinals(tmp_path):
    """audiocraft's `_FSDPFixStateDict(model, device_id=local_rank)` (a subclass of FSDP) and OLMo's
    `FSDP(model, device_id=get_local_rank())`: an integer device FSDP places the model on, a CUDA
    ordinal; a device object (`device_id=device`) is not, nor Lightning's `device_id` chosen from its
    strategy's device (`root_device.index`), and `torch.cuda.current_device()` is reported as the
    CUDA query it is."""
    check(
        tmp_path,
        """
        import torch
        from torch.distributed.fsdp import FullyShardedDataParallel as FSDP


        class _FSDPFixStateDict(FSDP):
            pass


        def wrap(model, local_rank, device, root_device):
            a = _FSDPFixStateDict(model, device_id=local_rank)  # expect: NL112
            b = FSDP(model, device_id=get_local_rank())  # expect: NL112
            c = FSDP(model, device_id=device)
            d = FSDP(model, device_id=torch.cuda.current_device())  # expect: NL106
            device_id = root_device if root_device.type == "cpu" else root_device.index
            e = FSDP(model, device_id=device_id)
            return a, b, c, d, e
        """,
        select=["cuda-api"],
    )


def test_a_device_string_named_like_an_ordinal(tmp_path):
    """Janus's `cuda_device = "cuda" if torch.cuda.is_available() else "cpu"` holds a device string:
    `.to(cuda_device)` is no integer ordinal (the choice of "cuda" is reported where it is made).
    An unbound `cuda_device` still reads as one."""
    check(
        tmp_path,
        """
        import torch

        cuda_device = "cuda" if torch.cuda.is_available() else "cpu"  # expect: NL101, NL106


        def generate(ids, gpu):
            tokens = torch.zeros(4, dtype=torch.int).to(cuda_device)
            other = torch.zeros(4).to(gpu)  # expect: NL112
            return tokens, other
        """,
        select=["cuda-api"],
    )


def test_cuda_autocast_with_a_stand_in_for_old_torch(tmp_path):
    """RAFT: `try: autocast = torch.cuda.amp.autocast` / `except: class autocast: ...` (a dummy for
    PyTorch < 1.6). Every torch that has the API takes the `try` path, so each `with autocast(...)`
    is its use; a name a plain `if` may bind to either is not."""
    check(
        tmp_path,
        """
        import torch
        from contextlib import nullcontext

        try:
            autocast = torch.cuda.amp.autocast  # expect: NL107
        except:
            class autocast:
                def __init__(self, enabled):
                    pass

                def __enter__(self):
                    pass

                def __exit__(self, *args):
                    pass


        def forward(model, x, mixed_precision, use_amp):
            with autocast(enabled=mixed_precision):  # expect: NL107
                y = model(x)
            ctx = nullcontext
            if use_amp:
                ctx = torch.cuda.amp.autocast  # expect: NL107
            with ctx():
                return model(y)
        """,
        **CUDA_API,
    )


def test_a_function_sees_a_module_import_further_down(tmp_path):
    """AutoGPTQ's setup.py defines `detect_local_sm_architectures()` above `if BUILD_CUDA_EXT:` /
    `import torch`: the function reads `torch` when it runs, so its device probes are torch's. At
    the module level a name is only what the lines above bound."""
    check(
        tmp_path,
        """
        import os

        def detect_local_sm_architectures():
            arch_list = []
            for i in range(torch.cuda.device_count()):  # expect: NL106
                arch_list.append(torch.cuda.get_device_capability(i))  # expect: NL106
            return arch_list

        BUILD_CUDA_EXT = os.environ.get("BUILD_CUDA_EXT", "1") == "1"
        if BUILD_CUDA_EXT:
            try:
                import torch
            except ImportError:
                torch = None
        """,
        **CUDA_API,
    )


def test_a_device_map_placing_modules_on_gpu_ordinals(tmp_path):
    """ChatGLM-6B's multi-GPU loader maps modules to GPU ordinals one by one: each integer is a CUDA
    device ordinal (one finding per line); a map to "cpu" or "disk" is not."""
    check(
        tmp_path,
        """
        def auto_configure_device_map(num_gpus):
            device_map = {'transformer.word_embeddings': 0,  # expect: NL112
                          'transformer.final_layernorm': 0, 'lm_head': 0}  # expect: NL112
            offload_map = {"model.layers": "cpu", "lm_head": "disk"}
            sizes = {"lm_head": 0}
            return device_map, offload_map, sizes
        """,
        **CUDA_API,
    )
