"""Host data is not device work: host-sync and dynamic-shape constructs on values that live on the
host (docs/what-counts.md, "Where the data lives" and "Data-pipeline code")."""

from __future__ import annotations

from tests.annotated_source import check


def test_values_of_host_libraries_and_tensors_wrapping_host_data(tmp_path):
    check(
        tmp_path,
        """
        import numpy as np
        import tensorflow as tf
        import tensorflow_datasets as tfds
        import torch
        from scipy.optimize import linear_sum_assignment


        def match(cost, sizes):
            cost = cost.cpu()  # expect: NL703
            indices = [linear_sum_assignment(c[i]) for i, c in enumerate(cost.split(sizes, -1))]
            pairs = [(torch.as_tensor(i), torch.as_tensor(j)) for i, j in indices]
            for i, j in indices:
                if i.max() > 3:  # ok: NL603
                    pass
            rows, cols = linear_sum_assignment(cost[0])
            picked = torch.as_tensor(rows)
            return pairs, picked.tolist(), cols.tolist()  # ok: NL702


        def read_examples(name):
            for example in tfds.as_numpy(tfds.load(name, split="train")):
                label = example["label"].item()  # ok: NL701
            constant = tf.constant([1, 2])
            return constant.numpy()  # ok: NL703


        def lengths(values, logits):
            counts = torch.tensor([len(v) for v in values])
            if counts.max() > 512:  # ok: NL603
                pass
            table = torch.tensor([1, 2, 3])
            moved = torch.tensor([1, 2, 3], device="cuda")  # expect: NL101
            if moved.sum() > 2:  # expect: NL603
                pass
            return table.tolist(), logits.argmax(-1).tolist()  # expect: NL702
        """,
    )


def test_host_containers_pandas_selections_and_dataset_items(tmp_path):
    check(
        tmp_path,
        """
        import torch


        def postprocess(boxes, scores, dataset, df, index):
            result = {"boxes": boxes.cpu(), "scores": scores.cpu()}  # expect: NL703
            keep = result["scores"] > 0.5
            kept = result["boxes"][keep]  # ok: NL602
            print(result["scores"].tolist())  # ok: NL702
            tokens = dataset.get(index).tolist()  # ok: NL702
            filtered = df[(df["task"] == "qa") & (df["model"] == "m")]  # ok: NL602
            models = filtered["model_id"].unique()  # ok: NL601
            rows = df.iloc[[i for i in range(3) if i]]
            labels = torch.unique(torch.Tensor(dataset.get_targets()))  # ok: NL601
            on_device = torch.unique(scores)  # expect: NL601
            return kept, tokens, models, rows, labels, on_device
        """,
    )


def test_a_processor_named_class_that_moves_to_a_device_runs_a_model(tmp_path):
    # openai/point-e's P-FID evaluator: a `FeatureExtractor` base, and a PointNet subclass that
    # puts its models and batches on devices and reads the features back; Hugging Face's audio
    # feature extractors, which work in numpy, stay data-pipeline code.
    check(
        tmp_path,
        """
        import torch


        class FeatureExtractor:
            def features(self, batches):
                raise NotImplementedError


        class PointNetClassifier(FeatureExtractor):
            def __init__(self, model, device):
                self.model = model.to(device)

            def features(self, batches):
                out = []
                for batch in batches:
                    features = self.model(torch.from_numpy(batch).to(dtype=torch.float32, device=self.device))
                    out.append(features.cpu().numpy())  # expect: NL703
                return out


        class InceptionFeatureExtractor:
            def __call__(self, images):
                return self.net(images.cuda()).cpu()  # expect: NL703


        class WhisperFeatureExtractor:
            def __call__(self, waveform):
                x = torch.as_tensor(waveform)
                if x.abs().max() > 1:  # ok: NL603
                    x = x / x.abs().max()
                return x.cpu()  # ok: NL703
        """,
        select=["host-sync", "dynamic-shape"],
    )


def test_processors_tokenizers_collators_and_preprocessing_functions(tmp_path):
    check(
        tmp_path,
        """
        import torch
        from torch import nn
        from transformers import LogitsProcessor


        class DataCollatorSpeechSeq2SeqWithPadding:
            def __call__(self, features):
                labels = self.processor.pad(features)["input_ids"]
                if (labels[:, 0] == self.processor.tokenizer.bos_token_id).all().cpu().item():  # ok: NL603
                    labels = labels[:, 1:]
                return labels


        class ImageProcessor:
            def preprocess(self, image):
                x = torch.as_tensor(image)
                if x.max() > 1:  # ok: NL603
                    x = x / 255
                return x


        class BanTokensProcessor(LogitsProcessor):
            def __call__(self, input_ids, scores):
                if scores.max() > 0:  # expect: NL603
                    scores = scores - 1
                return scores


        class VQTokenizer(nn.Module):
            def forward(self, x):
                if x.abs().max() > 1:  # expect: NL603
                    x = x.clamp(-1, 1)
                return x


        def preprocess_function(examples, tokenizer):
            out = tokenizer(examples["text"])
            lens = torch.tensor([len(x) for x in out["input_ids"]])
            if lens.max().item() > 512:  # ok: NL603, NL701
                pass
            return out


        def build_tokenizer(path, ids):
            tokenizer = load(path)
            return tokenizer, ids.cpu()  # expect: NL703


        def compute_metrics(eval_pred):
            predictions, labels = eval_pred
            labels[labels == -100] = 0  # ok: NL602
            return (predictions.argmax(-1) == labels).mean()


        class Sam(nn.Module):
            def preprocess(self, x):
                if x.max() > 1:  # expect: NL603
                    x = x / 255
                return x
        """,
    )


def test_data_pipeline_paths(tmp_path):
    source = """
        import torch
        from torch import nn


        def pack(samples):
            total = torch.stack(samples)
            if total.sum() > 0:  # ok: NL603
                pass
            return total.tolist()  # ok: NL702


        class PreProcessor(nn.Module):
            def forward(self, ids):
                if ids.max() > 10:  # expect: NL603
                    ids = ids.clamp(max=10)
                return ids
        """
    for name in (
        "scripts/preprocessing/pack.py",
        "pkg/tokenizers/pack.py",
        "pkg/data_utils.py",
        "pkg/preprocess_text.py",
    ):
        check(tmp_path, source, name=name)
    check(
        tmp_path,
        source.replace("  # ok: NL603", "  # expect: NL603").replace("  # ok: NL702", "  # expect: NL702"),
        name="pkg/model_utils.py",
    )


def test_configuration_casts_and_pandas_strings(tmp_path):
    check(
        tmp_path,
        """
        import torch


        class PromptEncoder(torch.nn.Module):
            def epsilon(self, dist, scores):
                type_mask = self.config.token_type_mask
                eps = torch.ones_like(torch.Tensor(type_mask)).to(torch.float32) * 1e-10
                type_mask = torch.Tensor(type_mask).long()
                eps[(type_mask > 0) & (torch.remainder(type_mask, 4) == 1)] = 0.5  # ok: NL602
                if dist.loc.max() > 0:  # expect: NL603
                    pass
                moved = scores.to(torch.float32)
                if moved.sum() > 0:  # expect: NL603
                    pass
                beta = self.args.beta
                scaled = beta * torch.logsumexp(scores / beta, dim=1)  # a Python number decides nothing
                return eps, scaled[0].item()  # expect: NL701


        def highlight(frame, name):
            keep = frame["peft_type"].str.lower() == name
            return frame[~keep], frame[keep]  # ok: NL602
        """,
    )


def test_a_file_without_tensor_libraries_holds_no_device_values(tmp_path):
    source = """
        import pandas as pd
        IMPORT_TORCH


        def pareto(results, task):
            best = results[results.score > results.score.max() - 1]  # ok: NL602
            if best.score.max() > 0.5:  # ok: NL603
                pass
            return best.score.tolist(), len(pd.unique(results.model))  # ok: NL702
        """
    check(tmp_path, source.replace("IMPORT_TORCH", "import json"))
    check(
        tmp_path,
        source.replace("IMPORT_TORCH", "import torch")
        .replace("  # ok: NL602", "  # expect: NL602")
        .replace("  # ok: NL603", "  # expect: NL603")
        .replace("  # ok: NL702", "  # expect: NL702"),
    )


def test_checkpoints_loaded_to_the_cpu_and_copies_of_host_values(tmp_path):
    check(
        tmp_path,
        """
        import copy

        import torch


        def inspect(path, image, logits):
            state = torch.load(path, map_location="cpu")
            for name, value in state.items():
                if value.numel() == 1:
                    print(name, value.item())  # ok: NL701
            on_gpu = torch.load(path, map_location="cuda")  # expect: NL101
            step = on_gpu["step"].item()  # expect: NL701
            shown = copy.deepcopy(image.detach().cpu())  # expect: NL703
            array = shown.numpy()  # ok: NL703
            again = copy.deepcopy(logits)
            return step, array, again.numpy(force=True)  # expect: NL703
        """,
    )


def test_a_loaded_model_moved_to_the_cpu_is_not_a_host_read(tmp_path):
    check(
        tmp_path,
        """
        import transformers


        def convert(path, hidden):
            device = "cpu"
            model = transformers.AutoModelForCausalLM.from_pretrained(path).to(device)  # ok: NL703
            # `device` is where this code computes: moving there places data (test_rules_host_sync's
            # working-device case); the literal "cpu" is a copy off the device
            return model, hidden.to(device), hidden.to("cpu")  # expect: NL703
        """,
    )


def test_iterator_protocol_and_moves_to_the_cpu_device(tmp_path):
    check(
        tmp_path,
        """
        import torch


        class Chunk:
            def move(self, device):
                if device.type == "cpu":
                    self.cpu_shard = self.cuda_shard.to("cpu")  # expect: NL703
                return self


        class TokenCounter:
            def __next__(self):
                batch = next(self.iterator)
                return [len(self.tokenizer.decode(b.tolist())) for b in batch["text"]]  # ok: NL702
        """,
    )


def test_a_cast_of_host_data_moved_to_a_device_is_a_device_dtype(tmp_path):
    check(
        tmp_path,
        """
        import torch


        def inputs(device):
            ids = [1, 2, 3]
            wide = torch.tensor(ids).double().to(device)  # expect: NL501
            on_gpu = torch.tensor(ids).double().cuda()  # expect: NL501, NL101
            kept = torch.tensor(ids).double().to("cpu")  # ok: NL501
            host = torch.tensor(ids).double()  # ok: NL501
            return wide, on_gpu, kept, host
        """,
    )


def test_a_comprehension_in_one_branch_does_not_rebind_a_tensor_elsewhere(tmp_path):
    check(
        tmp_path,
        """
        import torch


        def log_conditionings(batch, key):
            x = batch[key]
            if x.dim() == 1:
                x = [str(x[i].item()) for i in range(x.shape[0])]  # expect: NL701
            elif x.dim() == 2:
                x = ["x".join(str(v) for v in x[i].tolist()) for i in range(x.shape[0])]  # expect: NL702
            return x
        """,
    )


def test_copy_constructors_of_python_data_make_cpu_tensors(tmp_path):
    # `torch.tensor(obj.field)` copies whatever Python data it is given into a new CPU tensor;
    # what is computed from it with torch functions and methods stays on the CPU.
    check(
        tmp_path,
        """
        import torch


        def split_on_markers(result, marker_id, step):
            ids = torch.tensor(result.ids)
            is_marker = ids.ge(marker_id)
            last_two = is_marker[-2:].tolist()  # ok: NL702
            pairs = torch.where(is_marker[:-1] & is_marker[1:])[0]  # ok: NL601
            if len(pairs) > 0:  # ok: NL603
                for cut in pairs.tolist():  # ok: NL702
                    first = ids[cut].item()  # ok: NL701
            found = ids[is_marker.nonzero().flatten()]  # ok: NL601
            scale = torch.Tensor(result.scales).mean().item()  # ok: NL701
            return last_two, first, found, scale


        def total_norm(tensor_lists):
            total = torch.norm(torch.tensor([[torch.norm(t) for t in ts] for ts in tensor_lists]))
            return float(total)  # expect: NL705


        def on_device(logits, lengths):
            picked = torch.where(logits > 0)  # expect: NL601
            counts = torch.tensor(lengths, device="cuda")  # expect: NL101
            again = torch.as_tensor(logits)
            return picked, counts.tolist(), again.tolist()  # expect: NL702
        """,
    )


def test_bare_numpy_means_the_tensor_is_already_on_the_cpu(tmp_path):
    # `.numpy()` raises on a device tensor: where it runs, the copy was made earlier (and is
    # reported there). `.numpy(force=True)` copies from the device itself.
    check(
        tmp_path,
        """
        import torch


        def draw(masks, logits):
            for mask in masks:
                pixels = mask.numpy()  # ok: NL703
            probs = logits.softmax(-1).cpu().numpy()  # expect: NL703
            forced = logits.numpy(force=True)  # expect: NL703
            return pixels, probs, forced
        """,
    )


def test_values_handed_to_numpy_are_host_arrays(tmp_path):
    # An evaluator that passes a value to numpy, or reads a bare .numpy() from it (both raise on a
    # device tensor), holds it on the host in that function: its masks and branches are numpy
    # work; not when the function copies it to the host itself, nor when it tests types.
    check(
        tmp_path,
        """
        import numpy as np
        import torch


        def summarize(stats, key, rows):
            s = stats[key]
            s = s[:, rows]
            if len(s[s > -1]) == 0:  # ok: NL602
                return -1
            return np.mean(s[s > -1])  # ok: NL602


        def crop(region, y, x):
            cropped = region[y:, x:]
            if cropped.sum() == 0:  # ok: NL603
                return None
            return np.require(cropped, requirements=["F"])


        def pick(points, valid, scores):
            chosen = torch.from_numpy(points[valid > -1])  # ok: NL602
            kept = scores[scores > 0.5]  # expect: NL602
            return chosen, kept


        def to_json(instances):
            boxes = instances.boxes.numpy()
            return boxes, instances.scores.tolist()  # ok: NL702


        def paste(mask, size):
            if mask.sum() > 0:  # expect: NL603
                image = np.asarray(mask.cpu())  # expect: NL703
                return image
            return np.zeros(size)


        def convert(box):
            if isinstance(box, np.ndarray):
                return np.asarray(box)
            return box.double()  # expect: NL501


        def instance_masks(panoptic, scores):
            for label in np.unique(panoptic.cpu().numpy()):  # expect: NL703
                mask = panoptic == label
                picked = scores[mask]  # expect: NL602
                shifted = scores[scores == label + 1]  # expect: NL602
            return picked, shifted


        def closest(us, vs, parts):
            for i in np.arange(24):
                points = np.array([us[parts == (i + 1)], vs[parts == (i + 1)]])  # ok: NL602
            return points
        """,
    )


def test_helpers_of_the_module_that_return_host_values(tmp_path):
    """A call of a function (or a method of the same class) of this module whose every return is a
    host value gives a host value; a helper that returns its argument, or a device value on one of
    its ways, does not."""
    check(
        tmp_path,
        """
        import numpy as np
        import torch


        def maybe_zero_3(param, ignore_status=False, name=None):
            if hasattr(param, "ds_id"):
                with param.gathered():
                    param = param.data.detach().cpu().clone()  # expect: NL703
            else:
                param = param.detach().cpu().clone()
            return param


        def passthrough(param):
            return param.detach()


        def sometimes_moved(param, keep):
            if keep:
                return param.cpu()  # expect: NL703
            return param.to("cuda")  # expect: NL101


        def load_table(path):
            return torch.from_numpy(np.load(path))


        def state(named_params):
            saved = {k: maybe_zero_3(v, ignore_status=True).cpu() for k, v in named_params}  # ok: NL703
            kept = {k: passthrough(v).cpu() for k, v in named_params}  # expect: NL703
            mixed = {k: sometimes_moved(v, True).cpu() for k, v in named_params}  # expect: NL703
            return saved, kept, mixed, load_table("t.npy").tolist()  # ok: NL702


        class MaskData:
            def to_numpy(self):
                for k, v in self._stats.items():
                    self._stats[k] = v.float().detach().cpu().numpy()  # expect: NL703


        class Generator:
            def generate(self, image):
                mask_data = self._generate_masks(image)
                records = []
                for idx in range(len(mask_data["rles"])):
                    records.append(mask_data["iou_preds"][idx].item())  # ok: NL701
                return records

            def _generate_masks(self, image):
                data = MaskData()
                data.to_numpy()
                return data
        """,
    )


def test_instance_attributes_assigned_only_host_values(tmp_path):
    """`self.sigmas` of a class that assigns it only host values (numpy schedules wrapped by
    `torch.from_numpy`, moved with `.to("cpu")`) is host data in the methods after those
    assignments; one assignment of a device value makes it a device value again."""
    check(
        tmp_path,
        """
        import numpy as np
        import torch


        class Scheduler:
            def __init__(self, num_train_timesteps=1000, shift=1.0):
                alphas = np.linspace(1, 1 / num_train_timesteps, num_train_timesteps)[::-1].copy()
                sigmas = torch.from_numpy(1.0 - alphas).to(dtype=torch.float32)
                sigmas = shift * sigmas / (1 + (shift - 1) * sigmas)
                self.sigmas = sigmas
                self.sigmas = self.sigmas.to("cpu")  # ok: NL703
                self.sigma_min = self.sigmas[-1].item()  # ok: NL701

            def set_timesteps(self, sigmas):
                self.sigmas = torch.from_numpy(sigmas)
                self.sigmas = self.sigmas.to("cpu")  # ok: NL703

            def step(self, sample):
                return sample * self.sigmas[0].item()  # ok: NL701


        class DeviceSchedule:
            def __init__(self, n):
                self.sigmas = torch.linspace(1, 0, n).numpy()

            def set_timesteps(self, n, device):
                self.sigmas = torch.linspace(1, 0, n, device=device)

            def step(self, sample):
                return sample * self.sigmas[0].item()  # expect: NL701
        """,
    )


def test_cpu_generators_loader_items_and_indices_of_kept_boxes(tmp_path):
    """Draws from a CPU `torch.Generator` are CPU tensors; a loop item the loop moves to the device
    into another name came from the host; the items of an NMS result are integer indices, not
    boolean masks."""
    check(
        tmp_path,
        """
        import torch
        from torchvision.ops.boxes import batched_nms


        class Solver:
            def __init__(self):
                self.rng = torch.Generator()
                self.rng.manual_seed(1234)

            def evaluate(self, loader):
                for idx, batch in enumerate(loader):
                    x = batch.to(self.device)
                    y_pred = self.model(x).cpu()  # expect: NL703
                    y = batch.cpu()  # ok: NL703
                    if torch.rand(1, generator=self.rng).item() < self.p:  # ok: NL603, NL701
                        y = y.flip(-1)

            def train(self, loader, hidden):
                for batch in loader:
                    batch = batch.to(self.device)
                    y = batch.cpu()  # expect: NL703
                moved = hidden.to(self.device)
                return hidden.cpu(), moved  # expect: NL703


        class AttributeDropout(Solver):
            def forward(self, samples, p):
                for condition in samples:
                    if torch.rand(1, generator=self.rng).item() < p:  # ok: NL603, NL701
                        condition.clear()


        def random_subset(dataset, max_samples, seed=42):
            generator = torch.Generator().manual_seed(seed)
            perm = torch.randperm(len(dataset), generator=generator)
            return torch.utils.data.Subset(dataset, perm[:max_samples].tolist())  # ok: NL702


        def refine(masks, boxes, scores, rles):
            keep_by_nms = batched_nms(boxes.float(), scores, torch.zeros_like(boxes[:, 0]), 0.7)  # expect: NL601
            for i_mask in keep_by_nms:
                if scores[i_mask] == 0.0:  # ok: NL602
                    rles[i_mask] = masks[i_mask]  # ok: NL602
            return masks[valid_mask]  # expect: NL602
        """,
    )


def test_filled_factories_without_a_device_are_cpu_tables(tmp_path):
    # apex's 2:4 sparsity patterns and peft's RandLoRA bases: `torch.zeros(m)` with Python sizes and
    # no device is a CPU tensor, so reading it back or masking it is host work. Given a device, or
    # sized by a device tensor, it is not.
    check(
        tmp_path,
        """
        import torch
        from itertools import permutations


        def valid_patterns(m, n, device, counts):
            patterns = torch.zeros(m)
            patterns[:n] = 1
            unique = list(set(permutations(patterns.tolist())))  # ok: NL702
            sparse = torch.zeros((m, n))
            sparse[sparse < 0.5] = -1  # ok: NL602
            placed = torch.zeros(m, device=device)
            if placed.sum() > 0:  # expect: NL603
                pass
            return unique, sparse, placed.tolist()  # expect: NL702
        """,
    )


def test_a_number_accumulating_a_device_tensor_becomes_one(tmp_path):
    # fla's perplexity loop: `total_tokens = 0` then `+= mask.sum()` holds a device tensor, and
    # formatting it in the progress bar reads it; `+= loss.item()` keeps a number.
    check(
        tmp_path,
        """
        import torch


        def evaluate(loader, device):
            total_tokens = 0
            total_loss = 0
            for batch in loader:
                input_ids = batch.to(device)
                total_tokens += input_ids.ne(-100).sum()
                total_loss += input_ids.float().mean().item()  # expect: NL701
                print(f"{total_tokens:10} tokens, {total_loss}")  # expect: NL704
        """,
    )


def test_module_casts_and_eval_return_the_module(tmp_path):
    # `AutoModel.from_pretrained(p).bfloat16().eval()` and `model.half()` are modules: printing one
    # reads no tensor value.
    check(
        tmp_path,
        """
        import torch
        from transformers import AutoModelForCausalLM


        def load(path, hidden):
            model = AutoModelForCausalLM.from_pretrained(path).bfloat16().eval()
            print(f"{model}")  # ok: NL704
            encoder = torch.nn.Linear(4, 4).half()
            print(f"{encoder}")  # ok: NL704
            scaled = hidden.half()
            print(f"{scaled}")  # expect: NL704
        """,
    )


def test_filled_factories_under_a_default_device_are_not_host_data(tmp_path):
    check(
        tmp_path,
        """
        import torch

        torch.set_default_device("cuda")  # expect: NL101


        def counts(m):
            table = torch.zeros(m)
            return table.tolist()  # expect: NL702
        """,
    )


def test_a_device_variable_named_for_the_cpu_is_the_cpu(tmp_path):
    # detectron2's predictors (and Detic's copy): `self.cpu_device = torch.device("cpu")`, then each
    # prediction is moved there for drawing; what was moved is host data.
    check(
        tmp_path,
        """
        import torch


        class VisualizationDemo:
            def __init__(self, predictor):
                self.cpu_device = torch.device("cpu")
                self.predictor = predictor

            def run_on_image(self, image, visualizer):
                predictions = self.predictor(image)
                sem_seg = predictions["sem_seg"].argmax(dim=0).to(self.cpu_device)  # expect: NL703
                if sem_seg.max() > 0:  # ok: NL603
                    visualizer.draw_sem_seg(sem_seg)
                moved = predictions["sem_seg"].to(self.device)
                return moved
        """,
    )


def test_a_model_traced_for_neuron_works_on_cpu_tensors(tmp_path):
    # aws-samples' FastAPI server for Inferentia: the traced model takes the tokenizer's CPU tensors
    # and returns CPU tensors; reading them is host work. A module the file defines (what it may
    # trace) keeps its findings.
    check(
        tmp_path,
        """
        import torch
        import torch_neuronx  # expect: NL903


        class Head(torch.nn.Module):
            def forward(self, x):
                if x.sum() > 0:  # expect: NL603
                    return x
                return -x


        def answer(model, encoded):
            output = model(encoded["input_ids"], encoded["attention_mask"])
            start = torch.argmax(output[0])
            end = torch.argmax(output[1]) + 1
            if end > start:  # ok: NL603
                return encoded["input_ids"][0][start:end]  # ok: NL604
            return output[0].tolist()  # ok: NL702
        """,
    )


def test_a_loss_divided_by_a_number_read_is_still_a_tensor(tmp_path):
    # hszhao/semseg's train loop: `n = count.item()`, then `main_loss = main_loss / n`; the loss is
    # still on the device, and `main_loss.item()` reads it every step.
    check(
        tmp_path,
        """
        import torch
        import torch.distributed as dist


        def train(model, loader, meter, distributed):
            for x, y in loader:
                x, y = x.cuda(), y.cuda()  # expect: NL101
                out, main_loss = model(x, y)
                main_loss.backward()
                n = x.size(0)
                if distributed:
                    count = y.new_tensor([n])
                    dist.all_reduce(count)
                    n = count.item()  # expect: NL701
                    main_loss = main_loss / n
                meter.update(main_loss.item(), n)  # expect: NL701
        """,
    )


def test_a_plain_function_of_numpy_arrays_returns_numpy(tmp_path):
    # YOLOv6's plot_train_batch: the targets are made numpy, and the boxes a helper computes from
    # them are numpy too.
    check(
        tmp_path,
        """
        import torch
        from yolov6.utils.general import xywh2xyxy


        def plot_batch(targets, bs, w):
            if isinstance(targets, torch.Tensor):
                targets = targets.cpu().numpy()  # expect: NL703
            for i in range(bs):
                ti = targets[targets[:, 0] == i]
                boxes = xywh2xyxy(ti[:, 2:6]).T
                if boxes.max() <= 1.01:  # ok: NL603
                    boxes[[0, 2]] *= w
                for box in boxes.T.tolist():  # ok: NL702
                    print(box)
        """,
    )
