"""Graph analysis: trace models with torch.export and judge each aten op against rules/ops.

Nothing here imports torch at package import time; the static scan imports `optables` only.
"""
