"""The tracing child: build the model without weights, capture its graph, record every aten op.

Run as `python -m neuronlint.graph.child REQUEST.json RESULT_DIR` by runner.py, which enforces
the timeouts; this process caps its own address space first, then imports torch and user code.
One child traces a batch of targets (torch's start-up costs seconds; each model after that far
less). Never raises: every failure becomes a record in the target's result file, and
RESULT_DIR/progress.jsonl tells the parent which target and stage a crash or hang happened in.

Pipeline:
  1. import the entrypoint; build the model under torch.device("meta") (no storage), retrying
     with small tensors on the CPU when a constructor needs values (see build_model);
  2. torch.export.export(strict=False); lower the program to core ATen (the op level the Neuron
     backends see) by interpreting its graph on fake tensors with the standard decomposition
     table (DecomposingRecorder), or with run_decompositions() when NEURONLINT_DECOMPOSE=retrace;
  3. if export fails: record why and where, then torch.fx.symbolic_trace and the same lowering;
  4. if that fails too: run the forward on fake tensors and record the ops dispatched before the
     failure ("partial").

Modules, in pipeline order: __main__ (entry: memory cap, progress file, result files), progress,
failures (classify an exception), build (model on meta, inputs), strategies (export, symbolic
trace, partial run, tried in order for each target), lower (core-ATen decomposition on fake
tensors), collect (op records and torch's facts about each op), keeper (the child's group dies with
the parent, even a SIGKILLed one). The parent process imports only keeper's process-tree helper
from this package: only __main__, progress, failures and keeper are free of torch at import, and
__main__ imports the others after it has capped its memory.
"""
