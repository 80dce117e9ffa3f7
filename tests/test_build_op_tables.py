"""scripts/build_op_tables.py writes operator tables the rule database accepts, with `absent_from_torch` marks."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from neuronlint.ruledb.loader import default_rules_dir, load_dirs
from scripts.build_op_tables import build

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib


def test_built_table_loads_and_marks_ops_torch_no_longer_registers(tmp_path: Path) -> None:
    lowered = [("2.8", "aten::add.Tensor"), ("2.9.1", "aten::add.Tensor"), ("2.9", "aten::gone.default")]
    confirmed = [("2.31", "aten::add"), ("2.32", "aten::add"), ("2.31", "aten::gone")]
    text = build(lowered, confirmed, registered={"aten::add", "aten::add.Tensor"}, torch_version="2.14")
    data = tomllib.loads(text)
    ops = {op["name"]: op for op in data["op"]}
    assert (
        ops["aten::add.Tensor"]["torch_xla"] == ["2.8", "2.9"]
        and "absent_from_torch" not in ops["aten::add.Tensor"]
    )
    assert ops["aten::gone.default"]["absent_from_torch"] == "2.14"
    sdk = {op["name"]: op["sdk"] for op in data["op_confirmed"]}
    # Still on the newest page: an open range; dropped earlier: closed at the last release listing it.
    assert sdk == {"aten::add": ">=2.31", "aten::gone": ">=2.31,<=2.31"}
    # The bundled database with the generated file in place of the committed one still loads.
    rules = tmp_path / "rules"
    for path in default_rules_dir().rglob("*.toml"):
        target = rules / path.relative_to(default_rules_dir())
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(path.read_bytes())
    (rules / "ops" / "xla-lowerings.toml").write_text(text, encoding="utf-8")
    db = load_dirs([rules])
    assert {op["name"] for op in db.tables["op"]} == {"aten::add.Tensor", "aten::gone.default"}


def test_markers_found_on_other_torch_versions_are_kept() -> None:
    lowered = [("2.9", "aten::add.Tensor"), ("2.9", "aten::old"), ("2.9", "aten::dropped")]
    confirmed = [("2.32", "aten::add")]
    registered = {"aten::add", "aten::add.Tensor", "aten::dropped"}
    # Regenerated on 2.13: an op 2.14 dropped (marked there) keeps its marker; 2.13 registers it.
    known = {"aten::dropped": "2.14", "aten::old": "2.13"}
    data = tomllib.loads(build(lowered, confirmed, registered, torch_version="2.13", known_absent=known))
    markers = {op["name"]: op.get("absent_from_torch") for op in data["op"]}
    assert markers == {"aten::add.Tensor": None, "aten::old": "2.13", "aten::dropped": "2.14"}
    # Regenerated on 2.15, which lacks both: the older marker stays (it was gone from 2.13 on).
    data = tomllib.loads(build(lowered, confirmed, {"aten::add", "aten::add.Tensor"}, "2.15", known))
    assert {op["name"]: op.get("absent_from_torch") for op in data["op"]}["aten::old"] == "2.13"
    # A torch that registers an op marked absent from its version or older: the marker is wrong.
    with pytest.raises(SystemExit, match="aten::old: marked absent_from_torch = '2.13'"):
        build(lowered, confirmed, {"aten::add", "aten::add.Tensor", "aten::old"}, "2.14", known)
