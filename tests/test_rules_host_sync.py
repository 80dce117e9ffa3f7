"""host-sync rules (NL701-NL704): positive and negative cases, loop/step severity, host-side code."""

from __future__ import annotations

from neuronlint.findings import Severity
from tests.annotated_source import check, only


# ---- NL701 .item() ---------------------------------------------------------------------------
def test_item_on_tensors(tmp_path):
    check(
        tmp_path,
        """
        import torch


        def evaluate(model, batch):
            logits = model(batch)
            accuracy = (logits.argmax(-1) == batch.labels).float().mean().item()  # expect: NL701
            return accuracy
        """,
    )


def test_item_not_on_host_values(tmp_path):
    check(
        tmp_path,
        """
        import numpy as np


        def summary(history, weights):
            arr = np.array(history)
            peak = arr.max().item()
            first = arr.item(0)  # numpy's item() takes an index; torch's takes none
            scalar = np.float32(2.5).item()
            n = weights.sum().item()  # expect: NL701
            again = n.item() if hasattr(n, "item") else n  # n is already a Python number
            return peak, first, scalar, again
        """,
    )


def test_item_severity_outside_and_inside_a_loop(tmp_path):
    findings = check(
        tmp_path,
        """
        def train(model, loader, optimizer):
            warmup = model.scale.item()  # expect: NL701
            for batch in loader:
                loss = model(batch)
                loss.backward()
                optimizer.step()
                print(loss.item())  # expect: NL701
            return warmup
        """,
    )
    by_line = {f.line: f for f in findings}
    assert by_line[2].severity is Severity.INFO
    assert by_line[7].severity is Severity.WARNING
    assert "every iteration" in by_line[7].message


def test_item_in_while_and_comprehension_is_in_a_loop(tmp_path):
    findings = check(
        tmp_path,
        """
        def decode(step, state):
            while state.alive.sum().item() > 0:  # expect: NL701, NL603
                state = step(state)
            return [s.item() for s in state.scores]  # expect: NL701
        """,
    )
    assert all(f.severity is Severity.WARNING for f in findings if f.rule == "NL701")


def test_item_in_forward_is_a_per_step_sync(tmp_path):
    findings = check(
        tmp_path,
        """
        import torch


        class Router(torch.nn.Module):
            def forward(self, x):
                load = x.sum().item()  # expect: NL701
                return x * load

            def extra_repr(self):
                return f"scale={self.scale.item()}"  # expect: NL701
        """,
    )
    by_line = {f.line: f for f in findings}
    assert by_line[6].severity is Severity.WARNING and "every call" in by_line[6].message
    assert by_line[10].severity is Severity.INFO


def test_item_in_a_training_step_hook(tmp_path):
    finding = only(
        check(
            tmp_path,
            """
            def training_step(self, batch, batch_idx):
                loss = self.loss(batch)
                self.log("loss", loss.item())  # expect: NL701
                return loss
            """,
        ),
        "NL701",
    )
    assert finding.severity is Severity.WARNING


def test_item_in_comments_docstrings_and_strings_is_not_code(tmp_path):
    check(
        tmp_path,
        '''
        def log_loss(loss):
            """Call loss.item() only every N steps; x.cpu() and x.tolist() also sync."""
            # loss.item() here would sync on every step
            message = "use .item() sparingly; print(x.mean()) syncs too"
            return message
        ''',
    )


# ---- NL702 .tolist() -------------------------------------------------------------------------
def test_tolist_on_tensors_and_not_on_numpy(tmp_path):
    check(
        tmp_path,
        """
        import numpy as np


        def decode(tokens, vocab):
            ids = tokens.argmax(-1).tolist()  # expect: NL702
            ranks = np.argsort(vocab.scores).tolist()
            literal = [1, 2, 3]
            return ids, ranks, literal
        """,
    )


def test_tolist_after_cpu_is_one_copy(tmp_path):
    findings = check(
        tmp_path,
        """
        def to_python(hypos):
            return hypos.detach().cpu().tolist()  # expect: NL703
        """,
    )
    assert only(findings, "NL703").column == 27


# ---- NL703 .cpu() / .numpy() / .to("cpu") ----------------------------------------------------
def test_copies_to_host(tmp_path):
    check(
        tmp_path,
        """
        import torch

        CPU = torch.device("cpu")


        def collect(preds, logits, embeddings):
            preds.append(logits.argmax(-1).cpu())  # expect: NL703
            array = embeddings.numpy()  # ok: NL703 (raises on a device tensor: already on the CPU)
            forced = embeddings.numpy(force=True)  # expect: NL703
            moved = embeddings.to("cpu")  # expect: NL703
            also = embeddings.to(device="cpu", non_blocking=True)  # expect: NL703
            via_device = embeddings.to(torch.device("cpu"))  # expect: NL703
            return array, forced, moved, also, via_device
        """,
    )


def test_host_copy_chains_report_the_first_copy_only(tmp_path):
    check(
        tmp_path,
        """
        def export(t):
            a = t.detach().cpu().numpy()  # expect: NL703
            b = t.to("cpu").numpy()  # expect: NL703
            c = t.to(dtype=None).cpu().float().numpy()  # expect: NL703
            return a, b, c
        """,
    )


def test_to_other_devices_and_dtypes_is_not_a_host_copy(tmp_path):
    check(
        tmp_path,
        """
        import torch


        def prepare(x, device):
            a = x.to(device)
            b = x.to(torch.bfloat16)
            c = x.to(memory_format=torch.channels_last)
            d = x.to(dtype=torch.float32)
            return a, b, c, d
        """,
    )


def test_a_device_chosen_in_if_and_else_is_either(tmp_path):
    # `device` is "cuda" after the `if` body and "cpu" after the `else`: `.to(device=device)` may
    # move to the GPU, so it is not a copy to the host; a literal "cpu" still is.
    check(
        tmp_path,
        """
        import torch


        def pack(weights, use_cuda=True):
            if use_cuda:
                device = "cuda"  # expect: NL101
            else:
                device = "cpu"
            out = {}
            for name, w in weights.items():
                packed = w.to(torch.bfloat16).to(device=device)
                out[name] = packed.to("cpu")  # expect: NL703
            return out
        """,
    )


def test_numpy_on_numpy_results_is_not_a_copy(tmp_path):
    check(
        tmp_path,
        """
        import numpy as np


        def load(path):
            arr = np.load(path)
            table = np.asarray(arr).numpy() if hasattr(arr, "numpy") else arr
            return table
        """,
    )


# ---- NL704 print(tensor) ---------------------------------------------------------------------
def test_print_of_tensor_values(tmp_path):
    findings = check(
        tmp_path,
        """
        import torch


        def debug(x: torch.Tensor, loss, step: int):
            print(x)  # expect: NL704
            print("loss", loss.mean())  # expect: NL704
            print(f"step {step}: norm={x.norm()}")  # expect: NL704
            print(torch.softmax(x, -1))  # expect: NL704
            print("step", step, "shape", x.shape)
            print(f"{step=} {x.dtype}")
            print(loss.item())  # expect: NL701
        """,
    )
    item_line = only(findings, "NL701").line
    assert {f.rule for f in findings if f.line == item_line} == {"NL701"}  # not also NL704


def test_print_inside_the_training_loop_is_a_warning(tmp_path):
    findings = check(
        tmp_path,
        """
        def train(model, loader):
            for step, batch in enumerate(loader):
                out = model(batch)
                print(out.sum())  # expect: NL704
        """,
    )
    assert only(findings, "NL704").severity is Severity.WARNING


def test_print_that_is_redefined_is_not_builtin_print(tmp_path):
    check(
        tmp_path,
        """
        from rich import print


        def show(x):
            print(x.mean())
        """,
    )


# ---- host-side (data pipeline) code ----------------------------------------------------------
def test_dataset_and_collate_code_runs_on_the_host(tmp_path):
    check(
        tmp_path,
        """
        import torch
        from torch.utils.data import Dataset


        class TokenDataset(Dataset):
            def __getitem__(self, index):
                item = self.items[index]
                length = item.ne(self.pad).sum().item()
                return item[item != self.pad].tolist(), length


        class ShardSampler(torch.utils.data.Sampler):
            def __iter__(self):
                return iter(torch.randperm(self.n).tolist())


        def collate_tokens(values, pad):
            return [v.tolist() for v in values if v.numel() > 0]


        def evaluate(model, batch):
            return model(batch).tolist()  # expect: NL702
        """,
    )


def test_only_data_samplers_are_host_code(tmp_path):
    """`torch.utils.data` samplers run in the input pipeline; a class merely named `...Sampler`
    (diffusion, beam or token samplers, and their subclasses in the file) is device code."""
    check(
        tmp_path,
        """
        import torch
        from torch.utils.data import Sampler


        class ChunkSampler(Sampler[list[int]]):
            def chunks(self):
                return torch.randperm(self.n).tolist()


        class LengthSampler(ChunkSampler):
            def lengths(self):
                return self.sizes.tolist()


        class BaseDiffusionSampler:
            def sigmas(self, x):
                return self.discretization(x).cpu()  # expect: NL703


        class EulerSampler(BaseDiffusionSampler):
            def step(self, sigma):
                return sigma.max().item()  # expect: NL701
        """,
    )


def test_a_data_path_file_that_moves_values_to_a_device_is_device_code(tmp_path):
    source = """
        import torch


        def evaluate(model, examples, device):
            model.to(device)
            for tokens in examples:
                loss = model(tokens.to(device))
                print(loss.argmin().item())  # expect: NL701
        """
    check(tmp_path, source, name="dev/data/eval_suite.py")
    check(tmp_path, source.replace("  # expect: NL701", "").replace(".to(device)", ""), name="data/prep.py")


def test_loop_iterable_is_evaluated_once(tmp_path):
    findings = check(
        tmp_path,
        """
        def expand(ids):
            out = []
            for i in ids.tolist():  # expect: NL702
                out.append(i)
            squares = [i * i for i in ids.cpu()]  # expect: NL703
            return out, squares
        """,
    )
    assert {f.severity for f in findings} == {Severity.INFO}


def test_test_code_is_reported_in_the_test_scope(tmp_path):
    """Tests run on the accelerator after porting too: their host reads and tensor branches are
    findings, in the `test` scope (which caps them at warning)."""
    source = """
        import torch


        def test_decoder_output(device):
            out = torch.ones(3, device=device)
            assert out.sum().item() == 3.0  # expect: NL701, NL603
            assert torch.equal(out[out > 0], out)  # expect: NL602, NL603
            print(out.cpu().tolist())  # expect: NL703
        """
    # a test function kept in a source module (`decoder.py`) is test code too (docs/output.md)
    for name in ("tests/models/test_decoder.py", "decoder_test.py", "conftest.py", "decoder.py"):
        findings = check(tmp_path, source, name=name)
        scopes = {f.scope for f in findings}
        assert scopes == {"test"}, (name, scopes)
        assert all(f.severity is not Severity.BLOCKER for f in findings)
    findings = check(
        tmp_path, source.replace("def test_decoder_output", "def decoder_output"), name="decoder.py"
    )
    assert {f.scope for f in findings} == {"source"}


def test_values_after_a_host_copy_are_host_values(tmp_path):
    check(
        tmp_path,
        """
        def split_sizes(sizes):
            sizes_cpu = sizes.cpu()  # expect: NL703
            offset = 0
            while sizes_cpu[offset] > 0:
                offset += 1
            host = sizes_cpu.tolist()
            return offset, host, sizes_cpu.unique(), sizes_cpu.max().item()
        """,
    )


def test_names_that_say_host_are_host_values(tmp_path):
    check(
        tmp_path,
        """
        def export(logits_cpu, cpu_tokens, ids_np, scores):
            a = logits_cpu.view(-1).numpy()
            b = cpu_tokens.tolist()
            c = ids_np[0].item()
            d = scores.tolist()  # expect: NL702
            return a, b, c, d
        """,
    )


def test_tensors_wrapping_numpy_data_are_host_tensors(tmp_path):
    check(
        tmp_path,
        """
        import torch


        def merge(feats, clusters, device):
            feats = torch.from_numpy(feats.copy())
            clust = torch.LongTensor(clusters)
            _, counts = clust.unique_consecutive(return_counts=True)
            pieces, curr = [], 0
            for c in counts:
                c = c.item()
                pieces.append(feats[curr : curr + c].mean(dim=0))
                curr += c
            on_device = feats.to(device)
            t = torch.randint(0, 1000, (1,), device="cpu")
            return pieces, on_device.sum().item(), t.item()  # expect: NL701
        """,
    )


def test_values_moved_to_the_cpu_device_are_host_values(tmp_path):
    check(
        tmp_path,
        """
        import torch


        def splits(input_splits, output_splits):
            input_splits = input_splits.to(torch.device("cpu"), non_blocking=False)  # expect: NL703
            output_splits = output_splits.to("cpu")  # expect: NL703
            return input_splits.tolist(), output_splits.tolist()
        """,
    )


def test_reads_on_the_error_path_only(tmp_path):
    check(
        tmp_path,
        """
        def check_grid(grid, f):
            assert bool((grid % f == 0).all()), f"grid must be divisible by {f}, got {grid.tolist()}"  # expect: NL603
            if grid.numel() == 0:
                raise ValueError(f"empty grid, max={grid.max().item()} on {grid.cpu()}")
            return grid.sum().item()  # expect: NL701
        """,
    )


def test_reads_deferred_by_add_step_closure_are_not_syncs(tmp_path) -> None:
    from tests.conftest import scan_source

    source = (
        "import torch_xla.core.xla_model as xm\n"
        "for step, batch in enumerate(loader):\n"
        "    loss = model(batch)\n"
        "    xm.add_step_closure(lambda value=loss: log(value.item()))\n"
        "    total = loss.item()\n"
    )
    findings = scan_source(tmp_path, source, select=["NL701"])
    assert [f.line for f in findings] == [5]


# ---- formatting, conversions, frequency (issue 10) -------------------------------------------
def test_f_string_fields_are_reported_on_their_own_line(tmp_path):
    findings = check(
        tmp_path,
        """
        import torch


        def report(fused, reference):
            diff = (fused - reference).abs().mean()
            if diff <= 1e-3:  # expect: NL603
                print(
                    f"mean_difference={diff}"  # expect: NL704
                    f" fused={fused[:5].tolist()}"  # expect: NL702
                )
            raise ValueError(f"no match: {diff}")
        """,
    )
    assert "formats a tensor value" in only(findings, "NL704").message


def test_tensors_in_progress_bars_and_number_conversions(tmp_path):
    findings = check(
        tmp_path,
        """
        import torch


        def train(model, loader, pbar):
            total_loss = 0.0
            for step, batch in enumerate(loader):
                loss = model(**batch).loss
                total_loss += loss.detach().float()
                pbar.set_description(f"step {step} (loss: {loss.detach().float()})")  # expect: NL704
            epoch_loss = total_loss / len(loader)
            return float(torch.exp(epoch_loss)), float(epoch_loss)  # expect: NL705
        """,
    )
    by_rule = {f.rule: f for f in findings}
    assert by_rule["NL704"].severity is Severity.WARNING
    assert by_rule["NL705"].severity is Severity.INFO


def test_reads_every_n_steps_are_periodic_info(tmp_path):
    findings = check(
        tmp_path,
        """
        def train(model, loader, log_every):
            for step, batch in enumerate(loader):
                loss = model(batch)
                if step % log_every == 0 and step > 0:
                    print(f"{step}: {loss.mean()}")  # expect: NL704
                    value = loss.item()  # expect: NL701
                if not step % 10:
                    snapshot = loss.cpu()  # expect: NL703
                every = loss.item()  # expect: NL701
        """,
    )
    by_line = {f.line: f for f in findings}
    for line in (5, 6, 8):
        assert by_line[line].severity is Severity.INFO, line
        assert "every N iterations" in by_line[line].message
    assert by_line[9].severity is Severity.WARNING
    assert "every iteration" in by_line[9].message


def test_module_moves_and_host_joins_are_not_syncs(tmp_path):
    check(
        tmp_path,
        """
        import torch


        def export(model, loader, encoder, config):
            model.to("cpu")
            encoder.cpu()
            create_model(config).cpu()  # ControlNet: `model = create_model(cfg).cpu()`
            preds = []
            for batch in loader:
                preds.append(model(batch).argmax(-1).cpu())  # expect: NL703
            labels = torch.cat(preds).numpy()
            result_cpu = preds[0]
            expected = torch.ones(3)
            assert torch.all(result_cpu == expected)
            return labels
        """,
    )


def test_a_list_filled_with_device_values_is_copied_where_it_is_joined(tmp_path):
    """`feats = []` filled by appends of device features, then `feats = torch.cat(feats).cpu()
    .numpy()` and `np.mean(feats)`: the numpy use belongs to the rebound name, not to the list of
    device tensors, so the `.cpu()` of the join is the copy (an evaluation's one-off read: info)."""
    findings = check(
        tmp_path,
        """
        import numpy as np
        import torch


        def stats(model, loader, device):
            feats = []
            for batch in loader:
                feats.append(model(batch.to(device)))
            feats = torch.cat(feats, dim=0).cpu().numpy()  # expect: NL703
            host = []
            for batch in loader:
                host.append(model(batch.to(device)).cpu())  # expect: NL703
            joined = torch.cat(host).cpu()  # ok: NL703
            return np.mean(feats, axis=0), np.cov(feats), joined
        """,
    )
    assert [f.severity.value for f in findings if "torch.cat(feats" in f.snippet] == ["info"]


def test_reads_once_per_epoch_are_info_and_compute_loss_is_a_step(tmp_path):
    findings = check(
        tmp_path,
        """
        import torch


        def train(model, loader, num_epochs):
            for epoch in range(num_epochs):
                total = torch.zeros(())
                for batch in loader:
                    loss = model(batch)
                    for key in batch:
                        batch[key] = batch[key]
                    seen = loss.item()  # expect: NL701
                    total += loss.detach()
                print(f"epoch {epoch}: {total}")  # expect: NL704


        class Trainer:
            def _compute_loss(self, model, inputs):
                loss = model(**inputs).loss
                self.metrics.append(loss.mean().item())  # expect: NL701
                return loss
        """,
    )
    by_line = {f.line: f for f in findings}
    assert by_line[11].severity is Severity.WARNING  # per step, after a small inner loop
    assert by_line[13].severity is Severity.INFO and "once per epoch" in by_line[13].message
    assert by_line[19].severity is Severity.WARNING  # _compute_loss runs once per step


def test_a_value_checked_to_be_a_module_moves_weights(tmp_path):
    # NVlabs/edm's training loop snapshots every module of a dict before pickling it: inside
    # `if isinstance(value, torch.nn.Module):` the `.cpu()` moves weights. The `else` branch and a
    # value checked to be a tensor still copy device values.
    check(
        tmp_path,
        """
        import copy
        import torch


        def snapshot(ema, loss_fn, stats):
            data = dict(ema=ema, loss_fn=loss_fn)
            for key, value in data.items():
                if isinstance(value, torch.nn.Module):
                    value = copy.deepcopy(value).eval().requires_grad_(False)
                    data[key] = value.cpu()
                else:
                    data[key] = value.cpu()  # expect: NL703
            for key, value in stats.items():
                if isinstance(value, torch.Tensor):
                    stats[key] = value.to("cpu")  # expect: NL703
            return data
        """,
        select=["host-sync"],
    )


def test_host_copy_for_one_device_type_leaves_the_name_on_the_device(tmp_path):
    # FastChat serve/inference.py: the logits go to the CPU only on MPS; on the other devices the
    # sampled indices stay on the device and `indices.tolist()` is a per-token sync.
    check(
        tmp_path,
        """
        import torch


        def generate_stream(model, output_ids, device, temperature):
            for i in range(256):
                logits = model(torch.as_tensor([[output_ids[-1]]], device=device)).logits
                last_token_logits = logits[0, -1, :]
                if device == "mps":
                    last_token_logits = last_token_logits.float().to("cpu")  # expect: NL703
                if temperature < 1e-5:
                    _, indices = torch.topk(last_token_logits, 2)
                    tokens = [int(index) for index in indices.tolist()]  # expect: NL702
                else:
                    probs = torch.softmax(last_token_logits, dim=-1)
                    indices = torch.multinomial(probs, num_samples=2)
                    tokens = [int(token) for token in indices.tolist()]  # expect: NL702
                output_ids.append(tokens[0])


        def summarize(values):
            if torch.is_tensor(values):
                values = values.detach().cpu()  # expect: NL703
            return values.numpy()
    """,
    )


# ---- results of the module's own functions (static/tensor_returns.py) ------------------------
def test_reads_of_a_helpers_tensor_results_defined_below(tmp_path):
    """llama-cookbook's train loop unpacks `evaluation()`'s tensors before the walk has read it:
    the reads wait for the end of the module, and only the tensor positions are reported."""
    check(
        tmp_path,
        """
        import torch


        def train(model, loader):
            best = float("inf")
            for epoch in range(3):
                ppl, loss, steps = evaluation(model, loader)
                if loss < best:  # expect: NL603
                    best = loss
                    print(f"best {best}")  # expect: NL704
                print(float(ppl))  # expect: NL705
                print(steps, len(steps))
                print(float(best))  # expect: NL705


        def evaluation(model, loader):
            total = 0.0
            steps = []
            for batch in loader:
                total += model(**batch).loss.detach().float()
            loss = total / len(loader)
            return torch.exp(loss), loss, steps
        """,
    )


def test_helper_defined_above_makes_a_tensor_for_every_checker(tmp_path):
    check(
        tmp_path,
        """
        import torch


        def masked_loss(logits, labels):
            loss = torch.nn.functional.cross_entropy(logits, labels)
            return loss, torch.count_nonzero(labels != -100)


        class Base:
            def forward_logits(self, batch):
                return self.model(batch).logits.float()


        class Trainer(Base):
            def step(self, batch):
                return self.model(batch).logits.softmax(-1)

            def run(self, loader):
                for batch in loader:
                    loss, count = masked_loss(self.model(batch), batch["labels"])
                    assert count > 0  # expect: NL603
                    probs = self.step(batch)
                    print(probs)  # expect: NL704
                    logits = self.forward_logits(batch)
                    print(logits)  # expect: NL704
                    print(float(masked_loss(batch, batch)))
        """,
    )


def test_helper_results_that_are_not_device_tensors(tmp_path):
    """Generators, returns that disagree, data-pipeline helpers, builtins and helpers given host
    data give nothing to report."""
    check(
        tmp_path,
        """
        import numpy as np
        import torch


        def run(model, lengths):
            g = stream(model)
            print(g)
            a = either(model)
            print(a)
            b = collate_fn([1, 2])
            print(b)
            c = float("inf")
            print(f"{c}")
            d = scale(torch.tensor(lengths, dtype=torch.float), 2)
            print(int(d))
            e = imported_helper(model)
            print(e)


        def stream(model):
            yield model.weight.detach()
            return model.weight.detach()


        def either(model):
            if model.training:
                return model.weight.detach()
            return model.weight.detach().cpu()  # expect: NL703


        def collate_fn(rows):
            return torch.stack([torch.as_tensor(r) for r in rows])


        def scale(lengths, factor):
            return torch.div(lengths, factor).ceil()
        """,
    )


def test_a_parameter_named_tensor_is_one(tmp_path):
    # mdlm `utils.print_nans(tensor, name)`: the name says what it holds
    check(
        tmp_path,
        """
        import torch


        def print_nans(tensor, name):
            if torch.isnan(tensor).any():
                print(name, tensor)  # expect: NL704


        def describe(name_tensor: str, tensors):
            print(name_tensor, len(tensors))
        """,
        select=["host-sync"],
    )


def test_a_script_helper_its_code_calls_only_with_host_data(tmp_path):
    """aws-samples' DiffusionDrive port: the metric helpers of a training script receive only the
    `.cpu()` copies the evaluation loop makes, so their reads are host work. A helper also called
    with device data, passed on as a callback, given only literals, or moving data itself keeps
    its findings; so does a public helper of a module that is not a script."""
    check(
        tmp_path,
        """
        import torch


        def bev_iou(pred, gt):
            union = (pred | gt).sum().float()
            if union > 0:
                return ((pred & gt).sum() / union).item()
            return 0.0


        def mixed(pred):
            return pred.mean().item()  # expect: NL701


        def moves(pred, device):
            return pred.to(device).mean().item()  # expect: NL701


        def literal_only(n):
            x = torch.ones(n, device=DEVICE).mean()
            return x.item()  # expect: NL701


        def passed_on(pred):
            return pred.max().item()  # expect: NL701


        def evaluate(model, loader, device):
            for batch in loader:
                out = model(batch.to(device))
                iou = bev_iou(out.detach().cpu(), batch.cpu())  # expect: NL703
                m = mixed(out.cpu()) + mixed(out)  # expect: NL703
                moves(out.cpu(), device)  # expect: NL703
                literal_only(3)
                hook = passed_on
                print(iou, m, hook)


        if __name__ == "__main__":
            evaluate(None, [], "cpu")
        """,
        select=["host-sync", "dynamic-shape"],
    )
    check(
        tmp_path,
        """
        def bev_iou(pred, gt):
            union = (pred | gt).sum().float()
            if union > 0:  # expect: NL603
                return ((pred & gt).sum() / union).item()  # expect: NL701
            return 0.0


        def _private_iou(pred, gt):
            union = (pred | gt).sum().float()
            return ((pred & gt).sum() / union).item()


        def evaluate(out, target):
            return bev_iou(out.cpu(), target.cpu()), _private_iou(out.cpu(), target.cpu())  # expect: NL703
        """,
        name="metrics.py",
        select=["host-sync", "dynamic-shape"],
    )


def test_a_loss_a_criterion_computes_and_values_moved_to_the_device(tmp_path):
    """The plainest training loop: `loss = criterion(out, y)` is a tensor, so is a batch moved with
    `.to(device)` and an elementwise comparison with it; a loss class made, a model moved, a dtype
    cast of another library and a number named like a loss are not."""
    check(
        tmp_path,
        """
        import torch
        import torch.nn as nn
        import triton.language as tl

        criterion = nn.CrossEntropyLoss()


        def train(model, loader, optimizer, device, metric, offsets):
            model = model.to(device)
            best_loss = float("inf")
            loss_fn = SubsequenceLoss(weight=2)
            for x, y in loader:
                x, y = x.to(device), y.to(device)
                out = model(x)
                loss = criterion(out, y)
                loss.backward()
                optimizer.step()
                print(f"loss {loss}")  # expect: NL704
                correct = (out.argmax(-1) == y).sum()
                print(int(correct))  # expect: NL705
                avg_loss = metric.summarize("average")
                print(f"{avg_loss:.4f}", loss_fn, model, best_loss)
                idx = offsets.to(tl.int64)
                print(idx)
        """,
        select=["host-sync"],
    )


def test_loop_items_the_code_does_not_move_stay_on_the_host(tmp_path):
    # BLIP's caption evaluation and Megatron-LM's multimodal generation: the loader's batch comes
    # from the host (the code moves the images), so the ids it never moves are host values
    check(
        tmp_path,
        """
        def evaluate(model, data_loader, device):
            result = []
            for idx, (image, image_id, label) in enumerate(data_loader):
                image = image.to(device)
                label = label.to(device)
                captions = model.generate(image)
                for caption, img_id in zip(captions, image_id):
                    result.append({"image_id": img_id.item(), "caption": caption})
                print(label.sum().item())  # expect: NL701
            return result
        """,
        select=["host-sync"],
    )


def test_a_loss_a_model_returns_and_a_value_a_collective_reduces_are_tensors(tmp_path):
    """modded-nanogpt's validation: `_, loss = model(x, y)` is a tensor, and so is `val_loss` once
    `dist.all_reduce` has reduced it in place, though it started as the number 0."""
    check(
        tmp_path,
        """
        import torch
        import torch.distributed as dist


        def validate(model, loader, steps):
            val_loss = 0.0
            for _ in range(steps):
                x, y = loader.next_batch()
                _, loss = model(x, y)
                print(f"batch loss {loss:.4f}")  # expect: NL704
                val_loss += loss
            print(f"val_loss {val_loss:.4f}")  # expect: NL704


        def validate_summed(model, inputs, targets):
            total = 0
            for x, y in zip(inputs, targets):
                total += model(x, y)
            dist.all_reduce(total, op=dist.ReduceOp.SUM)
            print(f"val_loss {total:.4f}")  # expect: NL704


        def count(batch):
            seen = 0
            seen += len(batch)
            print(f"seen {seen}")
        """,
    )


def test_modules_moved_in_place_and_module_only_methods(tmp_path):
    """`clap.to(device)` as a statement keeps no result: only a module moves in place, so its later
    `clap.to("cpu")` moves weights; so does `.cpu()` followed by `.eval()`, and a deep copy of a
    module. A tensor moved by assignment stays a tensor."""
    check(
        tmp_path,
        """
        import copy

        import torch


        def similarity(load, inputs, device, ema_net, x):
            clap = load()
            clap.to(device)
            with torch.no_grad():
                score = clap(inputs).mean()
            score = score.to("cpu")  # expect: NL703
            clap.to("cpu")
            snapshot = copy.deepcopy(ema_net).cpu().eval()
            other = load().cpu().eval()
            y = x.to(device)
            y.to("cpu")  # expect: NL703
            return score, snapshot, other
        """,
    )


def test_a_container_turned_to_numpy_in_place_holds_host_data(tmp_path):
    """segment-anything's mask generator: `data.to_numpy()` as a statement converts MaskData's
    tensors in place, so the caller's `mask_data["iou_preds"][idx].item()` reads a numpy value; an
    optional post-processing step of its own value under `if` leaves it host data."""
    check(
        tmp_path,
        """
        import torch


        class Generator:
            def generate(self, image):
                mask_data = self._generate_masks(image)
                if self.min_area > 0:
                    mask_data = self.postprocess(mask_data, self.min_area)
                return [mask_data["iou_preds"][i].item() for i in range(len(mask_data["rles"]))]

            def _generate_masks(self, image):
                data = MaskData()
                for crop in image:
                    data.cat(self.process(crop))
                data.to_numpy()
                return data

            def scores(self, image):
                data = MaskData()
                data.cat(self.process(image))
                return [data["iou_preds"][i].item() for i in range(3)]  # expect: NL701
        """,
    )


def test_a_name_read_with_item_holds_a_tensor_from_then_on(tmp_path):
    """pytorch/examples' FSDP T5 loop: `curr_val_loss` comes from a helper of another module;
    `curr_val_loss.item()` shows it is a tensor, so the comparison that follows decides on its value
    and formatting the best loss reads it. Not where the code asks first (`torch.is_tensor(n)`),
    nor for an annotated parameter."""
    check(
        tmp_path,
        """
        import numpy as np
        import torch


        def fit(model, epochs):
            best_val_loss = float("inf")
            for epoch in range(epochs):
                curr_val_loss = validation(model)
                history.append(curr_val_loss.item())  # expect: NL701
                if curr_val_loss < best_val_loss:  # expect: NL603
                    best_val_loss = curr_val_loss
                    print(f"new record {best_val_loss}")  # expect: NL704


        def seq_len(cache):
            n = cache.get_seq_length()
            if torch.is_tensor(n):
                return int(n.item())  # expect: NL701
            return int(n)


        def scaled(acc: np.ndarray):
            total = acc.item()
            return f"{acc} {total}"
        """,
    )


def test_coco_evaluator_stats_are_numpy(tmp_path):
    """DETR-family engines: `coco_evaluator.coco_eval["bbox"].stats` is pycocotools' numpy array,
    so its `.tolist()` copies nothing; a device tensor's `.tolist()` beside it still does."""
    check(
        tmp_path,
        """
        import torch


        def evaluate(model, samples, coco_evaluator, stats):
            outputs = model(samples)
            stats["coco_eval_bbox"] = coco_evaluator.coco_eval["bbox"].stats.tolist()
            stats["ids"] = outputs["pred_logits"].argmax(-1).tolist()  # expect: NL702
            return stats
        """,
    )


def test_an_attribute_a_device_count_is_added_to_is_a_device_tensor(tmp_path):
    """RWKV's trainer counts tokens with `self.tokens += (y >= 0).sum()`: from then on
    `self.tokens` is a device tensor, so the warm-up test on it decides on a device value (NL603)
    and `float(self.tokens)` copies it to the host every step (NL705). A Python counter
    (`self.steps += 1`) stays a number."""
    check(
        tmp_path,
        """
        import torch


        class Trainer:
            def __init__(self, model, config):
                self.model, self.config = model, config
                self.tokens = 0
                self.steps = 0

            def train(self, loader):
                for x, y in loader:
                    x, y = x.to("cuda"), y.to("cuda")
                    self.model(x, y).backward()
                    self.tokens += (y >= 0).sum()
                    self.steps += 1
                    if self.tokens < self.config.warmup_tokens:  # expect: NL603
                        lr = float(self.tokens) / self.config.warmup_tokens  # expect: NL705
                    if self.steps > 10:
                        return lr
        """,
        select=["host-sync", "dynamic-shape"],
    )


def test_layers_and_blocks_moved_to_the_cpu_are_modules(tmp_path):
    """FlatQuant's layer-by-layer calibration offloads each decoder layer when done: `layers[0] =
    layers[0].cpu()`, `model.model.embed_tokens.cpu()`, `layers[i] = layer.to("cpu")` move weights
    and read no value. A hidden state copied to the host still is a copy."""
    check(
        tmp_path,
        """
        import torch


        def calibrate(model, layers, inps):
            layers[0] = layers[0].cpu()
            model.model.embed_tokens = model.model.embed_tokens.cpu()
            for i, layer in enumerate(layers):
                out = layer(inps)
                layers[i] = layer.to("cpu")
                hidden = out.cpu()  # expect: NL703
            return hidden
        """,
        select=["host-sync"],
    )


def test_a_conversion_that_expects_bad_text_parses_a_string(tmp_path):
    """NeMo's metric post-processing: `try: pred = int(pred)` / `except ValueError:` parses a
    model's generated answer, although another branch bound `pred` to a tensor. A conversion under
    a handler of anything else, or in the handler itself, still reads a tensor."""
    check(
        tmp_path,
        """
        import torch


        def cast(pred, label, metric, logits, device):
            if metric == "corr":
                pred = torch.tensor([float(pred)], device=device)
            elif metric == "acc":
                try:
                    pred = int(pred)
                except ValueError:
                    pred = 0
            try:
                n = int(logits.max())  # expect: NL705
            except RuntimeError:
                n = 0
            try:
                label = label.strip()
            except ValueError:
                m = float(logits.sum())  # expect: NL705
            return pred, n
        """,
        select=["host-sync"],
    )


def test_the_absolute_value_of_a_numpy_difference_is_numpy(tmp_path):
    """torchneuronx's simulator check: `float(abs(np.asarray(got) - want).max())` reduces a numpy
    array on the host; the same read of a tensor copies it."""
    check(
        tmp_path,
        """
        import numpy as np
        import torch


        def check_close(got, want, out, target):
            max_err = float(abs(np.asarray(got) - want).max())
            dev_err = float(abs(out - target).max())  # expect: NL705
            return max_err, dev_err
        """,
    )


def test_moves_to_a_working_device_that_is_the_cpu_are_no_copies(tmp_path):
    """sgaseretto/torch_neuronx_exploration's eval.py runs on `device = 'cpu'` (its XLA device line
    commented out): `test_x.to(device)` places data where it is computed. A literal `"cpu"` or a
    name for the host (`cpu_device`) is a copy off the working device."""
    check(
        tmp_path,
        """
        import torch


        def main(model, loader, cpu_device):
            device = 'cpu'
            model = model.to(device)
            for x, y in loader:
                pred = model(x.to(device)).argmax(1)
                hits = pred == y.to(device)
                a = pred.to("cpu")  # expect: NL703
                b = pred.to(cpu_device)  # expect: NL703
        """,
        select=["NL703"],
    )
