"""Configuration files (YAML, JSON, TOML) recognised by the keys that matter, read line by line.

No YAML/JSON/TOML loader runs here: a key and its scalar value are matched on their own line, so a
finding sits on the key's line and nothing in the file is ever constructed or executed. A file with
none of these keys yields nothing; that is how a config is told from any other YAML.

Rules: NL060 a CUDA device (`device: cuda`, `device_type`, `*_device`, `accelerator: gpu`),
NL061 the NCCL backend (`backend: nccl`, `dist_backend`, `ddp_backend`, ...), NL062 an accelerate
`distributed_type` that launches on CUDA GPUs, NL063 DeepSpeed (a DeepSpeed config's
`zero_optimization`, an accelerate/Trainer `deepspeed` / `deepspeed_config` key), NL064 fp16 mixed
precision (`precision: 16-mixed`, `mixed_precision: fp16`, `fp16: true`, DeepSpeed `fp16.enabled`),
NL065 HF `optim: adamw_torch_fused`. In YAML files also the manifest rules: NL044
`nvidia.com/gpu`, NL031 compose `runtime: nvidia` / `driver: nvidia`, NL040/NL041 environment
variable names, NL030/NL080 images, and the shell rules for one-line `command:`/`run:`/`args:`
values.
"""

from __future__ import annotations

import re
from typing import Any

from neuronlint.filetypes import shell
from neuronlint.filetypes.common import dedupe, detection, strip_comment
from neuronlint.filetypes.images import image_detections

_YAML_PAIR = re.compile(
    r"""^(?P<indent>\s*(?:-\s+)?)(?P<q>["']?)(?P<key>[A-Za-z_][\w.-]*)(?P=q)\s*:(?:\s+(?P<value>.*?))?\s*$"""
)
_JSON_PAIR = re.compile(
    r""""(?P<key>[A-Za-z_][\w.-]*)"\s*:\s*(?P<value>"[^"]*"|true|false|null|-?\d[\d.eE+-]*|\{|\[)"""
)
_TOML_PAIR = re.compile(r"""^\s*(?P<q>["']?)(?P<key>[A-Za-z_][\w.-]*)(?P=q)\s*=\s*(?P<value>.*?)\s*$""")

_CUDA_VALUE = re.compile(r"^cuda(?::\d+)?$", re.I)
_DEVICE_KEYS = re.compile(r"^(?:device|device_type|devices_type|compute_device|[a-z_]*_device)$")
_BACKEND_KEYS = {
    "backend",
    "dist_backend",
    "distributed_backend",
    "ddp_backend",
    "process_group_backend",
    "comm_backend",
    "communication_backend",
    "dist_url_backend",
}
_GPU_DISTRIBUTED = {"MULTI_GPU", "DEEPSPEED", "FSDP", "MEGATRON_LM"}
_FP16_VALUES = {"16", "16-mixed", "fp16", "float16", "half", "16-true", "fp16-mixed", "amp_fp16"}
_PRECISION_KEYS = {"precision", "mixed_precision", "amp_precision", "half_precision_backend"}
_INTERPOLATED_CUDA = re.compile(r"\$\{[^}]*\bcuda(?::\d+)?\b[^}]*\}")
_ENV_NAME = re.compile(r"^(?:-\s+)?name\s*:\s*[\"']?((?:TORCH_)?NCCL_[A-Z0-9_]+|CUDA_VISIBLE_DEVICES)\b")


def _unquote(value: str) -> str:
    value = value.strip().rstrip(",").strip()
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'":
        return value[1:-1]
    return value


def _pairs(text: str, fmt: str) -> list[tuple[int, int, str, str, str]]:
    """(line, column of the key, key, value text, the raw line) for every key on its own line."""
    out = []
    for number, raw in enumerate(text.splitlines(), start=1):
        if fmt == "json":
            for match in _JSON_PAIR.finditer(raw):
                out.append((number, match.start() + 1, match.group("key"), match.group("value"), raw))
            continue
        line = strip_comment(raw)
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        match = (_YAML_PAIR if fmt == "yaml" else _TOML_PAIR).match(line)
        if match:
            column = match.start("key") + 1 - (1 if match.group("q") else 0)
            out.append((number, column, match.group("key"), match.group("value") or "", raw))
    return out


def scan_config(text: str, fmt: str, data: Any = None) -> list[dict[str, Any]]:
    """fmt: "yaml", "json" or "toml"."""
    out: list[dict[str, Any]] = []
    pairs = _pairs(text, fmt)
    deepspeed_file = any(
        key in ("zero_optimization", "train_micro_batch_size_per_gpu") for _, _, key, _, _ in pairs
    )
    for index, (line, column, key, raw_value, raw) in enumerate(pairs):
        value = _unquote(raw_value)
        found = _judge_key(key.lower(), value, fmt, pairs, index, deepspeed_file)
        if found is None:
            continue
        rule, facts = found
        end = column + len(key) + (2 if fmt == "json" or raw[column - 1 : column] in "\"'" else 0)
        facts.setdefault("value", value)
        out.append(detection(rule, line, column, end, raw, key=key, **facts))
    if fmt == "yaml":
        out += _manifest(text, data)
    return dedupe(out)


_NO_DEEPSPEED = ("", "null", "None", "~", "false", "False")


def _judge_key(
    key: str,
    value: str,
    fmt: str,
    pairs: list[tuple[int, int, str, str, str]],
    index: int,
    deepspeed_file: bool,
) -> tuple[str, dict[str, Any]] | None:
    """The rule a key/value pair triggers (and extra facts), or None."""
    if _DEVICE_KEYS.match(key) and (_CUDA_VALUE.match(value) or _INTERPOLATED_CUDA.search(value)):
        return "NL060", {}
    if key == "accelerator" and value.lower() in ("gpu", "cuda"):
        return "NL060", {}
    if key in _BACKEND_KEYS and value.lower() == "nccl":
        return "NL061", {}
    if key == "distributed_type" and value.upper() in _GPU_DISTRIBUTED:
        return "NL062", {}
    if key == "zero_optimization" and deepspeed_file:
        return "NL063", {"what": "DeepSpeed ZeRO configuration"}
    if key in ("deepspeed", "deepspeed_config", "deepspeed_config_file") and value not in _NO_DEEPSPEED:
        return "NL063", {"what": f"`{key}` setting"}
    if key in ("deepspeed_config", "deepspeed") and value == "" and fmt == "yaml":
        return "NL063", {"what": f"`{key}` section"}
    if key in _PRECISION_KEYS and value.lower() in _FP16_VALUES | {"apex", "cuda_amp"}:
        return "NL064", {}
    if key in ("fp16", "fp16_full_eval") and value.lower() == "true":
        return "NL064", {}
    if key == "fp16" and value in ("{", "") and _block_enabled(pairs, index):
        return "NL064", {"value": "{enabled: true}"}
    if key in ("optim", "optimizer") and value == "adamw_torch_fused":
        return "NL065", {"optimizer": value}
    return None


def _block_enabled(pairs: list[tuple[int, int, str, str, str]], index: int) -> bool:
    """DeepSpeed's `"fp16": {"enabled": true, ...}`: the `enabled` key within the next few keys."""
    for _, _, key, value, _ in pairs[index + 1 : index + 4]:
        if key == "enabled":
            return _unquote(value).lower() == "true"
    return False


_NVIDIA_GPU = re.compile(r"\bnvidia\.com/gpu(?:\.[\w.-]+)?\b")
_COMPOSE_GPU = re.compile(r"^\s*(?:-\s+)?(?P<key>(?:runtime|driver)\s*:\s*[\"']?nvidia)\b")
_IMAGE_KEY = re.compile(r"^\s*(?:-\s+)?image\s*:\s*[\"']?(?P<image>[^\s\"']+)")
# Keys whose value is a command line (compose `command:`, CI `run:`, Kubernetes `command:`/`args:`).
_COMMAND_KEY = re.compile(r"^\s*(?:-\s+)?(?:command|entrypoint|args|run|script|cmd)\s*:\s*(?P<value>\S.*)$")


def _manifest(text: str, data: Any) -> list[dict[str, Any]]:
    """Kubernetes / Helm / compose / CI YAML: GPU resources, NVIDIA runtime, env names, images."""
    out = []
    block = -1  # indentation of a `run: |` key whose block scalar lines are shell
    for number, raw in enumerate(text.splitlines(), start=1):
        line = strip_comment(raw)
        if not line.strip():
            continue
        indent = len(raw) - len(raw.lstrip())
        if block >= 0:
            if indent > block:
                out += shell.scan_command(raw, number, data)
                continue
            block = -1
        for match in _NVIDIA_GPU.finditer(line):
            out.append(
                detection("NL044", number, match.start() + 1, match.end() + 1, raw, resource=match.group(0))
            )
        match = _COMPOSE_GPU.match(line)
        if match:
            out.append(
                detection("NL031", number, match.start("key") + 1, match.end() + 1, raw, flag=line.strip())
            )
        match = _ENV_NAME.match(line.strip())
        if match:
            column = raw.find(match.group(1)) + 1
            rule = "NL040" if match.group(1) == "CUDA_VISIBLE_DEVICES" else "NL041"
            out.append(
                detection(rule, number, column, column + len(match.group(1)), raw, variable=match.group(1))
            )
        match = _IMAGE_KEY.match(line)
        if match:
            out += image_detections(match.group("image"), number, match.start("image") + 1, raw, data)
        match = _COMMAND_KEY.match(line)
        if match and match.group("value").strip() in ("|", ">", "|-", ">-", "|+", ">+"):
            block = indent
        elif match:
            start = match.start("value")
            out += shell.scan_command(" " * start + line[start:], number, data)
    return out
