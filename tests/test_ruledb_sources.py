"""Every fact in the bundled database cites an https source, and unknown stays unknown."""

from __future__ import annotations

from neuronlint.ruledb import load_ruledb
from neuronlint.ruledb.model import UNKNOWN
from neuronlint.ruledb.schema import is_https_url, is_versioned_url


def _bad(urls: list[str]) -> list[str]:
    return [u for u in urls if is_https_url(u)]


def test_every_rule_and_verdict_has_https_sources() -> None:
    db = load_ruledb()
    assert len(db.rules) >= 50
    for rule in db.rules.values():
        assert rule.sources and not _bad(list(rule.sources)), rule.id
        for verdict in rule.verdicts:
            # A verdict on the platform cites its own source; one on construct facts inherits the rule's.
            effective = verdict.sources or rule.sources
            assert effective and not _bad(list(effective)), (rule.id, verdict.when.describe())
            if verdict.when.depends_on_platform:
                assert verdict.sources, (rule.id, verdict.when.describe())


def test_every_release_backend_and_change_has_https_source() -> None:
    db = load_ruledb()
    assert db.versions()[0] == "2.21" and db.versions()[-1] == "2.33"
    assert len(db.versions()) == 13  # 2.21 ... 2.33, none skipped
    for release in db.releases.values():
        assert not _bad([release.source]), release.version
        for backend, info in release.backends.items():
            assert not _bad([info["source"]]), (release.version, backend)
            assert info["torch"], (release.version, backend)
        for change in release.changes:
            assert not _bad([change["source"]]), (release.version, change["text"])


def test_every_chip_dtype_platform_api_and_library_has_https_source() -> None:
    db = load_ruledb()
    assert list(db.chips) == ["inf2", "trn1", "trn2", "trn3"]  # rules/chips.toml, in file order
    for chip in db.chips.values():
        assert not _bad([chip.source]), chip.name
        for name, entry in chip.dtypes.items():
            assert not _bad([entry["source"]]), (chip.name, name)
    for entry in db.platform:
        assert not _bad([entry.source]), entry.fact
    for table in ("api", "library", "serving"):
        entries = db.tables[table]
        assert entries, table
        for entry in entries:
            assert not _bad([entry["source"]]), (table, entry["name"])


def test_release_facts_match_the_reference() -> None:
    """Spot checks of the data against neuron-facts.md (the Neuron facts dossier, kept outside the repository) §6."""
    """Spot checks of the data against the Neuron facts dossier (neuron-facts.md) §6."""
    db = load_ruledb()
    r = db.releases
    assert r["2.21"].date == "2024-12-20" and r["2.21"].backends["xla"]["torch"] == ["1.13", "2.1", "2.5"]
    # The manifest ships torch 1.13/2.1 to trn1/inf2 only in 2.21; trn2 gets the 2.5 package.
    assert r["2.21"].torch_for("xla", "trn2") == ["2.5"] and r["2.21"].torch_for("xla", "trn1") == [
        "1.13",
        "2.1",
        "2.5",
    ]
    # Trn3 only from the release whose manifest lists it (2.29); the 2.9 intro note's claim is stated.
    assert "trn3" not in r["2.28"].chips() and "trn3" in r["2.29"].chips()
    assert "lists trn3 from 2.29" in r["2.27"].note and "adds Trainium3" in r["2.27"].note
    assert r["2.29"].backends["xla"]["training"] is True
    assert all(r[v].backends["xla"]["training"] is False for v in ("2.30", "2.31", "2.32", "2.33"))
    assert r["2.32"].backends["xla"]["status"] == "not-shipped"
    # Maintenance names Inf2/Trn1 only; the XLA package last shipped in 2.31 (2.33 update page).
    assert [r["2.31"].status_for("xla", c) for c in ("inf2", "trn1", "trn2", "trn3")] == [
        "maintenance",
        "maintenance",
        "supported",
        "supported",
    ]
    assert (
        r["2.33"].backends["xla"]["status"] == "not-shipped"
        and "last shipped in Neuron 2.31" in r["2.33"].note
    )
    assert "2.33.1 (2026-11-11)" in r["2.33"].raw["patches"]
    native = r["2.33"].backends["native"]
    assert (
        native["chips"] == ["trn2", "trn3"]
        and native["training"] is True
        and native["torch"] == ["2.13", "2.14"]
    )
    assert all("native" not in r[v].backends for v in db.versions() if v != "2.33")


def test_unconfirmed_platform_facts_stay_unknown() -> None:
    db = load_ruledb()
    # 2.32 announced native int64 as the next default; nothing confirms 2.33 did it.
    assert db.context("2.33", "trn2").platform["int64"] == UNKNOWN
    assert db.context("2.33", "trn2", flags=["--native-int64=enabled"]).platform["int64"] == "native"
    assert db.context("2.32", "trn2").platform["int64"] == "downcast"
    assert db.context("2.32", "trn1", flags=["--native-int64"]).platform["int64"] == "int32-only"
    assert db.context("2.31", "trn2").platform["native_int64_flag"] == "absent"
    assert db.context("2.26", "trn1").platform["auto_cast_default"] == "matmult"
    assert db.context("2.27", "trn1").platform["auto_cast_default"] == "none"
    assert db.context("2.33", "trn1", "xla").platform["auto_cast_default"] == UNKNOWN  # closed at 2.32
    assert db.context("2.31", "trn2", "xla").platform["complex64"] == UNKNOWN  # which ops, undocumented
    assert db.context("2.33", "trn2").platform["xla_inference"] == "n/a"


def test_every_source_is_versioned_or_a_declared_living_page() -> None:
    db = load_ruledb()
    living = {e["url"] for e in db.tables["living_source"]}
    assert all(e["why"] and e["read"] for e in db.tables["living_source"])
    cited: set[str] = set()
    for rule in db.rules.values():
        cited.update(rule.all_sources())
    for release in db.releases.values():
        cited.update([release.source, *(i["source"] for i in release.backends.values())])
        cited.update(c["source"] for c in release.changes)
    cited.update(e.source for e in db.platform)
    for lib in db.tables["library"]:
        cited.update(u for u in (lib["source"], lib.get("support_source")) if u)
    cited.update(e["source"] for e in db.tables["serving"])
    unversioned = {u for u in cited if not is_versioned_url(u)}
    assert unversioned <= living, sorted(unversioned - living)
    # Every en/latest page cited is declared, and no declared page goes unused.
    assert {u for u in cited if "/en/latest/" in u} <= living
    op_sources = {e["source"] for e in db.tables["op_rejection"]}
    assert living <= cited | op_sources, sorted(living - cited - op_sources)


def test_a_serving_verdict_other_than_unknown_cites_neuron() -> None:
    """rules/serving.toml: a tool is "supported" (or anything but unknown) only on a Neuron source;
    without one the verdict says that the database has no sourced statement."""
    db = load_ruledb()
    for entry in db.tables["serving"]:
        if entry["status"] != UNKNOWN:
            assert entry["source"].startswith("https://awsdocs-neuron.readthedocs-hosted.com/"), entry["name"]
        elif not entry.get("gpu_only"):
            assert "no sourced Neuron statement" in entry["verdict"], entry["name"]
