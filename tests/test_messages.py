"""Every message a user can see is fully rendered: no `{field}` left from a template."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.conftest import FIXTURES, ROOT, scan_paths, scan_source

_FIELD = re.compile(r"\{[a-z_]+\}")

NEURON_SIDE = """\
import torch_neuronx
import nki
from neuronxcc import nki as old_nki
import torch_xla.core.xla_model as xm

@nki.jit
def k(a):
    pass

@old_nki.jit
def j(a):
    pass

t = torch_neuronx.trace(model, ex)
f = torch_neuronx.nki_jit(k)
n = xm.xrt_world_size()
d = xm.xla_device()
"""


@pytest.mark.parametrize(
    "sdk, target", [("2.33", "trn2"), ("2.29", "trn1"), ("2.21", "inf2"), ("2.33", "trn3")]
)
def test_fixture_messages_are_rendered(sdk: str, target: str) -> None:
    result = scan_paths([FIXTURES], cwd=ROOT, select=["ALL"], sdk=sdk, target=target)
    assert result.active
    leftovers = [(f.path, f.line, f.rule, f.message) for f in result.active if _FIELD.search(f.message)]
    assert not leftovers
    fixes = [(f.rule, f.fix.replacement) for f in result.active if f.fix and _FIELD.search(f.fix.replacement)]
    assert not fixes


def test_api_table_findings_render_their_fields(tmp_path: Path) -> None:
    findings = scan_source(tmp_path, NEURON_SIDE, sdk="2.33", target="trn2")
    assert {f.rule for f in findings} >= {"NL903", "NL905", "NL908", "NL901"}
    for finding in findings:
        assert not _FIELD.search(finding.message), finding.message
