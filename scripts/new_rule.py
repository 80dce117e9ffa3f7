"""Write the skeleton of a new static rule (ruff's scripts/add_rule.py is the model).

    python scripts/new_rule.py NL117 --name cuda-foo --category cuda-api --checker CudaApi --source URL
    python scripts/new_rule.py NL117 --name cuda-foo --category cuda-api --api torch.cuda.foo --source URL

Appends a `[[rule]]` record with a firing and a quiet `[[rule.case]]` to
rules/catalogue/<category>.toml, then either

- `--checker NAME`: adds the rule to that checker's `emits` and a handler method stub to its class
  (the firing case fails in tests/test_rule_cases.py until the method reports it), or
- `--api QUALNAME [--kind name|prefix|method|attribute]`: appends an `[[api]]` row to
  rules/apis.toml (a table-driven rule: the ApiNames checker emits it; nothing else to write),

and regenerates docs/rules/. Texts marked TODO are for you to write; `--source` is the versioned
Neuron documentation page the rule's facts come from. A development tool of the checkout.
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CHECKERS_DIR = ROOT / "neuronlint" / "static" / "checkers"


def _quoted(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def rule_record(args: argparse.Namespace) -> str:
    """The `[[rule]]` text with its two cases."""
    if args.api:
        fires = _api_use(args.api, args.kind)
        symbol = "{api}"
    else:
        fires = "import torch\n\nTODO_construct(torch.ones(1))"
        symbol = "{symbol}"
    return f"""
[[rule]]
id = "{args.id}"
name = "{args.name}"
title = {_quoted(args.title or "TODO: a title of a few words")}
category = "{args.category}"
severity = "{args.severity}"
status = "{args.status}"
message = "`{symbol}` TODO: what is wrong with it on Neuron."
summary = "TODO: what the rule detects (and what it leaves alone)."
why = "TODO: why it matters on Neuron, with the fact the source states."
instead = {{ any = "TODO: what to write instead." }}
sources = [
    {_quoted(args.source)},
]
effort = "mechanical"
default_enabled = true
[[rule.case]]
code = '''
{fires}  # expect: {args.id}
'''
[[rule.case]]
code = '''
import torch

x = torch.ones(1)  # TODO: the fixed code
'''
"""


def _api_use(qualname: str, kind: str) -> str:
    if kind == "method":
        return f"import torch\n\nx = torch.ones(1)\ny = x.{qualname}()"
    if kind == "attribute":
        return f"import torch\n\nx = torch.ones(1)\ny = x.{qualname}"
    root = qualname.split(".")[0]
    return f"import {root}\n\n{qualname}()"


def api_row(args: argparse.Namespace) -> str:
    return f"""
[[api]]
name = "{args.api}"
kind = "{args.kind}"
rule = "{args.id}"
source = {_quoted(args.source)}
"""


def _checker_module(name: str) -> Path:
    for path in sorted(CHECKERS_DIR.glob("*.py")):
        if re.search(rf"^class {re.escape(name)}\(Checker\):", path.read_text(encoding="utf-8"), re.M):
            return path
    raise SystemExit(f"new_rule: no checker class {name} in {CHECKERS_DIR}")


def add_to_checker(path: Path, checker: str, rule_id: str, name: str) -> None:
    """Add `rule_id` to the class's `emits` and a handler stub at the end of the class."""
    text = path.read_text(encoding="utf-8")
    start = re.search(rf"^class {re.escape(checker)}\(Checker\):\n", text, re.M)
    assert start is not None
    end = re.search(r"^\S", text[start.end() :], re.M)
    stop = start.end() + end.start() if end else len(text)
    body = text[start.end() : stop]
    entry = f'"{rule_id}": ("symbol",)'
    emits = re.search(r"^    emits = \{\n(.*?)^    \}\n", body, re.M | re.S)
    one_line = re.search(r"^    emits = \{(.*)\}\n", body, re.M)
    if emits is not None:
        body = body[: emits.end(1)] + f"        {entry},\n" + body[emits.end(1) :]
    elif one_line is not None:
        body = body[: one_line.end(1)] + f", {entry}" + body[one_line.end(1) :]
    else:
        raise SystemExit(f"new_rule: {checker} declares no `emits = {{...}}` to add {rule_id} to")
    method = name.replace("-", "_")
    stub = f'''
    @on(cst.Call)
    def {method}(self, node: cst.Call, ctx: FileContext) -> None:
        """TODO: find the construct of {rule_id} and report it: ctx.report("{rule_id}", node, symbol=...)."""
'''
    body = body.rstrip("\n") + "\n" + stub
    path.write_text(text[: start.end()] + body + ("\n\n" + text[stop:] if end else ""), encoding="utf-8")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("id", help="the new rule ID, e.g. NL117")
    parser.add_argument("--name", required=True, help="kebab-case name, e.g. cuda-foo")
    parser.add_argument("--category", required=True, help="a category of rules/catalogue/, e.g. cuda-api")
    parser.add_argument("--source", required=True, help="https URL of the versioned Neuron documentation")
    parser.add_argument("--title", default="")
    parser.add_argument("--severity", default="warning", choices=("blocker", "warning", "info"))
    parser.add_argument(
        "--status", default="unsupported", choices=("supported", "partial", "unsupported", "unknown")
    )
    how = parser.add_mutually_exclusive_group(required=True)
    how.add_argument("--checker", help="the Checker class that will emit it, e.g. CudaApi")
    how.add_argument("--api", help="a table-driven rule: the qualified name (or method name) it is about")
    parser.add_argument("--kind", default="name", choices=("name", "prefix", "stem", "method", "attribute"))
    args = parser.parse_args(argv)

    if not re.fullmatch(r"NL\d{3}", args.id):
        parser.error(f"rule IDs are 'NL' and three digits, got {args.id!r}")
    if not re.fullmatch(r"[a-z][a-z0-9]*(-[a-z0-9]+)*", args.name):
        parser.error(f"names are kebab-case, got {args.name!r}")
    catalogue = ROOT / "rules" / "catalogue" / f"{args.category}.toml"
    if not catalogue.is_file():
        parser.error(f"no rule catalogue {catalogue.relative_to(ROOT)}")
    for path in (ROOT / "rules" / "catalogue").glob("*.toml"):
        if re.search(rf'^id = "{args.id}"$', path.read_text(encoding="utf-8"), re.M):
            parser.error(f"{args.id} already exists in {path.relative_to(ROOT)}")
    checker_path = _checker_module(args.checker) if args.checker else None

    with catalogue.open("a", encoding="utf-8") as handle:
        handle.write(rule_record(args))
    changed = [catalogue]
    if checker_path is not None:
        add_to_checker(checker_path, args.checker, args.id, args.name)
        changed.append(checker_path)
    else:
        apis = ROOT / "rules" / "apis.toml"
        with apis.open("a", encoding="utf-8") as handle:
            handle.write(api_row(args))
        changed.append(apis)

    sys.path.insert(0, str(ROOT))
    from scripts.generate_rule_docs import docs_dir, write_docs

    changed += write_docs(docs_dir())
    for path in changed:
        print(f"wrote {path.relative_to(ROOT)}")
    print(f"next: fill in the TODOs, then run `python -m pytest tests/test_rule_cases.py -k {args.id}`")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
