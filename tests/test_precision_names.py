"""Names that are not what they spell (docs/what-counts.md): `'cuda'` as the key of a saved RNG state,
`SDPBackend` members used as dict keys or compared, a torch API kept in a name that may hold
something else, and how an optional import is guarded (the message says `try` or `if`). Each snippet
is parsed and scanned for real; `# expect:` lines must fire, and nothing else may."""

from __future__ import annotations

from tests.annotated_source import check, only


def test_cuda_as_the_key_of_a_saved_rng_state_is_not_a_device(tmp_path):
    check(
        tmp_path,
        """
        import random

        import numpy as np
        import torch


        def is_rng_key(key, value):
            starts_with_rng = key.startswith("rng")
            ends_with_expected = key.endswith(("cuda", "torch", "python", "numpy"))
            return starts_with_rng and ends_with_expected and isinstance(value, tuple)


        def restore_rng_state(rng_state_dict):
            torch.set_rng_state(rng_state_dict["torch"])
            random.setstate(rng_state_dict["python"])
            np.random.set_state(rng_state_dict["numpy"])
            has_cuda_rng_state = "cuda" in rng_state_dict
            if "cuda" not in rng_state_dict.keys():
                return has_cuda_rng_state
            return None


        def compare_states(rank_state1, rank_state1_keys):
            if "cuda" in rank_state1_keys:
                return rank_state1["cuda"]
            return None


        def where(device, args):
            on_gpu = "cuda" in str(device)  # expect: NL111
            named = "cuda" in args.device  # expect: NL111
            listed = device in ("cuda", "cpu")  # expect: NL111
            prefix = args.device.startswith(("cuda", "xpu"))  # expect: NL111
            return on_gpu, named, listed, prefix
        """,
    )


def test_sdp_backend_members_alone_choose_no_kernel(tmp_path):
    check(
        tmp_path,
        """
        import torch.nn.functional as F
        from torch.backends.cuda import SDPBackend, sdp_kernel  # expect: NL109
        from torch.nn.attention import SDPBackend as Backend
        from torch.nn.attention import sdpa_kernel

        BACKEND_MAP = {
            SDPBackend.MATH: {"enable_math": True, "enable_flash": False},
            SDPBackend.FLASH_ATTENTION: {"enable_math": False, "enable_flash": True},
            SDPBackend.EFFICIENT_ATTENTION: {"enable_math": False, "enable_mem_efficient": True},
        }
        PRIORITY = {Backend.FLASH_ATTENTION: 0, Backend.MATH: 1}


        def attention(q, k, v, backend=SDPBackend.MATH):
            if backend == Backend.FLASH_ATTENTION or backend in (Backend.CUDNN_ATTENTION,):
                q = q.contiguous()
            with sdp_kernel(**BACKEND_MAP[backend]):  # expect: NL109
                return F.scaled_dot_product_attention(q, k, v)


        def flash_only(q, k, v):
            with sdpa_kernel(Backend.FLASH_ATTENTION):
                return F.scaled_dot_product_attention(q, k, v)


        def by_old_path(q, k, v):
            with sdpa_kernel(SDPBackend.EFFICIENT_ATTENTION):
                return F.scaled_dot_product_attention(q, k, v)
        """,
    )


def test_a_torch_api_in_a_name_that_may_hold_something_else_is_reported_where_assigned(tmp_path):
    check(
        tmp_path,
        """
        from contextlib import suppress

        import torch


        def validate(model, loader, amp_autocast=suppress):
            for images in loader:
                with amp_autocast():
                    model(images)


        def main(model, loader, use_amp):
            amp_autocast = suppress
            if use_amp == "native":
                amp_autocast = torch.cuda.amp.autocast  # expect: NL107
            validate(model, loader, amp_autocast=amp_autocast)
            with amp_autocast():
                return model(loader)


        def timed(model, x):
            sync = torch.cuda.synchronize  # expect: NL102
            sync()  # expect: NL102
            return model(x)
        """,
    )


def test_a_flag_guarded_import_is_not_said_to_sit_in_try(tmp_path):
    findings = check(
        tmp_path,
        """
        try:
            from flash_attn import flash_attn_func  # expect: NL401
        except ImportError:
            flash_attn_func = None


        def build(model, args):
            if args.use_liger:
                from liger_kernel.transformers import apply_liger_kernel_to_llama  # expect: NL401

                apply_liger_kernel_to_llama(model)  # expect: NL402
            return model


        def attend(q, k, v):
            return flash_attn_func(q, k, v)  # expect: NL402
        """,
    )
    by_line = {f.line: f for f in findings if f.rule == "NL401"}
    assert "try/except ImportError" in by_line[2].message
    assert by_line[2].severity.value == "warning"
    flagged = by_line[9]
    assert flagged.severity.value == "warning"
    assert "under an `if`" in flagged.message and "try/except" not in flagged.message
    assert only([f for f in findings if f.line == 16], "NL402").severity.value == "warning"


def test_flash_attn_padding_utilities_are_info_at_their_call_sites(tmp_path):
    findings = check(
        tmp_path,
        """
        from flash_attn.bert_padding import pad_input, unpad_input  # expect: NL401
        from flash_attn.flash_attn_interface import flash_attn_varlen_qkvpacked_func  # expect: NL401


        def attend(qkv, mask):
            x, indices, cu_seqlens, max_s, _ = unpad_input(qkv, mask)  # expect: NL402 NL601
            out = flash_attn_varlen_qkvpacked_func(x, cu_seqlens, max_s, 0.0)  # expect: NL402
            return pad_input(out, indices, qkv.shape[0], qkv.shape[1])  # expect: NL402
        """,
    )
    calls = {f.line: f for f in findings if f.rule == "NL402"}
    assert calls[6].severity.value == "info" and calls[8].severity.value == "info"
    assert "pure-PyTorch utilities" in calls[6].message
    assert calls[7].severity.value == "blocker"
    imports = [f for f in findings if f.rule == "NL401"]
    assert all(f.severity.value != "info" for f in imports)  # importing still needs the library
