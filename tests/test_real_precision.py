"""Constructs that are not findings, on real files from public repositories: dtype tables, data
that lives on the host, device abstractions (docs/what-counts.md).

Each case names a Python file by its git blob id in a local mirror of its repository
(`/work/.mirror/<owner>+<name>/repo`, or $NEURONLINT_MIRRORS); the blob is read with `git cat-file`,
written under its own path into a temporary directory and scanned there, so that path-based sites
(tests/, data/) are the real ones. Only the ids and the (line, rule) pairs are committed, labelled
by reading the files: `present` must be reported, `absent` must not. A case is skipped when its
mirror or blob is not available. None of these files is in benchmarks/accuracy/; the whisper and
detectron2 cases come from the judged worksheets of a finished precision audit.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests import mirrors
from tests.conftest import scan_paths

CASES = [
    # (repository, path, blob, present {(line, rule)}, absent {(line, rule)})
    (
        "NVIDIA/NeMo",
        "nemo/lightning/io/fdl_torch.py",
        "70a181c8e380e0f08df5a94ea8d6e5046f01284b",
        set(),
        # a table of (dtype, importable name) pairs for serialisation: no tensor is made there
        {(45, "NL507"), (49, "NL501"), (50, "NL502"), (51, "NL502")},
    ),
    (
        "hpcaitech/ColossalAI",
        "colossalai/lazy/construction.py",
        "6764eaf774abb43303f03eb85ebfe6cd95e869ca",
        set(),
        # {"DoubleTensor": torch.double, ...}: the dtype of each legacy constructor, looked up by name
        {(36, "NL501"), (43, "NL507")},
    ),
    (
        "huggingface/peft",
        "src/peft/utils/incremental_pca.py",
        "de4a7c05174dc436f4c75965ef9585afb480183c",
        # float64 sums and .double() where the statistics are computed
        {(154, "NL501"), (158, "NL501"), (172, "NL501")},
        {(100, "NL501")},  # valid_dtypes = [torch.float32, torch.float64]: a list checked against
    ),
    (
        "huggingface/trl",
        "tests/test_utils.py",
        "9f9b1289f685d40594e850b060bbece5eda708b0",
        # @pytest.mark.parametrize("dtype", [torch.float64, ...]): the test runs in each dtype
        {(618, "NL501"), (867, "NL501"), (886, "NL501")},
        {(621, "NL501")},  # `if dtype in (torch.float64, torch.float32)`: a comparison
    ),
    # ---- host data
    (
        "huggingface/peft",
        "examples/int8_training/peft_adalora_whisper_large_training.py",
        "ff6ec275b2267f82f0f6e3f43d61fb0829dc6dd0",
        {(390, "NL703")},  # labels = batch["labels"].cpu().numpy() in the evaluation loop
        # DataCollatorSpeechSeq2SeqWithPadding.__call__: a collator, run in the loader workers
        {(356, "NL603"), (356, "NL703")},
    ),
    (
        "huggingface/trl",
        "trl/experimental/utils.py",
        "26edd89abd11cf3a30fba5e28a5f1ea6e05b4de8",
        set(),
        # DataCollatorForVisionLanguageChatML.torch_call builds label masks on the CPU
        {(606, "NL602"), (607, "NL602"), (615, "NL702")},
    ),
    (
        "huggingface/trl",
        "trl/trainer/sft_trainer.py",
        "c88601cebc6fef046ef272c16bd417afe43ae5cc",
        {(1760, "NL701")},  # a metric read in the trainer
        {(502, "NL602")},  # DataCollatorForLanguageModeling.torch_call
    ),
    (
        "huggingface/peft",
        "method_comparison/processing.py",
        "fc49f5f0c4e99dcd23f9238eedef83efc887dab5",
        set(),
        # df[df["task_name"] == task_name] and its column's .unique(): pandas
        {(287, "NL602"), (288, "NL601"), (292, "NL602")},
    ),
    (
        "huggingface/peft",
        "examples/corda_finetuning/corda_finetuning.py",
        "ef8a23f66e83605db1cbf94846fe1e16105f0111",
        {(93, "NL703")},  # {key: value.cpu() ...} of a model's state dict
        {(135, "NL701")},  # _tokenize_fn: counts over tokenizer outputs
    ),
    (
        "facebookresearch/dinov2",
        "dinov2/eval/linear.py",
        "1bd4c5de5a041be8a188f007257d1e91b6d6921e",
        {(294, "NL701")},
        {(499, "NL601")},  # torch.unique(torch.Tensor(train_dataset.get_targets().astype(int)))
    ),
    (
        "EleutherAI/gpt-neox",
        "megatron/text_generation_utils.py",
        "b6b6b6a9894041ead24249e85ed1d57db565ac13",
        {(512, "NL703")},  # generated tokens copied to the host
        {(891, "NL702")},  # dataset.get(j).tolist(): an indexed dataset's item
    ),
    (
        "huggingface/peft",
        "src/peft/tuners/cpt/model.py",
        "4d7b29491eeba86c0e0359f7d80a6b532da3df0b",
        {(199, "NL602")},  # the loss masked by the labels, on the device
        # epsilon = torch.ones_like(torch.Tensor(self.config.cpt_tokens_type_mask)): configuration data
        {(120, "NL602"), (121, "NL602"), (122, "NL602")},
    ),
    (
        "huggingface/peft",
        "method_comparison/app.py",
        "ec7bbff993532ee0d3146447e773e0b796f828a5",
        set(),
        {(390, "NL602"), (442, "NL602")},  # a Gradio app over pandas frames: no torch import
    ),
    (
        "openai/whisper",
        "whisper/transcribe.py",
        "0a4cc3623991154263814409f20bd44e8c6ad394",
        {(129, "NL106")},
        # tokens = torch.tensor(result.tokens): a CPU tensor of decoded ids, and what is computed
        # from it (.ge(), torch.where(...), .nonzero()) and read from it (.tolist(), .item())
        {
            (340, "NL702"),
            (342, "NL601"),
            (344, "NL603"),
            (346, "NL702"),
            (354, "NL701"),
            (357, "NL701"),
            (375, "NL701"),
            (380, "NL601"),
            (381, "NL603"),
            (383, "NL701"),
            (387, "NL701"),
        },
    ),
    (
        "facebookresearch/detectron2",
        "detectron2/evaluation/coco_evaluation.py",
        "fe8142cda29613ce1cf78523e422bf598128f590",
        set(),
        {(674, "NL602"), (677, "NL602")},  # s = self.eval["precision"], handed to np.mean: numpy
    ),
    (
        "facebookresearch/detectron2",
        "projects/DensePose/densepose/evaluation/densepose_coco_evaluation.py",
        "16bcec6a08921eb62f22ece337821d7ce9e7e591",
        {(1189, "NL703")},
        # numpy arrays handed to np.require / np.mean / torch.from_numpy; bare .numpy() of CPU results
        {(235, "NL603"), (541, "NL703"), (556, "NL703"), (705, "NL602"), (1070, "NL602"), (1073, "NL602")},
    ),
    (
        "facebookresearch/detectron2",
        "detectron2/utils/visualizer.py",
        "612468d377e238b45e41b4271813aed11d714333",
        set(),
        {(169, "NL703"), (1248, "NL703")},  # bare .numpy(): the tensors are on the CPU already
    ),
    (
        "facebookresearch/detectron2",
        "detectron2/tracking/bbox_iou_tracker.py",
        "598081cb542ce64dd1d100c0d3e12a59f57b8e0e",
        set(),
        {(250, "NL703")},
    ),
    # ---- tuning material from the session-4 audit (benchmarks/precision/fresh2)
    (
        "NVlabs/stylegan3",
        "torch_utils/ops/bias_act.py",
        "b2b53d7da34c76d53251bb9cbc2eb071c50af921",
        {(84, "NL111")},  # `x.device.type == 'cuda'`: a device test
        # impl='cuda' (a parameter default) and `assert impl in ['ref', 'cuda']` name an implementation
        {(52, "NL101"), (83, "NL111")},
    ),
    (
        "salesforce/LAVIS",
        "lavis/common/annotator/openpose/body.py",
        "7c3cf7a388b4ac81004524e64125e383bdd455bd",
        {(18, "NL101")},  # self.model.cuda()
        {(19, "NL101")},  # print('cuda'): message text
    ),
    (
        "facebookresearch/pytorch3d",
        "pytorch3d/structures/volumes.py",
        "84edf33db0ad7adf7c4ebda4ebb5a88254e3fc4b",
        set(),
        {(467, "NL703"), (1136, "NL703")},  # def cpu(self): return self.to("cpu")
    ),
    (
        "axolotl-ai-cloud/axolotl",
        "src/axolotl/utils/schemas/enums.py",
        "e44a3e1bfb96228f0d1654d225d6e9f2775956f1",
        set(),
        {(11, "NL505")},  # a member of an Enum of quantization dtypes
    ),
    (
        "axolotl-ai-cloud/axolotl",
        "src/axolotl/cli/utils/lora_merge.py",
        "35b01fe377aac8b04de015882cf688c6fe517306",
        set(),
        {(1330, "NL505")},  # getattr(torch, "float8_e5m2", torch.float8_e4m3fn) in a set of dtypes
    ),
    (
        "axolotl-ai-cloud/axolotl",
        "src/axolotl/integrations/diffusion/generation.py",
        "ec517fd238a42737f664a6ca2bcd1c09d165ab0f",
        set(),
        {(250, "NL701")},  # torch.rand(1).item(): a random number on the CPU
    ),
    (
        "speechbrain/speechbrain",
        "speechbrain/nnet/attention.py",
        "1ebf27b7d9880d0a076739901350456e8a98c113",
        set(),
        {(1004, "NL501")},  # torch.float64 if dtype == torch.float64 else torch.float32
    ),
    (
        "speechbrain/speechbrain",
        "recipes/LibriMix/separation/train.py",
        "24c870e50d57a16dfc1c2ac9863e7f525fbf7729",
        {(365, "NL701"), (349, "NL703")},  # reads of the model's outputs
        # randstart = torch.randint(0, 1 + max(...), (1,)).item(): a random number drawn on the CPU
        # (the slice bounds taken from it, 279 and 282, stay dynamic-shape findings)
        {(277, "NL701")},
    ),
    # ---- host data that only the data flow shows (the judged worksheets of the session-5 audit)
    (
        "haotian-liu/LLaVA",
        "llava/train/train.py",
        "477c668b62a30da69a6efc630c736fe319970bae",
        {(217, "NL703")},  # the state dict copied to the host at save
        # maybe_zero_3(v).cpu(): the helper of this module returns param.detach().cpu().clone()
        {(159, "NL703"), (165, "NL703")},
    ),
    (
        "facebookresearch/sam2",
        "sam2/automatic_mask_generator.py",
        "065e469e27c2d3af40d51d072031e828692c799b",
        {(241, "NL601")},  # batched_nms of the crops' boxes
        # mask_data from self._generate_masks, which ends with data.to_numpy(); i_mask iterates
        # over the NMS result: an integer index, not a boolean mask
        {(215, "NL701"), (217, "NL701"), (429, "NL602"), (430, "NL602"), (431, "NL602"), (432, "NL602")},
    ),
    (
        "Wan-Video/Wan2.1",
        "wan/utils/fm_solvers_unipc.py",
        "fb502f2eb2840c74d04bf0513d280283625b0040",
        {(634, "NL601")},  # nonzero of the timesteps
        # self.sigmas holds torch.from_numpy(...) schedules moved with .to("cpu") in every method
        {(131, "NL703"), (133, "NL701"), (134, "NL701"), (228, "NL703")},
    ),
    (
        "Wan-Video/Wan2.1",
        "wan/utils/fm_solvers.py",
        "17bef8500030fbd2671ba5ec0017ea816405706b",
        {(685, "NL601"), (693, "NL701")},
        {(200, "NL701")},  # self.sigma_min = self.sigmas[-1].item() of a numpy-made schedule
    ),
    (
        "facebookresearch/audiocraft",
        "audiocraft/solvers/watermark.py",
        "0ae90c7f568e11dccc5424849cd3edca17e19286",
        {(424, "NL703")},  # x_wm.cpu(): the model's output
        {(425, "NL703")},  # batch.cpu() of the loader's item, moved to the device as x = batch.to(...)
    ),
    (
        "facebookresearch/audiocraft",
        "audiocraft/utils/utils.py",
        "bc9d9f390741faaa0e583ad53b552d74e248027b",
        set(),
        {(54, "NL702")},  # torch.randperm(n, generator=torch.Generator().manual_seed(seed)).tolist()
    ),
]


@pytest.mark.parametrize("repo, path, blob, present, absent", CASES, ids=[f"{c[0]}:{c[1]}" for c in CASES])
def test_real_lines(tmp_path: Path, repo: str, path: str, blob: str, present: set, absent: set) -> None:
    target = tmp_path / path
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_bytes(mirrors.blob(repo, blob))
    findings = scan_paths([tmp_path], cwd=tmp_path, select=["ALL"]).active
    found = {(f.line, f.rule) for f in findings}
    assert present <= found, f"missing: {sorted(present - found)}"
    assert not (absent & found), f"reported but must not be: {sorted(absent & found)}"
