"""Time and memory of `neuronlint trace` on Llama-style decoders (7B, 70B) and the fixture models.

Usage (from the repository root):
    .venv/bin/python benchmarks/trace_llama.py                 # fixtures, 7B, 70B
    .venv/bin/python benchmarks/trace_llama.py --only 70b      # one case
    .venv/bin/python benchmarks/trace_llama.py --baseline      # also plain export + decomposition

Every model is traced in its own child process (so peak RSS is per model), exactly as the CLI does:
start-up (importing torch), import, build on the meta device, torch.export, lowering to core ATen
with op recording; then the parent judges every op (verdicts). Wall seconds per phase, CPU seconds
(import to lowering) and peak RSS are measured in the child; "capture+verdicts" is export +
lowering + verdicts, the figure the 70B target is about. `--baseline` adds, per model, a fresh process that only
runs torch.export(strict=False) + run_decompositions() on the same model: neuronlint's overhead
is the difference. Prints a Markdown table. The machine's load average is printed with it, since
other processes on a 2-core machine inflate wall times (CPU seconds are less affected).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

CASES = {
    "gpt_block": ("fixtures/models/gpt_block.py:build", ["long[2,64]"]),
    "fft_rotary": ("fixtures/models/fft_rotary.py:FourierRotaryMixer", ["float32[2,16,64]"]),
    "masking": ("fixtures/models/masking.py:TokenPruner", ["float32[4,32]"]),
    "control_flow": ("fixtures/models/control_flow.py:EarlyExitBlock", ["float32[2,16]"]),
    "no_lowering": ("fixtures/models/no_lowering.py:BucketEmbedding", ["float32[8]"]),
    "fp8_linear": ("fixtures/models/fp8_linear.py:build", ["bfloat16[4,64]"]),
    "7b": ("fixtures/models/llama.py:llama_7b", ["long[1,128]"]),
    "70b": ("fixtures/models/llama.py:llama_70b", ["long[1,128]"]),
}

_BASELINE = """
import json, resource, sys, time
sys.path.insert(0, {root!r})
started = time.perf_counter()
import torch
from neuronlint.graph.entrypoints import load, parse_entrypoint
from neuronlint.graph.specs import parse_specs
from pathlib import Path
factory = load(parse_entrypoint({entry!r}), Path({root!r}))
with torch.device("meta"):
    model = factory().eval()
inputs = tuple(torch.empty(s.shape, dtype=getattr(torch, s.dtype), device="meta") for s in parse_specs({inputs!r}))
ready = time.perf_counter()
program = torch.export.export(model, inputs, strict=False).run_decompositions()
done = time.perf_counter()
usage = resource.getrusage(resource.RUSAGE_SELF)
print(json.dumps({{"export_decompose": done - ready, "total": done - started,
                  "peak_rss_mib": usage.ru_maxrss / 1024}}))
"""


def run_case(name: str, baseline: bool) -> dict:
    from neuronlint.graph.analysis import TraceTarget, judge_all
    from neuronlint.graph.runner import run_children
    from neuronlint.pipeline import ScanOptions
    from neuronlint.ruledb import load_ruledb

    entry, inputs = CASES[name]
    target = TraceTarget(entry, inputs)
    outcome = run_children([{"entrypoint": entry, "inputs": inputs, "kwargs": {}}], ROOT, timeout=1800)[0]
    db = load_ruledb()
    ctx = db.context("2.29", "trn2", "xla")
    began = time.perf_counter()
    result = judge_all([target], [outcome], db, ctx, ScanOptions(paths=[ROOT], base=ROOT), ROOT)[0]
    verdicts = time.perf_counter() - began
    data = outcome.result or {}
    row = {
        "model": name,
        "status": result.status,
        "params": (result.summary.get("parameters") or {}).get("count", 0),
        "ops": result.summary.get("total_ops", 0),
        "supported": result.summary.get("supported_percentage"),
        "startup": data.get("startup_seconds", 0.0),
        "timing": data.get("timing", {}),
        "target_wall": data.get("wall_seconds", outcome.wall_seconds),
        "cpu": data.get("cpu_seconds", 0.0),
        "verdicts": verdicts,
        "rss": data.get("peak_rss_mib"),
    }
    if baseline:
        code = _BASELINE.format(root=str(ROOT), entry=entry, inputs=inputs)
        completed = subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=1800
        )
        lines = [line for line in completed.stdout.splitlines() if line.startswith("{")]
        row["baseline"] = json.loads(lines[-1]) if lines else None
    return row


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--only", action="append", choices=sorted(CASES), help="run only these cases")
    parser.add_argument("--baseline", action="store_true", help="also time plain export + decomposition")
    args = parser.parse_args()
    names = args.only or list(CASES)
    rows = []
    for name in names:
        row = run_case(name, args.baseline)
        rows.append(row)
        print(f"{name}: done ({row['status']})", file=sys.stderr)
    load = os.getloadavg()
    print(f"Load average at the end: {load[0]:.2f} {load[1]:.2f} {load[2]:.2f} on {os.cpu_count()} CPUs\n")
    header = (
        "| model | status | params | op calls | supported | start-up s | build s | export s | lower s "
        "| verdicts s | capture+verdicts s | CPU s | peak RSS MiB |"
    )
    if args.baseline:
        header += " baseline export+run_decompositions s | baseline RSS MiB |"
    print(header)
    print("|" + "|".join("---" for _ in range(header.count("|") - 1)) + "|")
    for row in rows:
        t = row["timing"]
        # "lower": decomposition to core ATen and op recording (collect only exists on the retrace route).
        lower = t.get("decompose", 0) + t.get("collect", 0) + t.get("partial", 0)
        export = t.get("export", 0) + t.get("export (failed)", 0)
        capture = export + t.get("symbolic_trace", 0) + t.get("symbolic_trace (failed)", 0) + lower
        cells = [
            row["model"],
            row["status"],
            f"{row['params'] / 1e9:.2f}B" if row["params"] >= 1e8 else f"{row['params']:,}",
            str(row["ops"]),
            f"{row['supported']:.1f}%" if row["supported"] is not None else "-",
            f"{row['startup']:.1f}",
            f"{t.get('build', 0):.1f}",
            f"{export:.1f}",
            f"{lower:.1f}",
            f"{row['verdicts']:.2f}",
            f"{capture + row['verdicts']:.1f}",
            f"{row['cpu']:.1f}",
            f"{row['rss']:.0f}" if row["rss"] else "-",
        ]
        if args.baseline:
            base = row.get("baseline") or {}
            cells += [f"{base.get('export_decompose', 0):.1f}", f"{base.get('peak_rss_mib', 0):.0f}"]
        print("| " + " | ".join(cells) + " |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
