"""dynamic-shape rules (NL601-NL604): positive and negative cases."""

from __future__ import annotations

from neuronlint.findings import Severity
from tests import mirrors
from tests.annotated_source import check, only
from tests.conftest import scan_paths


# ---- NL601 data-dependent output shapes -------------------------------------------------------
def test_data_dependent_ops(tmp_path):
    check(
        tmp_path,
        """
        import torch


        def select_tokens(scores, mask, ids):
            idx = torch.nonzero(mask)  # expect: NL601
            rows = mask.nonzero(as_tuple=True)  # expect: NL601
            where_idx = torch.where(mask)  # expect: NL601
            picked = torch.masked_select(scores, mask)  # expect: NL601
            also = scores.masked_select(mask)  # expect: NL601
            vocab = torch.unique(ids)  # expect: NL601
            runs = ids.unique_consecutive()  # expect: NL601
            counts = torch.bincount(ids)  # expect: NL601
            return idx, rows, where_idx, picked, also, vocab, runs, counts
        """,
    )


def test_static_shape_alternatives_are_clean(tmp_path):
    check(
        tmp_path,
        """
        import torch


        def select_tokens(scores, mask):
            kept = torch.where(mask, scores, torch.zeros_like(scores))
            filled = scores.masked_fill(~mask, float("-inf"))
            top = torch.topk(scores, k=4, dim=-1)
            return kept, filled, top
        """,
    )


def test_numpy_unique_and_nonzero_are_host_side(tmp_path):
    check(
        tmp_path,
        """
        import numpy as np
        import pandas as pd


        def vocabulary(tokens, path):
            ids = np.unique(tokens)
            where = np.nonzero(tokens > 0)
            frame = pd.read_csv(path)
            speakers = frame["speaker"].unique()
            return ids, where, speakers
        """,
    )


def test_repeat_interleave_only_with_tensor_repeats(tmp_path):
    check(
        tmp_path,
        """
        import torch


        def expand(x, kv, lengths, durations, n_rep, cfg):
            heads = kv.repeat_interleave(n_rep, dim=2)
            pairs = torch.repeat_interleave(x, 2, dim=-1)
            cloned = x.repeat_interleave(cfg.clone_batch, 0)
            grouped = kv.repeat_interleave(cfg.heads // cfg.groups, dim=1)
            tokens = torch.repeat_interleave(x, lengths, dim=0)  # expect: NL601
            frames = x.repeat_interleave(durations.view(-1), dim=1)  # expect: NL601
            owners = torch.repeat_interleave(lengths)  # expect: NL601
            bounded = torch.repeat_interleave(x, lengths, dim=0, output_size=512)
            # A shape is a Python int, fixed for a given input shape (sam2's mask decoder spelling).
            per_mask = torch.repeat_interleave(x, kv.shape[0], dim=0)
            per_head = x.repeat_interleave(kv.size(1), dim=1)
            picked = torch.repeat_interleave(x, lengths[0], dim=0)  # expect: NL601
            return heads, pairs, cloned, grouped, tokens, frames, owners, bounded, per_mask, per_head, picked
        """,
    )


# ---- NL602 boolean-mask indexing --------------------------------------------------------------
def test_boolean_mask_reads_and_writes(tmp_path):
    findings = check(
        tmp_path,
        """
        import torch


        def masked_loss(losses, targets, padding_mask, pad):
            valid = targets != pad
            loss = losses[valid].mean()  # expect: NL602
            kept = losses[~padding_mask]  # expect: NL602
            both = losses[(targets > 0) & (targets < 100)]  # expect: NL602
            positive = losses[losses > 0]  # expect: NL602
            as_bool = losses[padding_mask.bool()]  # expect: NL602
            losses[targets == pad] = 0.0  # expect: NL602
            return loss, kept, both, positive, as_bool
        """,
    )
    write = [f for f in findings if f.line == 11]
    assert len(write) == 1 and write[0].severity is Severity.INFO
    reads = [f for f in findings if f.line != 11]
    assert all(f.severity is Severity.WARNING for f in reads)


def test_masks_among_several_indices(tmp_path):
    """A mask in one dimension of several is still a mask (yolov7's `targets[targets[:, 0] == i, 1:]`,
    GPTQ's dead columns); beside other indices a name counts only when it is bound to a mask, so an
    integer gather such as `x[batch_index, last_valid]` is not one."""
    findings = check(
        tmp_path,
        """
        import torch


        def split(targets, device, nb, H, W, positions, scores):
            targets = targets.to(device)
            labels = targets[targets[:, 0] == 1, 1:]  # expect: NL602
            per_image = [targets[targets[:, 0] == i, 1:] for i in range(nb)]  # expect: NL602
            dead = torch.diag(H) == 0
            H[dead, dead] = 1  # expect: NL602
            W[:, dead] = 0  # expect: NL602
            last_valid = (scores * positions).argmax(dim=1)
            batch_index = torch.arange(scores.shape[0], device=device)
            picked = scores[batch_index, last_valid]
            return labels, per_image, picked
        """,
    )
    assert {f.severity for f in findings if f.line in (6, 7)} == {Severity.WARNING}
    assert {f.severity for f in findings if f.line in (9, 10)} == {Severity.INFO}


def test_masks_in_a_module_that_imports_numpy_and_no_tensor_package(tmp_path):
    check(
        tmp_path,
        """
        import numpy


        class StatServer:
            def segments(self, mod_id):
                return self.segset[self.modelset == mod_id]

            def rows(self, mod_id):
                return self.stat0[self.modelset == mod_id, :]
        """,
    )


def test_index_by_position_is_not_a_mask(tmp_path):
    check(
        tmp_path,
        """
        import torch


        def gather(x, keep, mask_idx, mapping, key):
            a = x[keep]
            b = x[mask_idx]
            c = x[0]
            d = x[:, 1:]
            e = mapping[key]
            f = ("off", "on")[key == "on"]
            g = x[torch.arange(4)]
            return a, b, c, d, e, f, g
        """,
    )


def test_numpy_masks_are_host_side(tmp_path):
    check(
        tmp_path,
        """
        import numpy as np


        def clip(sizes, max_len):
            sizes = np.asarray(sizes)
            return sizes[sizes <= max_len]
        """,
    )


# ---- NL603 control flow on tensor values ------------------------------------------------------
def test_branches_on_tensor_values(tmp_path):
    check(
        tmp_path,
        """
        import torch


        def step(loss, mask, x: torch.Tensor, grad):
            if loss.item() > 10.0:  # expect: NL701, NL603
                loss = loss * 0.1
            if mask.any():  # expect: NL603
                loss = loss + 1
            while not torch.all(mask):  # expect: NL603
                mask = mask | True
            if torch.isnan(grad).any() or torch.isinf(grad).any():  # expect: NL603
                return None
            if x > 0:  # expect: NL603
                x = -x
            if int(x.sum()) == 0:  # expect: NL603, NL705
                return x
            return loss
        """,
    )


def test_branches_on_shapes_and_flags_are_static(tmp_path):
    check(
        tmp_path,
        """
        import math
        import torch


        def step(self, x: torch.Tensor, mask=None, training=True):
            if x.shape[0] > 1 and x.dim() == 3:
                x = x.squeeze(0)
            if len(x) > 0 and isinstance(x, torch.Tensor) and x.size(-1) == 4:
                x = x * 2
            if mask is not None and x is not None:
                x = x.masked_fill(mask, 0.0)
            if self.training and training:
                x = x * 0.5
            if math.isnan(self.scale) or x.requires_grad:
                pass
            if self.cfg.max_len > 128 and torch.is_grad_enabled():
                pass
            return x
        """,
    )


def test_assert_on_tensor_values_is_a_warning_that_says_it_is_a_check(tmp_path):
    finding = only(
        check(
            tmp_path,
            """
            def forward(self, x, lengths):
                assert (lengths > 0).all()  # expect: NL603
                assert x.dim() == 3
                return x
            """,
        ),
        "NL603",
    )
    assert finding.severity is Severity.WARNING
    assert "python -O" in finding.message


def test_numpy_and_config_values_in_branches(tmp_path):
    check(
        tmp_path,
        """
        import numpy as np


        def report(scores, args):
            arr = np.asarray(scores)
            if arr.max() > 1 or np.isnan(arr).any():
                arr = arr / arr.max()
            if args.sum:
                pass
            return arr
        """,
    )


# ---- NL604 slice bounds from tensor values ----------------------------------------------------
def test_slice_bounds_from_tensor_values(tmp_path):
    check(
        tmp_path,
        """
        def trim(hidden, lengths, tokens):
            a = hidden[:, : lengths.max()]  # expect: NL604
            b = tokens[: lengths.sum().item()]  # expect: NL604, NL701
            max_len = int(lengths.max())  # expect: NL705
            c = hidden[:, :max_len]  # expect: NL604
            n = lengths[0].item()  # expect: NL701
            d = tokens[n + 1 :]  # expect: NL604
            return a, b, c, d
        """,
    )


def test_static_slice_bounds(tmp_path):
    check(
        tmp_path,
        """
        import os


        def trim(hidden, tokens, cfg):
            width = int(os.environ.get("WIDTH", "8"))
            limit = int(cfg.get("limit"))
            a = hidden[:, : cfg.max_len]
            b = tokens[: len(tokens) - 1]
            c = hidden[:, :width]
            d = tokens[1:-1]
            e = tokens[:limit]
            return a, b, c, d, e
        """,
    )


def test_host_side_data_code_is_not_reported(tmp_path):
    check(
        tmp_path,
        """
        import torch


        class PairDataset(torch.utils.data.Dataset):
            def __getitem__(self, i):
                src = self.src[i]
                if (src == self.eos).any():
                    src = src[src != self.eos]
                return src[: src.ne(self.pad).sum()]


        def collater(samples):
            ids = torch.cat([s["id"] for s in samples])
            return ids[ids >= 0].unique()
        """,
    )


def test_type_unions_in_subscripts_are_not_masks(tmp_path):
    check(
        tmp_path,
        """
        from typing import Optional

        import torch

        Rollouts = list[TokenRollout | Rollout]


        def gather(groups: dict[str, list[Rollout | None]], mesh: Optional[torch.Tensor | str] = None):
            results: list[None | list[str]] = [None] * len(groups)
            pairs = dict[str, "Result | None"]
            return results, pairs
        """,
    )


def test_tokenizer_outputs_are_host_tensors(tmp_path):
    check(
        tmp_path,
        """
        import torch


        def encode(self, prompt):
            text_inputs = self.tokenizer(prompt, padding="max_length", return_tensors="pt")
            text_input_ids = text_inputs.input_ids
            untruncated_ids = self.tokenizer(prompt, padding="longest", return_tensors="pt").input_ids
            if untruncated_ids.shape[-1] >= text_input_ids.shape[-1] and not torch.equal(text_input_ids, untruncated_ids):
                removed = self.tokenizer.batch_decode(untruncated_ids[:, 77:-1])
            return text_input_ids
        """,
    )


def test_input_pipeline_modules_run_on_the_host(tmp_path):
    source = """
        import torch


        def build_masks(data, eod_token):
            loss_mask = torch.ones(data.shape, device=data.device)
            loss_mask[data == eod_token] = 0.0
            eod_index = torch.nonzero(data == eod_token)
            return loss_mask, eod_index
        """
    check(tmp_path, source, name="pkg/datasets/gpt_dataset.py")
    check(tmp_path, source, name="pkg/data/utils.py")
    check(
        tmp_path,
        source.replace(
            "loss_mask[data == eod_token] = 0.0", "loss_mask[data == eod_token] = 0.0  # expect: NL602"
        ).replace(
            "eod_index = torch.nonzero(data == eod_token)",
            "eod_index = torch.nonzero(data == eod_token)  # expect: NL601",
        ),
        name="pkg/models/masks.py",
    )


def test_slicing_python_lists_with_a_read_value_is_not_a_tensor_shape(tmp_path):
    check(
        tmp_path,
        """
        def drop_layers(self, choice, scores, cfg):
            n = choice.item()  # expect: NL701
            dropped = self.config.layer_ranking_list[:n]
            names = cfg.names[:n]
            ordered = sorted(scores.tolist())[:n]  # expect: NL702
            kept = scores[:n]  # expect: NL604
            return dropped, names, ordered, kept
        """,
    )


def test_numpy_annotated_parameters_are_host_values(tmp_path):
    check(
        tmp_path,
        """
        import numpy as np


        def seg2bbox(seg_mask: np.ndarray, scores: "np.ndarray"):
            rows, cols = seg_mask.nonzero()
            picked = seg_mask[seg_mask > 0]
            return rows.min(), cols.max(), picked
        """,
    )


def test_counts_named_as_such_are_python_ints(tmp_path):
    check(
        tmp_path,
        """
        def expand(query, key, value, seq_lens):
            num_repeats = value.shape[2] // query.shape[2]
            n_rep = 4
            query = query.repeat_interleave(num_repeats, dim=2)
            key = key.repeat_interleave(n_rep, dim=2)
            tokens = value.repeat_interleave(seq_lens, dim=0)  # expect: NL601
            return query, key, tokens
        """,
    )


def test_conditional_expressions_and_comprehension_filters(tmp_path):
    check(
        tmp_path,
        """
        def encode(x, encoder_padding_mask, chunks, training):
            padding = encoder_padding_mask if encoder_padding_mask.any() else None  # expect: NL603
            scale = 0.5 if training else 1.0
            kept = [c for c in chunks if c.abs().sum() > 0]  # expect: NL603
            sized = [c for c in chunks if c.numel() > 0]
            return padding, scale, kept, sized
        """,
    )


# ---- issue 10: builtins, data-sized tensors, counts in loops ---------------------------------
def test_python_builtins_deciding_on_tensors(tmp_path):
    check(
        tmp_path,
        """
        import torch


        def check(x: torch.Tensor, flags, sizes):
            if all(x > 0):  # expect: NL603
                x = -x
            found = any(torch.isnan(x))  # expect: NL603
            ok = bool(x.any())  # expect: NL603
            low = min(x.amax(), 1.0)  # expect: NL603
            n = max(x.size(0), 1)
            ready = all(f for f in flags) and any(s > 0 for s in sizes)
            return found, ok, low, n, ready
        """,
    )


def test_branches_on_sizes_of_data_sized_tensors(tmp_path):
    check(
        tmp_path,
        """
        import torch


        def select(scores, anchors, threshold):
            idx = torch.nonzero(scores > threshold).squeeze(1)  # expect: NL601
            if len(idx) == 0:  # expect: NL603
                return None
            picked = anchors[scores > threshold]  # expect: NL602
            if picked.shape[0] > 100:  # expect: NL603
                picked = picked[:100]
            if anchors.shape[0] > 100 and scores.numel() > 0:
                anchors = anchors[:100]
            return idx, picked
        """,
    )


def test_growth_by_a_loop_counter_and_numpy_masks_are_static(tmp_path):
    check(
        tmp_path,
        """
        import numpy as np
        import torch


        def grow(tokens, steps: int, arr: np.ndarray):
            for i in range(steps):
                tokens = torch.cat([tokens, tokens[:, -1:]], dim=1)
                window = tokens[:, : i + 1]
            keep = arr[arr > 0]
            mask = np.isfinite(arr)
            rows = tokens.repeat_interleave(2, dim=0)
            return window, keep, arr[mask], rows
        """,
    )


def test_comparisons_of_loop_counters_are_python_bools(tmp_path):
    # `roles[j % 2 == 1]` alternates between two roles: a Python bool indexes a tuple. A
    # comparison of a tensor with a counter is still a mask.
    check(
        tmp_path,
        """
        import torch


        def build(messages, prompt, scores, lengths):
            for j in range(len(messages) - 1):
                prompt.append(prompt.roles[j % 2 == 1], messages[j + 1])
            for i, n in enumerate(lengths):
                picked = scores[scores > i]  # expect: NL602
            return picked
        """,
    )


def test_sizes_of_new_tensors_read_from_tensor_values(tmp_path):
    # Per-rank batch sizes gathered and read (guided-diffusion's resample.py, peft's EVA): the pad
    # buffers they size and the slices they bound change shape with the data. Sizes that are Python
    # numbers (a length, a shape, a config value) and fill values are static.
    check(
        tmp_path,
        """
        import math

        import torch
        import torch.distributed as dist


        def gather(local, world_size, cfg, cpu_counts):
            sizes = torch.empty(world_size, dtype=torch.long, device=local.device)
            dist.all_gather_into_tensor(sizes, torch.tensor([local.shape[0]], device=local.device))
            sizes = sizes.tolist()
            padded = local.new_zeros((max(sizes), *local.shape[1:]))  # expect: NL604
            gathered = [torch.zeros_like(padded) for _ in range(world_size)]
            parts = [t[:n] for t, n in zip(gathered, sizes)]  # expect: NL604
            for n in sizes:
                parts.append(torch.ones(n, 4, device=local.device))  # expect: NL604
            top = local.max().item()
            fill = torch.full((4,), top, device=local.device)
            steps = torch.arange(top)  # expect: NL604
            static = torch.zeros(len(local), local.shape[1], cfg.hidden)
            counted = [c.item() for c in cpu_counts.cpu()]
            host = torch.zeros(max(counted))
            numel = int(math.prod(local.shape))  # Megatron-LM's buffer pool: a Python number
            flat = torch.empty(numel, device=local.device)
            return parts, fill, steps, static, host, flat
        """,
        select=["dynamic-shape"],
    )


def test_slice_bound_from_a_tensor_field_of_a_class_of_the_file(tmp_path):
    # kohya-ss sd-scripts library/attention.py: `seqlens` is declared a tensor in the dataclass, and
    # each sample is cut to its own length.
    check(
        tmp_path,
        """
        from dataclasses import dataclass
        from typing import Optional

        import torch


        @dataclass
        class AttentionParams:
            attn_mode: Optional[str] = None
            split_attn: bool = False
            seqlens: Optional[torch.Tensor] = None
            cu_seqlens: torch.Tensor | None = None
            max_seqlen: Optional[int] = None


        def attention(q, k, attn_params=None):
            if attn_params.seqlens is None:
                attn_params.seqlens = torch.tensor([q.shape[1]] * q.shape[0], device=q.device)
            q = [q[i : i + 1, : attn_params.seqlens[i]] for i in range(len(q))]  # expect: NL604
            k = [k[i : i + 1, : attn_params.cu_seqlens[i + 1]] for i in range(len(k))]  # expect: NL604
            head = q[0][:, : attn_params.max_seqlen]
            return q, k, head
    """,
    )


def test_python_max_over_a_generator_of_tensors(tmp_path):
    # ConvNeXt / Megatron-LM `get_grad_norm_`: the inf-norm is a Python max over device maxima
    check(
        tmp_path,
        """
        import torch


        def grad_norm(parameters, norm_type):
            parameters = [p for p in parameters if p.grad is not None]
            if norm_type == float("inf"):
                return max(p.grad.detach().abs().max() for p in parameters)  # expect: NL603
            longest = max(len(p.shape) for p in parameters)
            count = sum(p.numel() for p in parameters)
            return torch.norm(torch.stack([p.grad.norm() for p in parameters])) * longest / count
        """,
        select=["dynamic-shape"],
    )


def test_a_number_read_from_a_registered_buffer_bounds_a_slice(tmp_path):
    # BLIP's retrieval queue: `ptr = int(self.ptr_queue)` reads the device pointer each step, and
    # the queue writes `[:, ptr:ptr + batch_size]` cut where the data says
    check(
        tmp_path,
        """
        import torch
        from torch import nn


        class Queue(nn.Module):
            def __init__(self):
                super().__init__()
                self.register_buffer("ptr_queue", torch.zeros(1, dtype=torch.long))
                self.register_buffer("queue", torch.zeros(256, 4096))

            @torch.no_grad()
            def enqueue(self, feats):
                batch_size = feats.shape[0]
                ptr = int(self.ptr_queue)  # expect: NL705
                self.queue[:, ptr : ptr + batch_size] = feats.T  # expect: NL604
                self.ptr_queue[0] = (ptr + batch_size) % 4096
        """,
        select=["dynamic-shape", "host-sync"],
    )


def test_a_size_tuple_holding_a_number_read_from_a_tensor(tmp_path):
    # VAR `dist.allgather_diff_shape`: the pad size comes from gathered sizes read with .item()
    check(
        tmp_path,
        """
        import torch


        def pad_to_max(t, ls_size, t_size):
            pad = max(s.item() for s in ls_size) - t_size[0].item()
            if pad:
                pad_size = (pad, *t.size()[1:])
                t = torch.cat((t, t.new_empty(pad_size)), dim=0)  # expect: NL604
            fixed = (4, *t.size()[1:])
            return torch.cat((t, t.new_zeros(fixed)), dim=0)
        """,
        select=["dynamic-shape"],
    )


def test_detections_a_yolo_style_nms_keeps_per_image(tmp_path):
    """`non_max_suppression(pred, ...)` returns one tensor of kept boxes per image: each has as many
    rows as the data kept, the list itself one entry per image; the rows of one are tensors."""
    check(
        tmp_path,
        """
        import torch
        from utils.general import non_max_suppression


        def detect(model, img, names):
            out = non_max_suppression(model(img)[0], 0.25, 0.45)
            if len(out) != 1:
                print("a batch")
            labels = []
            for i, det in enumerate(out):
                if len(det):  # expect: NL603
                    for *xyxy, conf, cls in reversed(det):
                        labels.append(f"{names[i]} {conf:.2f}")  # expect: NL704
            return labels
        """,
    )


def test_branch_on_a_method_of_the_class_that_returns_a_tensor(tmp_path):
    """GPTQ's quantizer: `if self.ready():` where `ready` returns `torch.all(self.scale != 0)`, a
    device tensor; also when `ready` is defined below the method that calls it."""
    check(
        tmp_path,
        """
        import torch
        import torch.nn as nn


        class Quantizer(nn.Module):
            def __init__(self, shape=1):
                super().__init__()
                self.register_buffer("scale", torch.zeros(shape))

            def quantize(self, x):
                if self.ready():  # expect: NL603
                    return x * self.scale
                return x

            def ready(self):
                return torch.all(self.scale != 0)

            def enabled(self):
                return self.bits > 0

            def maybe(self, x):
                if not self.ready():  # expect: NL603
                    return x
                return x if self.enabled() else -x
        """,
    )


def test_mask_names_with_a_number(tmp_path):
    """dust3r's losses: `pred_pts1[mask1]`, `conf[msk2]` are boolean-mask reads by their names; an
    index list named for what it indexes (`valid_indices`) is not a mask."""
    check(
        tmp_path,
        """
        import torch


        def loss(self, gt1, pred1, conf):
            pred_pts1, gt_pts1, mask1, msk2, valid_indices = self.get_all_pts3d(gt1, pred1)
            l1 = self.criterion(pred_pts1[mask1], gt_pts1[mask1])  # expect: NL602
            c2 = conf[msk2]  # expect: NL602
            return l1, c2, pred_pts1[valid_indices]
        """,
    )


def test_a_reduction_of_an_elementwise_comparison_is_a_tensor(tmp_path):
    """LLaVA: `num_images = (cur_input_ids == IMAGE_TOKEN_INDEX).sum()`, a Python bool has no `.sum()`,
    so the comparison is of a tensor and the count one; numpy arrays and `in` tests are not."""
    check(
        tmp_path,
        """
        import numpy as np
        import torch

        IMAGE_TOKEN_INDEX = -200


        def merge(input_ids, labels):
            for cur_input_ids in input_ids:
                num_images = (cur_input_ids == IMAGE_TOKEN_INDEX).sum()
                if num_images == 0:  # expect: NL603
                    continue
                ids = np.asarray(labels)
                if (ids == 0).sum() > 3:
                    continue
        """,
    )


def test_a_multi_line_test_reports_the_line_of_its_tensor_read(tmp_path):
    """axolotl's xformers patch: the tensor read sits on the third line of the `if` test; the
    finding sits on the line of the token that reads the tensor, as the conventions place it."""
    check(
        tmp_path,
        """
        import torch


        def forward(query, position_ids, max_length_q, query_length):
            if position_ids is not None and (
                max_length_q is not None
                or (query_length != 1 and not (torch.diff(position_ids, dim=-1) >= 0).all())  # expect: NL603
            ):
                return query
            return None
        """,
    )


def test_a_comparison_of_a_whole_tensor_reduction_is_a_device_boolean(tmp_path):
    """pytorch3d's knn_gather: `needs_mask = lengths.min() < K` is one boolean still on the device;
    branching on the name later reads it. A comparison of plain numbers is not."""
    check(
        tmp_path,
        """
        import torch


        def knn_gather(x, K, n):
            lengths = torch.full((x.shape[0],), 5, device=x.device)
            needs_mask = lengths.min() < K
            if needs_mask:  # expect: NL603
                x = x * 0
            small = n < K
            if small:
                x = x * 1
            return x
        """,
    )


def test_masks_joined_and_unpacked_stay_masks(tmp_path):
    """yolov5's build_targets: `j, k = ((gxy % 1 < g) & (gxy > 1)).T` unpacks mask rows, and
    `torch.stack((torch.ones_like(j), j, k))` of masks is a mask, so `t.repeat(...)[j]` is a
    boolean-mask read; a stack that joins a float tensor is not known as a mask."""
    check(
        tmp_path,
        """
        import torch


        def build(t, gxy, g, scores):
            j, k = ((gxy % 1 < g) & (gxy > 1)).T
            j = torch.stack((torch.ones_like(j), j, k))
            t = t.repeat((3, 1, 1))[j]  # expect: NL602
            w = torch.stack((scores, j))
            return t[w]
        """,
    )


def test_a_conditional_transform_keeps_what_the_name_held(tmp_path):
    """yolov7's detect.py: `if classify: pred = apply_classifier(pred, ...)` leaves the NMS result
    on the path that skips it, so `len(det)` of its images is still a data-dependent size; an
    unconditional rebinding to an unknown call forgets it."""
    check(
        tmp_path,
        """
        import torch
        from utils.general import apply_classifier, non_max_suppression


        def detect(model, img, classify, modelc):
            pred = non_max_suppression(model(img)[0], 0.25, 0.45)
            if classify:
                pred = apply_classifier(pred, modelc, img)
            for det in pred:
                if len(det):  # expect: NL603
                    print("found")


        def detect_then_convert(model, img):
            pred = non_max_suppression(model(img)[0], 0.25, 0.45)
            pred = to_lists(pred)
            for det in pred:
                if len(det):
                    print("found")
        """,
    )


def test_a_gpu_kernel_body_is_the_kernel_finding_only(tmp_path):
    """NeMo's numba RNNT kernels annotate their device arrays `torch.Tensor`; inside `@cuda.jit` the
    body runs per GPU thread, so `if g > 0:` is kernel logic, not a branch on a traced tensor."""
    check(
        tmp_path,
        """
        import torch
        from numba import cuda  # expect: NL401


        @cuda.jit()  # expect: NL305
        def clamp_kernel(grads: torch.Tensor, clamp: float):
            t = cuda.threadIdx.x
            g = grads[t]
            if g > clamp:
                grads[t] = clamp


        def host(grads: torch.Tensor):
            if grads[0] > 0:  # expect: NL603
                return 1
            return 0
        """,
    )


def test_unpadding_by_an_attention_mask_is_data_sized(tmp_path):
    """OpenRLHF's ring attention and axolotl's xformers patch unpad the batch: as many tokens come
    out as the mask keeps."""
    check(
        tmp_path,
        """
        import torch
        from transformers.modeling_flash_attention_utils import _upad_input

        try:
            from flash_attn.bert_padding import pad_input, unpad_input  # expect: NL401
        except ImportError:
            unpad_input, pad_input = None, None  # assigned, not used


        def forward(sequences, attention_mask, query, key, value, query_length):
            tokens, indices, cu_seqlens, _, _ = unpad_input(sequences, attention_mask)  # expect: NL402 NL601
            q, k, v, _, cu_seq_lens, _ = _upad_input(query, key, value, attention_mask, query_length)  # expect: NL601
            return pad_input(tokens, indices, 2, 8)  # expect: NL402
        """,
    )


def test_items_of_a_list_of_device_tensors_are_tensors(tmp_path):
    """axolotl's gather helper: `gathered = [torch.zeros_like(t) for _ in range(world_size)]` holds
    device tensors, so a loop's `if tensor == tensor.int():` branches on one; a list of CPU tensors
    holds host values."""
    check(
        tmp_path,
        """
        import torch
        import torch.distributed as dist


        def gather(value, world_size, device):
            value_tensor = torch.tensor(value, device=device).float()
            gathered = [torch.zeros_like(value_tensor) for _ in range(world_size)]
            dist.all_gather(gathered, value_tensor)
            for tensor in gathered:
                if tensor == tensor.int():  # expect: NL603
                    print("integral")
            for row in [torch.zeros(3, device="cpu") for _ in range(world_size)]:
                if row.sum() > 0:
                    print("positive")
        """,
    )


def test_an_optional_tensor_parameter_is_a_tensor_unless_named_for_the_host(tmp_path):
    """LLaVA's xformers patch: `attention_mask: Optional[torch.Tensor] = None` holds a tensor where
    the code reads it; Megatron's `accepted_counts_cpu: Optional[torch.Tensor]` is a host copy, as
    its name says."""
    check(
        tmp_path,
        """
        from typing import Optional

        import torch


        def forward(attention_mask: Optional[torch.Tensor] = None, counts_cpu: Optional[torch.Tensor] = None):
            if attention_mask is None or attention_mask[0, 0, 0, 1] == 0:  # expect: NL603
                return None
            if counts_cpu is not None and counts_cpu[0] > 0:
                return counts_cpu.tolist()
            return attention_mask
        """,
    )


def test_items_of_a_device_tensor_a_loop_runs_over_are_tensors(tmp_path):
    # Wan's T5 encoder: `[u[:v] for u, v in zip(context, seq_lens)]` slices each sequence by a length
    # read from a device tensor; speechbrain's CTC decoder branches on each frame of log-probs.
    check(
        tmp_path,
        """
        import torch


        def encode(model, tokenizer, texts, device, blank):
            ids, mask = tokenizer(texts)
            ids, mask = ids.to(device), mask.to(device)
            seq_lens = mask.gt(0).sum(dim=1).long()  # expect: NL507
            context = model(ids, mask)
            trimmed = [u[:v] for u, v in zip(context, seq_lens)]  # expect: NL604
            log_probs = context.log_softmax(-1)
            for frame in log_probs[0]:
                if frame[blank] > 0.5:  # expect: NL603
                    continue
            for n in seq_lens.tolist():  # expect: NL702
                trimmed.append(context[0, :n])  # expect: NL604
            return trimmed
        """,
    )


def test_a_mask_named_after_a_reshape_filters_and_sizes_by_the_data(tmp_path):
    # YOLOX's postprocess: the mask is a comparison reshaped (`(...).squeeze()`), bound to a name,
    # and the filtered detections' size decides a branch (NeMo's cross-entropy does the same). A
    # tensor made with that size is no second finding: the mask that sized it is the finding.
    check(
        tmp_path,
        """
        import torch


        def postprocess(image_pred, class_conf, conf_thre):
            conf_mask = (image_pred[:, 4] * class_conf.squeeze() >= conf_thre).squeeze()
            detections = image_pred[conf_mask]  # expect: NL602
            if not detections.size(0):  # expect: NL603
                return None
            kept = image_pred[image_pred[:, 4] > conf_thre]  # expect: NL602
            return torch.zeros(kept.size(0), 4)
        """,
    )


def test_a_number_read_from_a_tensor_on_one_path_sizes_by_the_data(tmp_path):
    # audiocraft's length_to_mask: the length is read from the tensor unless the caller gives one.
    check(
        tmp_path,
        """
        import torch


        def length_to_mask(lengths: torch.Tensor, max_len=None):
            final_length = lengths.max().item() if not max_len else max_len
            final_length = max(final_length, 1)
            return torch.arange(final_length, device=lengths.device)[None, :] < lengths[:, None]  # expect: NL604


        def sized(x, cfg):
            n = x.shape[0] if cfg.flag else 4
            return torch.zeros(n, device=x.device)
        """,
        select=["dynamic-shape"],
    )


def test_python_max_over_a_list_of_device_tensors(tmp_path):
    """DINO's denoising queries: `known_num = [sum(k) for k in known]` over tensors moved with
    `.cuda()` is a list of device tensors; `int(max(known_num))` has Python compare them (NL603) and
    reads the largest (NL705), and it sizes the padding. A list of Python numbers is no such read."""
    check(
        tmp_path,
        """
        import torch


        def prepare(targets):
            known = [torch.ones_like(t["labels"]).cuda() for t in targets]  # expect: NL101
            known_num = [sum(k) for k in known]
            if int(max(known_num)) == 0:  # expect: NL603, NL705
                return None
            single_pad = int(max(known_num))  # expect: NL603, NL705
            sizes = [len(t["labels"]) for t in targets]
            return single_pad, max(sizes)
        """,
    )


def test_repeats_annotated_int_are_a_python_number(tmp_path):
    """mistral-inference's `repeat_kv(keys, values, repeats: int, dim)`: the annotation says the
    repeats are a number, so the output size is fixed; unannotated `repeats` may be a tensor."""
    check(
        tmp_path,
        """
        import torch


        def repeat_kv(keys: torch.Tensor, repeats: int, dim: int):
            return torch.repeat_interleave(keys, repeats=repeats, dim=dim)


        def expand(x, repeats):
            return torch.repeat_interleave(x, repeats=repeats, dim=0)  # expect: NL601
        """,
    )


def test_a_mask_field_declared_a_tensor_indexes_by_the_data(tmp_path):
    """mistral-inference's cache: `xk[self.metadata.to_cache_mask]`, the field declared
    `to_cache_mask: torch.Tensor` in the file, is a boolean-mask read; an attribute not known as a
    tensor, or not named a mask, is not."""
    check(
        tmp_path,
        """
        from dataclasses import dataclass

        import torch


        @dataclass
        class Metadata:
            to_cache_mask: torch.Tensor
            positions: torch.Tensor


        class View:
            def update(self, xk):
                kept = xk[self.metadata.to_cache_mask]  # expect: NL602
                rows = xk[self.metadata.positions]
                return kept, rows, xk[self.config.valid]
        """,
    )


def test_range_bounds_from_tensor_values(tmp_path):
    """LLaVA's `for i in range(num_images + 1)` with `num_images = (ids == IMAGE).sum()`, and DINO's
    `torch.tensor(range(num))` over a list of device tensors: the loop count or the new tensor's
    length depends on the data. A range over a size (`range(x.shape[0])` of a filtered tensor, which
    is reported where it is filtered) or a Python int is not."""
    check(
        tmp_path,
        """
        import torch


        class Model(torch.nn.Module):
            def forward(self, input_ids, targets, scores):
                num_images = (input_ids == -200).sum()
                parts = [input_ids[i] for i in range(num_images + 1)]  # expect: NL604
                known = [torch.ones_like(t).cuda() for t in targets]  # expect: NL101
                counts = [k.sum() for k in known]
                index = torch.cat([torch.tensor(range(n)) for n in counts])  # expect: NL604
                kept = scores[scores > 0.5]  # expect: NL602
                rows = [kept[k] for k in range(kept.shape[0])]
                return parts, index, rows, [j for j in range(len(targets))]
        """,
    )


def test_reshape_split_and_linspace_sizes_from_the_rows_of_a_device_tensor(tmp_path):
    """GroundingDINO's multi-scale deformable attention: `for H_, W_ in value_spatial_shapes` (a
    tensor) yields 0-d tensors, so `reshape(..., H_, W_)`, `split([H_ * W_ for ...])` and
    `linspace(..., H_)` take their sizes from tensor values. Sizes of a tensor the data already
    sized (`kept.shape[0]` after a mask, reported where it is masked) and Python ints are not."""
    check(
        tmp_path,
        """
        import torch


        def attend(value: torch.Tensor, value_spatial_shapes: torch.Tensor, scores, b: int):
            value_list = value.split([H_ * W_ for H_, W_ in value_spatial_shapes], dim=1)  # expect: NL604
            grids = []
            for level, (H_, W_) in enumerate(value_spatial_shapes):
                v = value_list[level].reshape(b, 8, H_, W_)  # expect: NL604
                ys = torch.linspace(0, H_ - 1, H_, device=value.device)  # expect: NL604
                grids.append((v, ys))
            kept = scores[scores > 0.5]  # expect: NL602
            rows = kept.reshape(kept.shape[0], -1)
            return grids, rows, value.view(b, -1), value.split(4, dim=1), torch.linspace(0, 1, 16)
        """,
        select=["dynamic-shape"],
    )


def test_non_maximum_suppression_in_compiled_extensions_and_custom_ops(tmp_path):
    """mmcv's `ext_module.nms(...)` (the loader returns its compiled `_ext`) and detectron2's
    `torch.ops.detectron2.nms_rotated(...)` keep as many boxes as the scores decide, as
    torchvision's Python NMS does; another op of the same extension is no dynamic shape."""
    check(
        tmp_path,
        """
        import torch
        from mmcv.utils import ext_loader

        ext_module = ext_loader.load_ext("_ext", ["nms", "nms_rotated", "roi_align"])


        def nms(boxes, scores, thr):
            return ext_module.nms(boxes, scores, iou_threshold=thr)  # expect: NL601


        def rotated(boxes, scores, thr):
            return torch.ops.detectron2.nms_rotated(boxes, scores, thr)  # expect: NL601


        def pool(x, rois):
            return ext_module.roi_align(x, rois)
        """,
        select=["dynamic-shape"],
    )
    # OpenPCDet's iou3d_nms_utils: `nms_gpu` fills `keep` and returns how many boxes it kept
    findings = check(
        tmp_path,
        """
        import torch
        import iou3d_nms_cuda


        def nms_gpu(boxes, scores, thresh):
            order = scores.sort(0, descending=True)[1]
            keep = torch.LongTensor(boxes.size(0))
            num_out = iou3d_nms_cuda.nms_gpu(boxes[order], keep, thresh)  # expect: NL601
            return order[keep[:num_out]]


        def iou(a, b, out):
            iou3d_nms_cuda.boxes_iou_bev_gpu(a, b, out)
        """,
        select=["NL601"],
    )
    assert findings[0].message.startswith("`nms_gpu` produces a data-dependent number of elements")


def test_a_mask_index_split_over_lines_is_reported_where_the_subscript_opens(tmp_path):
    """pytorchvideo's detection hook: `outputs["instances"][` on one line, the mask on the next. The
    finding conventions put a multi-line subscript on the line of its opening bracket, also where
    the indexed value spans lines before it (speechbrain's `torch.arange(n)` then `.to(d)[mask]`)."""
    check(
        tmp_path,
        """
        import torch


        def people(outputs, r, threshold):
            keypoints = outputs["instances"][  # expect: NL602
                outputs["instances"].pred_classes == 0
            ].pred_keypoints
            kept = (
                torch.arange(r.shape[0])
                .to(r.device)[r > threshold]  # expect: NL602
                .tolist()  # expect: NL702
            )
            return keypoints, kept
        """,
        select=["dynamic-shape", "host-sync"],
    )


def test_int_of_an_item_is_a_number_read_from_the_tensor(tmp_path):
    """MoCo's queue (pytorchvideo): `ptr = int(self.ptr.item())` holds a number read from the
    device, so `queue[ptr : ptr + n]` slices by the data (`.item()` gives a host number, but what it
    was called on decides). A periodic test of a step counter read the same way (`if not (steps %
    every):`, DALLE2's VQGAN trainer) schedules saving, not the model: no NL603."""
    check(
        tmp_path,
        """
        import torch


        class Queue(torch.nn.Module):
            def enqueue(self, keys):
                ptr = int(self.ptr.item())  # expect: NL701
                for key in keys:
                    n = int(key.size(0))
                    self.queue_x[ptr : ptr + n, :] = key  # expect: NL604
                    ptr += n
                return ptr


        class Trainer(torch.nn.Module):
            def train_step(self):
                steps = int(self.steps.item())  # expect: NL701
                if not (steps % self.save_every):
                    self.save()
                n = int(self.count.item())  # expect: NL701
                if n > 3:  # expect: NL603
                    return 1
                return steps
        """,
        select=["dynamic-shape", "host-sync"],
    )


def test_a_branch_on_a_bound_size_of_data_sized_rows_is_reported_where_the_size_is_read(tmp_path):
    """yolov7's evaluation: `labels = targets[targets[:, 0] == si, 1:]` keeps the rows a mask
    selects (with a slice beside it), `nl = len(labels)` is their count, and `... if nl else []`
    decides on it: the finding sits on the line that reads the size, once for all branches on the
    name. A size no branch reads, a dimension the data keeps (`size(1)`) and a loop over the rows
    are no NL603. A lookup keyed by a value read from a tensor decides on it too (DETR's panoptic
    post-processing, `if not is_thing[label.item()]:`)."""
    check(
        tmp_path,
        """
        import torch


        def statistics(out, targets, is_thing):
            for si, pred in enumerate(out):
                labels = targets[targets[:, 0] == si, 1:]  # expect: NL602
                nl = len(labels)  # expect: NL603
                tcls = labels[:, 0] if nl else []
                if nl == 0:
                    continue
                keep = torch.nonzero(pred)  # expect: NL601
                unused = keep.shape[0]
                width = keep.size(1)
                if width == 2:
                    pass
                count = keep.numel()
                for i in range(count):
                    pass
                for label in labels[:, 0]:
                    if not is_thing[label.item()]:  # expect: NL603
                        pass
            return tcls, unused
        """,
        select=["dynamic-shape"],
    )


def test_masks_made_by_calls_and_named_filters_index_by_the_data(tmp_path):
    """Gaussian splatting's densification: `grads[grads.isnan()] = 0.0` writes through a mask a
    call makes (as `.bool()`, `.eq(y)`, `torch.isin(...)` do), and `update_filter`/
    `visibility_filter` are the renderer's boolean masks of visible points. A function numba
    compiles for the CPU (`@numba.jit(nopython=True)`, mmdetection3d's circle NMS) works on numpy
    arrays on the host, whatever its annotations say."""
    check(
        tmp_path,
        """
        import numba
        import torch
        from torch import Tensor


        class Gaussians:
            def densify(self):
                grads = self.xyz_gradient_accum / self.denom
                grads[grads.isnan()] = 0.0  # expect: NL602
                kept = grads[torch.isin(self.ids, self.vocab)]  # expect: NL602
                return kept

            def add_stats(self, points, update_filter):
                self.denom[update_filter] += 1  # expect: NL602


        @numba.jit(nopython=True)
        def circle_nms(dets: Tensor, thresh: float) -> Tensor:
            keep = []
            for i in range(dets.shape[0]):
                if dets[i, 2] > thresh:
                    keep.append(i)
            return keep
        """,
        select=["dynamic-shape"],
    )


def test_arithmetic_inside_int_of_a_read_is_a_read(tmp_path):
    """nerfstudio's rejection sampler: `samples_needed = int(batch_size - torch.sum(valid).item())`
    is a number read from the device (the read sits inside the arithmetic), so the next batch of
    samples is sized by the data (NL604). `int(3 * 4)` reads nothing."""
    check(
        tmp_path,
        """
        import torch


        def sample(batch_size, valid, device):
            while True:
                samples_needed = int(batch_size - torch.sum(valid).item())  # expect: NL701
                rand_samples = torch.rand((samples_needed, 2), device=device)  # expect: NL604
                valid = rand_samples[:, 0] > 0.5
                if batch_size > 4:
                    break
            n = int(3 * 4)
            return torch.zeros(n, device=device)
        """,
        select=["dynamic-shape", "host-sync"],
    )


def test_a_count_of_detections_passed_in_decides_on_the_data(tmp_path):
    """NMS helpers (detectron2's `batched_nms_rotated`, mmcv's `nms_rotated`) test whether the boxes
    their caller kept are empty: `boxes`, `bboxes`, `dets`, `detections`, `proposals` parameters hold
    what a score threshold or NMS kept, so a branch on their count (`.numel()`, `.shape[0]`,
    `.size(0)`, `len()`) decides on the data. A coordinate dimension (`boxes.shape[-1]`,
    `boxes.size(1)`), a shape `assert`, and other parameters (`scores`) are not."""
    check(
        tmp_path,
        """
        import torch


        def batched_nms(boxes: torch.Tensor, scores: torch.Tensor, dets, iou_threshold: float):
            assert boxes.shape[-1] == 4
            assert dets.shape[0] == scores.shape[0]
            if boxes.numel() == 0:  # expect: NL603
                return boxes
            if dets.shape[0] > 100:  # expect: NL603
                dets = dets[:100]
            if len(dets) == 0:  # expect: NL603
                return dets
            if boxes.size(1) == 5 or scores.numel() == 0:
                return scores
            return dets
        """,
        select=["dynamic-shape"],
    )


def test_a_gather_by_a_data_sized_index_is_sized_by_the_data(tmp_path):
    """`boxes = boxes[keep]` after `keep = nms(...)` has as many rows as NMS kept, as `boxes[idx]`
    after `idx = m.nonzero()` and `order[ids + 1]` do; a branch on their count decides on the data.
    detectron2's `batched_nms` (torchvision's under detectron2.layers) is NMS too. A gather by a
    plain index tensor (`x[perm]`) keeps a static size, and MMCV's NMS of a numpy array runs on the
    host."""
    check(
        tmp_path,
        """
        import numpy as np
        import torch
        from detectron2.layers import batched_nms
        from mmcv.ops import nms_match


        def postprocess(boxes, scores, classes, perm):
            keep = batched_nms(boxes, scores, classes, 0.5)  # expect: NL601
            boxes = boxes[keep]
            if boxes.shape[0] == 0:  # expect: NL603
                return boxes
            top = scores[keep[:100]]
            if len(top) > 3:  # expect: NL603
                return top
            idx = (scores > 0.3).nonzero().squeeze(1)  # expect: NL601
            picked = boxes[idx + 0]
            if picked.numel() == 0:  # expect: NL603
                return None
            shuffled = scores[perm]
            if shuffled.shape[0] == 0:
                return None
            return picked


        def match_on_the_host(dets: np.ndarray):
            groups = nms_match(np.asarray(dets), 0.5)
            if len(groups) == 2:
                return groups
        """,
        select=["dynamic-shape"],
    )


def test_concatenated_data_sized_parts_are_sized_by_the_data(tmp_path):
    """mmdetection3d's per-class NMS appends `bboxes[keep]` to a list and concatenates it, and
    YOLO's NMS concatenates the kept candidates with extra rows (`torch.cat((x, v), 0)`): the result
    has as many rows as the data kept. A list of fixed-size tensors, or a join along another
    dimension, keeps a static size."""
    check(
        tmp_path,
        """
        import torch


        def per_class(dets, extra, feats):
            bboxes = []
            for d in dets:
                keep = d[:, 4] > 0.5
                bboxes.append(d[keep])  # expect: NL602
            bboxes = torch.cat(bboxes)
            if bboxes.shape[0] > 100:  # expect: NL603
                bboxes = bboxes[:100]
            x = dets[0][dets[0][:, 4] > 0.5]  # expect: NL602
            x = torch.cat((x, extra), 0)
            if not x.shape[0]:  # expect: NL603
                return x
            parts = [f.mean(0) for f in feats]
            pooled = torch.cat(parts)
            if pooled.shape[0] > 4:
                return pooled
            wide = torch.cat((x, x), dim=1)
            return wide
        """,
        select=["dynamic-shape"],
    )


def test_a_while_test_on_what_the_loop_body_assigns(tmp_path):
    """The body decides a `while` test from the second pass on: a greedy NMS loop shrinks `order`
    by the data (`order = order[ids + 1]` with `ids` from `nonzero`), and petals' speculative
    decoding sets `finished = unfinished.max() == 0`, a device value. A loop that halves a tensor
    by slicing, or sets a Python flag, decides nothing on the data; neither does a numpy NMS."""
    check(
        tmp_path,
        """
        import numpy as np
        import torch


        def greedy_nms(boxes, scores, thr):
            order = scores.argsort(descending=True)
            keep = []
            while order.numel() > 0:  # expect: NL603
                keep.append(order[0])
                ovr = boxes[order[1:]].sum(1)
                ids = (ovr <= thr).nonzero().squeeze(1)  # expect: NL601
                order = order[ids + 1]
            return keep


        def generate(model, input_ids):
            unfinished = torch.ones(4, device=input_ids.device)
            finished = False
            while not finished:  # expect: NL603
                out = model(input_ids)
                unfinished = unfinished & (out > 0)
                finished = unfinished.max() == 0


        def halve(x, n):
            done = False
            while x.shape[0] > 1 and not done:
                x = x[::2]
                done = n > 3
            return x


        def numpy_nms(dets, thr):
            order = dets[:, 4].argsort()[::-1]
            while order.size > 0:
                inds = np.where(dets[order, 0] <= thr)[0]
                order = order[inds + 1]
        """,
        select=["dynamic-shape"],
    )


def test_masks_by_row_and_numpy_arrays_a_docstring_names(tmp_path):
    """`xc[xi]`, a row of a mask, is a mask, as is `(x[:, 5:6] == c).any(1)`, a per-row reduction of
    one. yolov5's `ap_per_class` says in its docstring that its arguments are numpy arrays (`tp:
    True positives (nparray, nx1 or nx10).`): its masks index host arrays."""
    check(
        tmp_path,
        """
        import numpy as np
        import torch


        def nms(prediction, classes, conf_thres):
            xc = prediction[..., 4] > conf_thres
            for xi, x in enumerate(prediction):
                x = x[xc[xi]]  # expect: NL602
                if not x.shape[0]:  # expect: NL603
                    continue
                x = x[(x[:, 5:6] == torch.tensor(classes, device=x.device)).any(1)]  # expect: NL602
            return x


        def ap_per_class(tp, conf, pred_cls, target_cls):
            \"\"\"Compute the average precision.
            # Arguments
                tp:  True positives (nparray, nx1 or nx10).
                conf:  Objectness value from 0-1 (nparray).
                pred_cls:  Predicted object classes (nparray).
                target_cls:  True object classes (nparray).
            \"\"\"
            i = np.argsort(-conf)
            tp, conf, pred_cls = tp[i], conf[i], pred_cls[i]
            for c in np.unique(target_cls):
                i = pred_cls == c
                fpc = (1 - tp[i]).cumsum(0)
                return fpc
        """,
        select=["dynamic-shape"],
    )


def test_a_top_k_count_read_from_a_tensor(tmp_path):
    """SimOTA's dynamic-k matching (DiffusionDet, YOLOX, mmpose) takes as many candidates per ground
    truth as a tensor says: `torch.topk(cost, k=dynamic_ks[i].item())` and `cost.topk(n)` with `n`
    read from a tensor are NL604. A configured `k` is not."""
    check(
        tmp_path,
        """
        import torch


        def dynamic_k_matching(cost, ious, num_gt, top_k: int):
            dynamic_ks = torch.clamp(ious.sum(0).int(), min=1)
            for gt_idx in range(num_gt):
                _, pos = torch.topk(cost[:, gt_idx], k=dynamic_ks[gt_idx].item(), largest=False)  # expect: NL604
                n = dynamic_ks[gt_idx].item()
                _, also = cost[:, gt_idx].topk(n)  # expect: NL604
            _, fixed = torch.topk(cost, top_k, dim=0)
            return pos, also, fixed
        """,
        select=["dynamic-shape"],
    )


def test_a_tensor_made_with_the_size_of_a_data_sized_one_is_no_second_finding(tmp_path):
    """`correct = torch.zeros(pred.shape[0], niou)` after `pred` came out of NMS: the size is the
    data's, reported where `pred` is made; the new tensor adds no shape of its own (as a reshape by
    `kept.shape[0]` adds none). A size read from a tensor's values still is NL604."""
    check(
        tmp_path,
        """
        import torch
        from torchvision.ops import nms


        def evaluate(boxes, scores, lengths, niou):
            keep = nms(boxes, scores, 0.5)  # expect: NL601
            pred = boxes[keep]
            correct = torch.zeros(pred.shape[0], niou, dtype=torch.bool)
            kept = scores[scores > 0.5]  # expect: NL602
            ranks = torch.arange(kept.numel())
            padded = torch.zeros(lengths.max().item(), 4)  # expect: NL604
            return correct, ranks, padded
        """,
        select=["dynamic-shape"],
    )


def test_a_number_read_inside_max_of_python_numbers_is_a_read(tmp_path):
    """`size = int(max(0, length.item()))` reads the length from the tensor; slicing by it sizes the
    result by the data, as `size = int(length.item())` does."""
    check(
        tmp_path,
        """
        import torch


        def decode(length, payload, limit: int):
            size = int(max(0, length.item()))  # expect: NL701
            values = payload[:size]  # expect: NL604
            n = max(0, limit)
            head = payload[:n]
            return values, head
        """,
        select=["dynamic-shape", "host-sync"],
    )


def test_sizes_from_gathered_counts_and_legacy_typed_constructors(tmp_path):
    """The all_gather of pickled data copied into most detection and diffusion repositories:
    `torch.LongTensor([n])` is a tensor, so `if local_size != max_size:` branches on one; the
    buffers `torch.ByteTensor(size=(max_size,))` are sized by numbers read from the gathered sizes.
    A typed constructor given data (`torch.LongTensor([0])`) has no size to report."""
    check(
        tmp_path,
        """
        import torch
        import torch.distributed as dist


        def all_gather(tensor, world_size, device):
            local_size = torch.LongTensor([tensor.numel()]).to(device)
            size_list = [torch.LongTensor([0]).to(device) for _ in range(world_size)]
            dist.all_gather(size_list, local_size)
            size_list = [int(size.item()) for size in size_list]  # expect: NL701
            max_size = max(size_list)
            buffers = [torch.ByteTensor(size=(max_size,)) for _ in size_list]  # expect: NL604
            if local_size != max_size:  # expect: NL603
                padding = torch.ByteTensor(size=(max_size - local_size,))  # expect: NL604
                tensor = torch.cat((tensor, padding), dim=0)
            empty = torch.empty(size=(max_size, 4))  # expect: NL604
            return buffers, tensor, empty
        """,
        select=["dynamic-shape", "host-sync"],
    )


def test_a_slice_bounded_by_a_whole_tensor_reduction_bound_to_a_name(tmp_path):
    """MiniGPT-4's `input_len = input_atts[i].sum()`: a 0-d tensor, so `x[:input_len]` is sized by
    the data, as `x[:input_atts[i].sum()]` written in place is. A reduction of an array the
    docstring names, or one along a dimension (`sum(dim=-1)`), is not such a bound."""
    check(
        tmp_path,
        """
        import numpy as np
        import torch


        def concat(input_embs, input_atts, output_embs):
            out = []
            for i in range(input_embs.size(0)):
                input_len = input_atts[i].sum()
                head = input_embs[i][:input_len]  # expect: NL604
                out.append(torch.cat([head, output_embs[i], input_embs[i][input_len:]]))  # expect: NL604
            return out


        def per_class(pred_cls, target_cls, tp):
            \"\"\"Precision per class.
            # Arguments
                pred_cls:  Predicted object classes (nparray).
                target_cls:  True object classes (nparray).
            \"\"\"
            for c in np.unique(target_cls):
                i = pred_cls == c
                n_p = i.sum()
                if n_p == 0:
                    continue
                tp_c = tp[:n_p]
            lengths = tp.sum(dim=-1)
            return tp[:, : lengths.size(0)]
        """,
        select=["dynamic-shape"],
    )


def test_a_losss_own_preprocess_runs_on_the_device(tmp_path):
    """YOLOv8/YOLOv9's `ComputeLoss.preprocess(targets, ...)` pads the targets the loss was given on
    the device: `unique` counts per image size its output and each image's rows. A `preprocess`
    function outside such a class is data-pipeline code, on the host."""
    check(
        tmp_path,
        """
        import torch


        class ComputeLoss:
            def preprocess(self, targets, batch_size):
                i = targets[:, 0]
                _, counts = i.unique(return_counts=True)  # expect: NL601
                out = torch.zeros(batch_size, counts.max(), 5, device=self.device)  # expect: NL604
                for j in range(batch_size):
                    matches = i == j
                    n = matches.sum()
                    if n:  # expect: NL603
                        out[j, :n] = targets[matches, 1:]  # expect: NL604 NL602
                return out


        def preprocess(targets):
            i = targets[:, 0]
            return i.unique(return_counts=True)
        """,
        select=["dynamic-shape"],
    )


def test_sizes_kept_by_masks_rows_and_unpacked_results(tmp_path):
    """A row of a mask is a mask (`candidate_inds[i]`, DRN); a mask comparing boxes a mask kept has
    as many rows as they (`len(inds)`, mmrotate); MMCV's `dets, keep = nms_rotated(...)` and
    `labels, ids = torch.unique(..., return_inverse=True)` size their results by the data (the
    inverse indices have the input's size); `.size(-1) == 5` reads a column count, and
    `.size()[0]` the rows."""
    check(
        tmp_path,
        """
        import torch
        from mmcv.ops import nms_rotated


        def per_image(box_cls, n, thr):
            candidate_inds = box_cls > thr
            for i in range(n):
                per_candidate_inds = candidate_inds[i]
                per_box_cls = box_cls[i][per_candidate_inds]  # expect: NL602
            return per_box_cls


        def per_class(merged_bboxes, merged_labels, classes, thr):
            out = []
            for cls in range(classes):
                cls_bboxes = merged_bboxes[merged_labels == cls]  # expect: NL602
                inds = cls_bboxes[:, -1] > thr
                if len(inds) == 0:  # expect: NL603
                    continue
                if cls_bboxes.size(-1) == 5:
                    cls_bboxes = cls_bboxes[:, :5]
                cls_dets, _ = nms_rotated(cls_bboxes[inds, :5], cls_bboxes[inds, -1], 0.1)  # expect: NL601 NL602
                if cls_dets.size()[0] == 0:  # expect: NL603
                    continue
                out.append(cls_dets)
            return out


        def instances(instance_kernel):
            unique_labels, unique_ids = torch.unique(instance_kernel, sorted=True, return_inverse=True)  # expect: NL601
            num_instance = unique_labels.size(0)  # expect: NL603
            if num_instance <= 1:
                return 0
            if unique_ids.shape[0] == 0:
                return 1
            return num_instance
        """,
        select=["dynamic-shape"],
    )


def test_buffers_sized_by_shapes_gathered_across_ranks(tmp_path):
    """OpenMMLab's `collect_results_gpu` (here mmflow's): each rank's size is gathered into
    `shape_list = [shape_tensor.clone() ...]` by `dist.all_gather`, and `torch.tensor(shape_list)
    .max()` sizes the send buffer and the receive buffers; each received part is cut at its rank's
    gathered size. Every one of those sizes is data."""
    path = tmp_path / "mmflow/apis/test.py"
    path.parent.mkdir(parents=True)
    path.write_bytes(
        mirrors.show("open-mmlab/mmflow", "9fb1d2f1bb3de641ddcba0dd355064b6ed9419f4", "mmflow/apis/test.py")
    )
    found = {(f.line, f.facts.get("read")) for f in scan_paths([path], cwd=tmp_path, select=["NL604"]).active}
    assert {(194, "shape_max"), (195, "shape_tensor"), (197, "shape_max"), (206, "shape")} <= found


def test_a_slice_bound_of_a_multi_line_subscript_is_reported_where_the_subscript_opens(tmp_path):
    """attention-gym's paged attention: `self.page_table[` opens on one line and the slice bounds,
    read from tensors, follow on the next; the finding sits on the bracket's line."""
    check(
        tmp_path,
        """
        import torch


        class PagedAttention:
            def __init__(self, n):
                self.capacity = torch.zeros(n, dtype=torch.int64, device="cuda")

            def reserve(self, batch_idx, num_pages, allocated):
                start = self.capacity[batch_idx] // self.page_size
                end = start + num_pages
                self.page_table[  # expect: NL604
                    batch_idx,
                    start:end,
                ] = allocated
                return self.page_table[batch_idx, start:end]  # expect: NL604
        """,
        select=["NL604"],
    )


def test_nms_of_an_extension_on_host_boxes_is_host_work(tmp_path):
    """MMCV's `nms_match` copies the boxes to the host and runs its CPU op there."""
    check(
        tmp_path,
        """
        import torch
        from mmcv.utils import ext_loader

        ext_module = ext_loader.load_ext("_ext", ["nms", "nms_match"])


        def nms_match(dets, iou_threshold):
            dets_t = dets.detach().cpu()
            indata_list = [dets_t]
            return ext_module.nms_match(*indata_list, iou_threshold=float(iou_threshold))


        def nms(boxes, scores, thr):
            return ext_module.nms(boxes, scores, iou_threshold=thr)  # expect: NL601
        """,
        select=["NL601"],
    )


def test_the_tensor_of_detectron2_boxes_is_a_tensor(tmp_path):
    """AdelaiDet's CondInst: `per_im_boxes = per_im_gt_inst.gt_boxes.tensor` (detectron2's Boxes hold
    their coordinates in `.tensor`), then a loop over its rows cuts a bitmask at `int(per_box[1])`:
    slice bounds read from the device, and a host read per box."""
    path = tmp_path / "adet/modeling/condinst/condinst.py"
    path.parent.mkdir(parents=True)
    path.write_bytes(
        mirrors.show(
            "aim-uofa/AdelaiDet",
            "36721221eb572256206e60df6e9095ed00b2e08c",
            "adet/modeling/condinst/condinst.py",
        )
    )
    found = {(f.line, f.rule) for f in scan_paths([path], cwd=tmp_path, select=["NL604", "NL705"]).active}
    assert {(308, "NL604"), (308, "NL705")} <= found
