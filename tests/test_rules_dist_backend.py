"""dist-backend rules (NL201-NL205) on real scans of small snippets, both ways."""

from __future__ import annotations

from tests.annotated_source import check, only

DIST = {"select": ["dist-backend"]}


def test_nccl_as_backend_default_and_config(tmp_path):
    check(
        tmp_path,
        """
        import torch.distributed as dist
        from dataclasses import dataclass

        @dataclass
        class DistConfig:
            backend: str = "nccl"  # expect: NL201

        def init(cfg, ranks):
            dist.init_process_group(backend="nccl")  # expect: NL201
            dist.init_process_group("nccl", init_method="env://")  # expect: NL201
            sub = dist.new_group(ranks, backend="nccl")  # expect: NL201
            return sub, {"backend": "nccl", "timeout": 600}  # expect: NL201
    """,
        **DIST,
    )


def test_nccl_enum_member(tmp_path):
    check(
        tmp_path,
        """
        import torch.distributed as dist

        dist.init_process_group(backend=dist.Backend.NCCL)  # expect: NL201
    """,
        **DIST,
    )


def test_comparisons_and_fallbacks_are_warnings(tmp_path):
    findings = check(
        tmp_path,
        """
        import torch
        import torch.distributed as dist

        backend = "nccl" if torch.cuda.is_available() else "gloo"  # expect: NL201
        if dist.get_backend() == "nccl":  # expect: NL201
            pass
        if backend in ("nccl", "ucc"):  # expect: NL201
            pass
    """,
        **DIST,
    )
    assert {f.severity.value for f in findings} == {"warning"}
    assert "gloo" in next(f for f in findings if f.line == 4).message


def test_nccl_names_that_select_nothing_stay_quiet(tmp_path):
    check(
        tmp_path,
        '''
        from typing import Literal, Optional
        import torch.distributed as dist

        BACKENDS = {"nccl": "NVIDIA GPUs", "gloo": "CPUs"}
        CommBackend = Literal["nccl", "gloo"]

        def add_args(parser):
            parser.add_argument("--backend", choices=["nccl", "gloo", "mpi"])

        def comm(backend: Optional[Literal["nccl", "ucc"]] = None):
            """Use 'nccl' on GPUs."""
            print("falling back from nccl to gloo")
            return hasattr(dist.Backend, "nccl")
    ''',
        **DIST,
    )


def test_nccl_fix_on_the_xla_backend(tmp_path):
    findings = check(
        tmp_path,
        """
        import torch.distributed as dist

        dist.init_process_group(backend="nccl")  # expect: NL201
    """,
        sdk="2.31",
        target="trn1",
        **DIST,
    )
    finding = only(findings, "NL201")
    assert finding.fix is not None and finding.fix.replacement == '"xla"'
    assert "torch_xla.distributed.xla_backend" in finding.message


def test_ddp_device_ids(tmp_path):
    findings = check(
        tmp_path,
        """
        import torch.nn as nn
        from torch.nn.parallel import DistributedDataParallel as DDP

        def wrap(model, local_rank):
            model = DDP(model, device_ids=[local_rank], output_device=local_rank)  # expect: NL202, NL205
            return model
    """,
        **DIST,
    )
    # One finding per rule and line (the first occurrence): the line is what the user edits.
    assert sorted(f.message.split("`")[1] for f in findings if f.rule == "NL202") == [
        "device_ids=[local_rank]",
    ]


def test_ddp_output_device_on_its_own_line_is_not_a_second_finding(tmp_path):
    """SlowFast's `DistributedDataParallel(module=model, device_ids=[cur_device],
    output_device=cur_device)` over several lines: one place to edit (the fix removes both), so one
    finding, at `device_ids=`; `output_device=` alone is the finding."""
    check(
        tmp_path,
        """
        import torch


        def wrap(model, cur_device):
            model = torch.nn.parallel.DistributedDataParallel(  # expect: NL205
                module=model,
                device_ids=[cur_device],  # expect: NL202
                output_device=cur_device,
            )
            return torch.nn.parallel.DistributedDataParallel(model, output_device=cur_device)  # expect: NL202, NL205
    """,
        **DIST,
    )


def test_ddp_without_device_ids_and_projects_own_ddp(tmp_path):
    check(
        tmp_path,
        """
        import torch
        from torch.nn.parallel import DistributedDataParallel

        class MegatronStyleDDP:
            def __init__(self, config, module, device_ids=None):
                self.module = module

        def wrap(model):
            a = DistributedDataParallel(model)  # expect: NL205
            b = MegatronStyleDDP(None, model)
            c = DistributedDataParallel(model, device_ids=None)  # expect: NL205
            return a, b, c
    """,
        **DIST,
    )


def test_data_parallel(tmp_path):
    check(
        tmp_path,
        """
        import torch
        from torch import nn

        model = nn.DataParallel(nn.Linear(4, 4))  # expect: NL203
        other = torch.nn.parallel.DataParallel(nn.Linear(4, 4))  # expect: NL203
    """,
        **DIST,
    )


def test_an_isinstance_check_against_data_parallel_wraps_nothing(tmp_path):
    # A trainer that refuses single-process multi-device models checks the wrapper's type; the
    # check builds no DataParallel (conventions: an isinstance check is not a use). A CUDA tensor
    # type in an isinstance test does test for CUDA.
    check(
        tmp_path,
        """
        import torch
        from torch import nn
        from torch.nn.parallel import DataParallel, DistributedDataParallel


        def check(model, t):
            assert not isinstance(model, DataParallel), "one device per process"
            if isinstance(model, (nn.DataParallel, DistributedDataParallel)):
                model = model.module
            on_gpu = isinstance(t, torch.cuda.FloatTensor)  # expect: NL101
            return DataParallel(model), on_gpu  # expect: NL203
    """,
    )


def test_nccl_and_cuda_environment(tmp_path):
    check(
        tmp_path,
        """
        import os
        import subprocess

        os.environ["NCCL_DEBUG"] = "INFO"  # expect: NL204
        os.environ.setdefault("TORCH_NCCL_ASYNC_ERROR_HANDLING", "1")  # expect: NL204
        os.environ["PYTORCH_CUDA_ALLOC_CONF"] = "expandable_segments:True"  # expect: NL204
        visible = os.environ.get("CUDA_VISIBLE_DEVICES", "")  # expect: NL204
        subprocess.run(["python", "worker.py"], env={"CUDA_VISIBLE_DEVICES": "0,1"})  # expect: NL204
        os.environ["NEURON_RT_VISIBLE_CORES"] = "0-1"
    """,
        **DIST,
    )


def test_fsdp_wrappers(tmp_path):
    findings = check(
        tmp_path,
        """
        from torch.distributed.fsdp import FullyShardedDataParallel as FSDP, fully_shard

        def shard(model, layers):
            for layer in layers:
                fully_shard(layer)  # expect: NL205
            return FSDP(model)  # expect: NL205
    """,
        **DIST,
    )
    assert {f.severity.value for f in findings} == {"info"}
    xla = check(
        tmp_path,
        """
        from torch.distributed.fsdp import FullyShardedDataParallel as FSDP

        def shard(model):
            return FSDP(model)  # expect: NL205
    """,
        sdk="2.29",
        target="trn1",
        **DIST,
    )
    assert only(xla, "NL205").severity.value == "warning" and only(xla, "NL205").status == "unsupported"


def test_environment_variables_are_opt_in(tmp_path):
    """NCCL/CUDA (NL204) and Neuron (NL907) variables are reported only when a run selects them."""
    source = """
        import os

        os.environ["NCCL_DEBUG"] = "INFO"
        os.environ["NEURON_CC_FLAGS"] = "--model-type=transformer"
    """
    check(tmp_path, source, select=[])
    check(
        tmp_path,
        source.replace('"INFO"', '"INFO"  # expect: NL204').replace('former"', 'former"  # expect: NL907'),
        select=[],
        extend_select=["NL204", "NL907"],
    )


def test_torch_cuda_nccl_is_an_nccl_query_not_an_environment_setting(tmp_path):
    check(
        tmp_path,
        """
        import torch

        comm_id = torch.cuda.nccl.unique_id()  # expect: NL206
    """,
        select=[],
    )


def test_is_nccl_available_is_a_blocker_unless_a_cuda_check_guards_it(tmp_path):
    """The standard Linux wheel under torch-neuronx is built with NCCL: alone, the query answers yes
    on a Neuron host; right of a CUDA check, the NCCL path is skipped there."""
    found = check(
        tmp_path,
        """
        import torch
        import torch.distributed as dist

        def pick():
            if dist.is_nccl_available():  # expect: NL206
                return dist.Backend.NCCL  # expect: NL201
            return None

        def guarded():
            if torch.cuda.is_available() and dist.is_nccl_available():  # expect: NL106 NL206
                return 1
            return None
    """,
    )
    severities = {f.line: f.severity for f in found if f.rule == "NL206"}
    assert severities == {5: "blocker", 10: "warning"}


def test_the_nccl_prefix_searched_in_environment_variable_names_is_no_backend(tmp_path):
    """DeepSpeed's launcher logs every `NCCL_*` variable: `"NCCL" in k` looks for the prefix in a
    name. A backend compared by substring (`"nccl" in dist.get_backend()`) is still NL201."""
    check(
        tmp_path,
        """
        import os
        import torch.distributed as dist


        def log_environment(logger):
            for k in os.environ:
                if "NCCL" in k:
                    logger.info(k)
            if "nccl" in dist.get_backend():  # expect: NL201
                logger.info("collectives on GPUs")
        """,
        **DIST,
    )


def test_mmcv_parallel_wrappers_are_torchs(tmp_path):
    """MMCV 1.x's `MMDataParallel` subclasses `torch.nn.DataParallel` (NL203) and
    `MMDistributedDataParallel` subclasses DDP: its `device_ids=[torch.cuda.current_device()]` pins
    CUDA ordinals as DDP's does (NL202). BEVFormer's and Vim's training APIs."""
    check(
        tmp_path,
        """
        import torch
        from mmcv.parallel import MMDataParallel, MMDistributedDataParallel


        def wrap(model, cfg, distributed):
            if distributed:
                model = MMDistributedDataParallel(  # expect: NL205
                    model,
                    device_ids=[torch.cuda.current_device()],  # expect: NL202
                    broadcast_buffers=False,
                )
            else:
                model = MMDataParallel(model, device_ids=cfg.gpu_ids)  # expect: NL203
            return model
        """,
        **DIST,
    )


def test_mmcv_parallel_wrappers_imported_from_their_own_modules(tmp_path):
    """mmpretrain's benchmark scripts import the same wrappers from the modules that define them
    (`mmcv.parallel.data_parallel`, `mmcv.parallel.distributed`)."""
    check(
        tmp_path,
        """
        import torch
        from mmcv.parallel.data_parallel import MMDataParallel
        from mmcv.parallel.distributed import MMDistributedDataParallel


        def wrap(model, args, distributed):
            if not distributed:
                model = MMDataParallel(model, device_ids=[args.gpu_id])  # expect: NL203
            else:
                model = MMDistributedDataParallel(  # expect: NL205
                    model,
                    device_ids=[torch.cuda.current_device()],  # expect: NL202
                )
            return model
        """,
        **DIST,
    )
