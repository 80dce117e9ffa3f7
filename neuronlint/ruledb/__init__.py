"""The versioned Neuron support database: load `rules/*.toml`, validate, answer verdicts."""

from neuronlint.ruledb.loader import default_rules_dir, load_ruledb
from neuronlint.ruledb.model import Context, RuleDB, RuleDBError, Verdict

__all__ = ["Context", "RuleDB", "RuleDBError", "Verdict", "default_rules_dir", "load_ruledb"]
