"""Malformed rule-database files give one clear error naming file, table, key and problem.

Each case writes a real TOML file into a policy pack (or into a copy of the bundled database) and
loads it with the real loader; the CLI cases run the real command in a child process.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from neuronlint.ruledb import RuleDBError
from neuronlint.ruledb.loader import default_rules_dir, load_dirs
from tests.conftest import ROOT

HTTPS = "https://awsdocs-neuron.readthedocs-hosted.com/en/v2.32.0/about-neuron/whats-new.html"

NEW_RULE = f'''
[[rule]]
id = "NL990"
name = "team-rule"
title = "A team rule"
category = "cuda-api"
severity = "warning"
status = "unknown"
message = "m"
summary = "s"
why = "w"
instead = {{ any = "i" }}
sources = ["{HTTPS}"]
'''


def _pack(tmp_path: Path, text: str, name: str = "pack.toml") -> Path:
    pack = tmp_path / "pack"
    pack.mkdir(exist_ok=True)
    (pack / name).write_text(text, encoding="utf-8")
    return pack


def _load_pack_error(tmp_path: Path, text: str) -> str:
    pack = _pack(tmp_path, text)
    with pytest.raises(RuleDBError) as info:
        load_dirs([default_rules_dir(), pack])
    message = str(info.value)
    assert "\n" not in message
    assert "pack.toml" in message  # the file is named
    return message


def _base_copy(tmp_path: Path) -> Path:
    base = tmp_path / "base"
    shutil.copytree(default_rules_dir(), base)
    return base


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('[[rule]]\nid = "NL101"\nseverity = "warning\n', "not valid TOML"),
        (
            '[[rule]]\nid = "NL101"\nsevertiy = "warning"\n',
            "[[rule]] #1 (id='NL101'): key 'severtiy': unknown key",
        ),
        (
            '[[rule]]\nid = "NL101"\nseverity = "fatal"\n',
            "key 'severity': expected one of blocker, warning, info, got 'fatal'",
        ),
        (
            '[[rule]]\nid = "NL101"\ndefault_enabled = "yes"\n',
            "key 'default_enabled': expected true/false, got str 'yes'",
        ),
        ('[[rule]]\nid = "NL101"\nsources = []\n', "key 'sources': at least one source URL is required"),
        (
            '[[rule]]\nid = "NL101"\nsources = ["http://example.com/page"]\n',
            "key 'sources': expected an https:// URL",
        ),
        ('[[rule]]\nid = "NL101"\nsources = ["docs/page.html"]\n', "key 'sources': expected an https:// URL"),
        (
            '[[rule]]\nid = "NL101"\n[[rule.verdict]]\nwhen = { sdk = "2.30" }\nsources = ["'
            + HTTPS
            + '"]\n',
            ".verdict[0].when: key 'sdk': bad SDK range clause '2.30'",
        ),
        (
            '[[rule]]\nid = "NL101"\n[[rule.verdict]]\nwhen = { sdk = ">=2.33,<2.30" }\nsources = ["'
            + HTTPS
            + '"]\n',
            "key 'sdk': SDK range '>=2.33,<2.30' matches no release",
        ),
        (
            '[[rule]]\nid = "NL101"\n[[rule.verdict]]\nwhen = { sdk = ">=2.40" }\nsources = ["'
            + HTTPS
            + '"]\n',
            "key 'sdk': range '>=2.40' matches no release in the database",
        ),
        (
            '[[rule]]\nid = "NL101"\n[[rule.verdict]]\nwhen = { targets = ["trn9"] }\nsources = ["'
            + HTTPS
            + '"]\n',
            "key 'targets': unknown target 'trn9'",
        ),
        (
            '[[rule]]\nid = "NL101"\n[[rule.verdict]]\nwhen = { backend = "xla" }\nseverity = "info"\n',
            "verdict[0]: key 'sources': a verdict that depends on backend states a Neuron fact and needs its own sources",
        ),
        (
            '[[rule]]\nid = "NL101"\n[[rule.verdict]]\nwhen = { platform = { int46 = "native" } }\nsources = ["'
            + HTTPS
            + '"]\n',
            "key 'int46': unknown platform fact",
        ),
        (
            '[[rule]]\nid = "NL999"\nseverity = "blocker"\n',
            "key 'id': no rule 'NL999' in the database to override",
        ),
        (NEW_RULE.replace('id = "NL990"', 'id = "101"'), "key 'id': rule IDs are 'NL' and three digits"),
        ('[[rule]]\nid = "NL101"\ncategory = "gpu"\n', "key 'category': expected one of cuda-api"),
        ('[[rules]]\nid = "NL101"\n', "key 'rules': unknown table"),
        ('rule = "NL101"\n', "key 'rule': write it as an array of tables, [[rule]]"),
        (
            '[[library]]\nname = "flash_attn"\nstatus = "fine"\n',
            "[[library]] #1 (name='flash_attn'): key 'status': expected one of supported",
        ),
        (
            '[[api]]\nname = "torch.cuda.foo"\nkind = "name"\nrule = "NL777"\nsource = "' + HTTPS + '"\n',
            "key 'rule': no rule 'NL777' in the database",
        ),
        (
            '[[release]]\nversion = "2.33"\ndate = "19/10/2026"\n',
            "[[release]] #1 (version='2.33'): key 'date': expected a date written YYYY-MM-DD",
        ),
        (
            '[[release]]\nversion = "2.33"\nbackends.native.chips = ["trn7"]\n',
            "key 'chips': unknown target 'trn7'",
        ),
        (
            '[[chip]]\nname = "trn2"\ndtypes.int64 = { status = "maybe", source = "' + HTTPS + '" }\n',
            ".dtypes.int64: key 'status': expected one of",
        ),
        (
            '[[platform]]\nfact = "int64"\nvalue = "native"\nflag = "native-int64"\nsource = "'
            + HTTPS
            + '"\n',
            "key 'flag': expected a neuronx-cc flag",
        ),
        (
            '[[platform]]\nfact = "Int64"\nvalue = "native"\nsource = "' + HTTPS + '"\n',
            "key 'fact': fact names are lower_snake_case",
        ),
        (
            '[[platform]]\nfact = "int64"\nvalue = "native"\n',
            "[[platform]] #1: key 'source': required key is missing",
        ),
    ],
    ids=[
        "bad-toml",
        "unknown-key",
        "bad-severity",
        "wrong-type",
        "empty-sources",
        "http-url",
        "relative-url",
        "bad-sdk-clause",
        "empty-sdk-range",
        "range-matches-no-release",
        "unknown-target",
        "verdict-without-source",
        "unknown-platform-fact",
        "override-unknown-rule",
        "bad-rule-id",
        "bad-category",
        "unknown-table",
        "not-array-of-tables",
        "library-bad-status",
        "api-unknown-rule",
        "release-bad-date",
        "release-unknown-chip",
        "chip-dtype-status",
        "platform-bad-flag",
        "platform-bad-name",
        "platform-missing-source",
    ],
)
def test_malformed_pack_names_file_table_key_and_problem(tmp_path: Path, text: str, expected: str) -> None:
    message = _load_pack_error(tmp_path, text)
    assert expected in message, message


def test_duplicate_id_in_one_file(tmp_path: Path) -> None:
    message = _load_pack_error(tmp_path, NEW_RULE + NEW_RULE)
    assert "[[rule]] #2 (id='NL990'): key 'id': duplicate entry 'NL990' in the same file" in message


def test_duplicate_id_across_files_of_one_directory(tmp_path: Path) -> None:
    base = _base_copy(tmp_path)
    (base / "catalogue" / "extra.toml").write_text(NEW_RULE.replace("NL990", "NL101"), encoding="utf-8")
    with pytest.raises(RuleDBError) as info:
        load_dirs([base])
    message = str(info.value)
    assert "extra.toml" in message and "key 'id': 'NL101' is already defined in" in message
    assert "cuda-api.toml" in message


def test_new_rule_in_pack_must_be_complete(tmp_path: Path) -> None:
    message = _load_pack_error(tmp_path, '[[rule]]\nid = "NL991"\nname = "x"\n')
    assert "no rule 'NL991' in the database to override (a new rule also needs: title, category" in message


def test_pack_adds_complete_rule_and_overrides_key_by_key(tmp_path: Path) -> None:
    pack = _pack(tmp_path, NEW_RULE + '\n[[rule]]\nid = "NL801"\nseverity = "blocker"\n')
    db = load_dirs([default_rules_dir(), pack])
    assert db.rules["NL990"].title == "A team rule"
    assert db.rules["NL801"].severity.value == "blocker"
    # Only the given key changed: the rest of NL801 is the bundled rule.
    assert db.rules["NL801"].name == "torch-compile" and db.rules["NL801"].verdicts


def test_a_new_chip_is_one_data_change(tmp_path: Path) -> None:
    """A [[chip]] added to rules/chips.toml is a target everywhere, with no Python edit."""
    base = _base_copy(tmp_path)
    chips = (base / "chips.toml").read_text(encoding="utf-8")
    trn2 = chips[chips.index('[[chip]]\nname = "trn2"') :].split("\n[[chip]]", 1)[0]
    (base / "chips.toml").write_text(chips + "\n" + trn2.replace('name = "trn2"', 'name = "trn9"'), "utf-8")
    releases = (base / "releases.toml").read_text(encoding="utf-8")
    head, newest = releases.rsplit('version = "2.33"', 1)
    newest = newest.replace('chips = ["trn2", "trn3"]', 'chips = ["trn2", "trn3", "trn9"]', 1)
    (base / "releases.toml").write_text(head + 'version = "2.33"' + newest, "utf-8")
    pack = _pack(
        tmp_path,
        '[[rule]]\nid = "NL101"\n[[rule.verdict]]\nwhen = { targets = ["trn9"] }\nseverity = "info"\n'
        f'sources = ["{HTTPS}"]\n',
    )
    db = load_dirs([base, pack])
    assert list(db.chips)[-1] == "trn9"
    ctx = db.context("2.33", "trn9")
    assert ctx.target == "trn9"
    assert db.judge("NL101", {}, ctx).severity.value == "info"
    with pytest.raises(
        RuleDBError, match="unknown target 'trn8'; expected one of: inf2, trn1, trn2, trn3, trn9"
    ):
        db.context("2.33", "trn8")


def test_empty_pack_directory_is_an_error(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    with pytest.raises(RuleDBError, match="no .toml files in this rules directory"):
        load_dirs([default_rules_dir(), tmp_path / "empty"])


def test_pack_platform_entry_takes_precedence(tmp_path: Path) -> None:
    pack = _pack(
        tmp_path,
        f'[[platform]]\nfact = "int64"\nvalue = "native"\nsdk = "==2.33"\ntargets = ["trn2"]\nsource = "{HTTPS}"\n',
    )
    db = load_dirs([default_rules_dir(), pack])
    assert db.context("2.33", "trn2").platform["int64"] == "native"
    assert db.context("2.33", "trn3").platform["int64"] == "unknown"


def _cli(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "neuronlint", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=120,
        env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(ROOT), "NO_COLOR": "1"},
    )


def test_cli_reports_malformed_pack_in_one_line(tmp_path: Path) -> None:
    pack = _pack(tmp_path, '[[rule]]\nid = "NL101"\nseverity = "fatal"\n')
    (tmp_path / "x.py").write_text("import torch\n", encoding="utf-8")
    for args in (
        ["scan", "x.py", "--no-cache", "--rules-dir", str(pack)],
        ["rules", "--rules-dir", str(pack)],
    ):
        proc = _cli(*args, cwd=tmp_path)
        assert proc.returncode == 2, proc.stderr
        lines = proc.stderr.strip().splitlines()
        assert len(lines) == 1 and "Traceback" not in proc.stderr
        assert lines[0].startswith("neuronlint: error: ")
        assert (
            "pack.toml: [[rule]] #1 (id='NL101'): key 'severity': expected one of blocker, warning, info"
            in lines[0]
        )
