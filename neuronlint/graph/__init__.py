"""Graph analysis: trace models with torch.export and judge each aten op against rules/ops.

Nothing here imports torch at package import time, and a plain static scan imports nothing from here
(the schema of rules/ops/*.toml lives in neuronlint/ruledb/schema/ops.py).
"""
