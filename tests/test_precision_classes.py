"""Constructs that name CUDA without using it, and host values only their construction shows
(docs/what-counts.md: implementation names and message text, a class's own `cpu()` method, one
random number, dtype enums, fallbacks and kept dtypes). Each snippet is parsed and scanned for real;
`# expect:` lines must fire, `# ok:` lines must not."""

from __future__ import annotations

from tests.annotated_source import check


def test_implementation_names_are_not_devices(tmp_path):
    check(
        tmp_path,
        """
        import torch


        def bias_act(x, b=None, act="linear", impl="cuda"):
            assert isinstance(x, torch.Tensor)
            assert impl in ["ref", "cuda"]  # ok: NL111
            if impl == "cuda" and x.device.type == "cuda":  # expect: NL111
                return _bias_act_cuda(x, b)
            return x


        def upsample2d(x, f, up=2, kernel_impl="cuda"):
            return bias_act(x, impl="cuda")


        def choose(x):
            impl = "cuda"
            device = "cuda"  # expect: NL101
            backend = "cuda" if torch.cuda.is_available() else "cpu"  # expect: NL101, NL106
            return impl, device, backend, x.to(device="cuda")  # expect: NL101
        """,
    )


def test_message_text_is_not_a_device_or_backend(tmp_path):
    check(
        tmp_path,
        """
        import logging
        import warnings

        import torch

        logger = logging.getLogger(__name__)


        class Body:
            def __init__(self, model):
                self.model = model
                if torch.cuda.is_available():  # expect: NL106
                    self.model = self.model.cuda()  # expect: NL101
                    print("cuda")
                logger.info("cuda")
                logging.warning("nccl")
                warnings.warn("xla")
                self.device = "cuda"  # expect: NL101

            def check(self, name):
                if name not in ("cpu", "cuda"):  # expect: NL111
                    raise ValueError("cuda")
                torch.distributed.init_process_group("nccl")  # expect: NL201
        """,
        select=["NL1", "NL2", "NL9"],
    )


def test_a_classes_own_cpu_method_is_not_a_host_copy(tmp_path):
    check(
        tmp_path,
        """
        import torch


        class Meshes:
            def __init__(self, verts):
                self.verts = verts

            def to(self, device):
                return Meshes(self.verts.to(device))

            def cpu(self):
                return self.to("cpu")  # ok: NL703

            def detach_cpu(self):
                return self.to("cpu")  # expect: NL703


        class Grid:
            def cpu(self):
                return Grid(self.data.cpu())  # ok: NL703


        def evaluate(meshes, loss):
            host = meshes.cpu()  # expect: NL703
            return host, loss.cpu()  # expect: NL703
        """,
    )


def test_one_random_number_is_a_host_number(tmp_path):
    check(
        tmp_path,
        """
        import torch


        def train(model, batches, n, signal_len):
            for x in batches:
                ratio = torch.rand(1).item() * 0.5  # ok: NL701
                idx = torch.randint(n, (1,)).item()  # ok: NL701
                start = torch.randint(
                    0,
                    1 + max(0, x.shape[1] - signal_len),
                    (1,),
                ).item()  # ok: NL701
                flag = torch.randn(()).item()  # ok: NL701
                width = torch.randint(1, signal_len, (1,))[0]
                window = x[:, :width]  # expect: NL604
                noise = torch.randn(4, 4)
                level = noise.mean().item()  # expect: NL701
                on_device = torch.rand(1, device=x.device).item()  # expect: NL701
                seeded = torch.randint(n, (1,), generator=model.gen).item()  # expect: NL701
                loss = model(x[:, start : start + signal_len])  # expect: NL604
                print(loss.item(), ratio, idx, flag, level, on_device, seeded, window)  # expect: NL701
        """,
    )


def test_dtype_enums_fallbacks_and_kept_dtypes(tmp_path):
    check(
        tmp_path,
        """
        from enum import Enum

        import torch

        _QUANT_DTYPES = {
            torch.float8_e4m3fn,
            getattr(torch, "float8_e5m2", torch.float8_e4m3fn),  # ok: NL505
            torch.uint8,
            torch.int8,
        }


        class TorchAOQuantDType(Enum):
            int4 = torch.int4
            int8 = torch.int8
            float8_e4m3fn = torch.float8_e4m3fn  # ok: NL505
            nvfp4 = "nvfp4"


        class Fp8Format(Enum):
            e4m3 = torch.float8_e4m3fn  # expect: NL505
            e5m2 = torch.float8_e5m2


        class Precision:
            wide = torch.float64  # expect: NL501


        def precompute(x, dtype):
            internal = torch.float64 if dtype == torch.float64 else torch.float32  # ok: NL501
            kept = torch.float64 if x.dtype is torch.float64 else torch.float32  # ok: NL501
            chosen = torch.float64 if x.is_floating_point() else torch.float32  # expect: NL501
            fp8 = x.to(torch.float8_e4m3fn)  # expect: NL505
            return internal, kept, chosen, fp8, _QUANT_DTYPES
        """,
        select=["NL5"],
    )
