"""No message reaches a user with a template field left unfilled (`{kernel}`): every fact a rule's
message names is given by every emitter of that rule. Checked on the scan of the bundled fixtures,
which exercise every emitter, and on the API records one by one."""

from __future__ import annotations

import re
import string
from pathlib import Path

import tomllib

from tests.conftest import FIXTURES, ROOT, scan_paths

FIELD = re.compile(r"\{[a-z_]+\}")


def test_fixture_messages_have_no_unfilled_fields(tmp_path: Path) -> None:
    # The fixtures, plus kernels made by wrapping a function (no decorator in the file).
    (tmp_path / "wrapped.py").write_text(
        "import triton\nfrom triton.runtime import JITFunction\n\n"
        "def wrap(fn):\n    return triton.JITFunction(fn), JITFunction(fn)\n",
        encoding="utf-8",
    )
    result = scan_paths([FIXTURES, tmp_path], cwd=ROOT)
    assert any(f.rule == "NL301" and f.path.endswith("wrapped.py") for f in result.findings)
    unfilled = sorted({(f.rule, m[0]) for f in result.findings if (m := FIELD.search(f.message))})
    assert unfilled == []


def test_api_records_give_the_facts_their_rule_message_names() -> None:
    catalogue = {}
    for path in sorted((ROOT / "rules" / "catalogue").glob("*.toml")):
        for rule in tomllib.loads(path.read_text(encoding="utf-8")).get("rule", []):
            catalogue[rule["id"]] = rule["message"]
    records = tomllib.loads(Path(ROOT / "rules" / "apis.toml").read_text(encoding="utf-8"))["api"]
    missing = []
    for record in records:
        message = catalogue.get(record["rule"], "")
        fields = {name for _, name, _, _ in string.Formatter().parse(message) if name}
        given = set(record.get("facts", {})) | {"name", "symbol", "what", "qualname"}
        if "kernel" in fields and "kernel" not in given:
            missing.append(record["name"])
    assert missing == []
