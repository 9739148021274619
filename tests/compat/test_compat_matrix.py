"""vLLM compatibility matrix data (sched_reader.compat.matrix) and its parser (tools/build_vllm_rules.py).

Expected cells were read by hand from vLLM's docs (shared/vllm/compat_matrix/<version>.md).
"""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace

import pytest

from sched_reader.compat import matrix
from conftest import load_script

ROOT = Path(__file__).resolve().parents[2]


def _tool():
    return load_script("tools/build_vllm_rules.py")


def test_0_18_0_spec_decode_row():
    m = matrix.for_release("0.18.0")
    # docs/features/README.md @061980c: "| [SD](...) | ✅ | ✅ | ❌ | ✅ |"
    assert m.pair("spec_decode", "chunked_prefill")["s"] == "yes"
    assert m.pair("chunked_prefill", "spec_decode")["s"] == "yes"  # symmetric lookup
    assert m.pair("spec_decode", "prefix_caching")["s"] == "yes"
    assert m.pair("spec_decode", "lora")["s"] == "no"
    assert not m.approximate
    assert m.source_url.endswith("061980c36a7b78e5d8ea96893b79fd0b9c11a20e/docs/features/README.md")


def test_0_6_3_rst_list_table_with_links():
    m = matrix.for_release("0.6.3")
    # compatibility_matrix.rst @fd47e57: LoRA row, CP column "`✗ <https://github.com/vllm-project/vllm/pull/9057>`__"
    cell = m.pair("lora", "chunked_prefill")
    assert cell == {"s": "no", "link": "https://github.com/vllm-project/vllm/pull/9057"}
    assert m.pair("spec_decode", "chunked_prefill")["s"] == "no"
    assert "prompt_adapter" in m.feature_keys and "guided_decoding" in m.feature_keys


def test_0_8_5_myst_list_table_with_gh_shortcuts():
    m = matrix.for_release("0.8.5")
    # ":::{list-table}" rows "- * best-of" ... "* [❌](gh-issue:6137)" in the SD column
    assert m.pair("best_of", "spec_decode") == {"s": "no", "link": "https://github.com/vllm-project/vllm/issues/6137"}
    assert m.pair("multimodal", "prefix_caching") == {"s": "partial", "link": "https://github.com/vllm-project/vllm/pull/8348"}


def test_footnotes_and_hardware():
    m = matrix.for_release("0.18.0")
    cell = m.pair("pooling", "chunked_prefill")
    assert cell["s"] == "partial"
    assert cell["notes"] == [
        "Chunked prefill and prefix caching are only applicable to last-token or all pooling with causal attention."]
    assert m.on_hardware("chunked_prefill", "volta") == {
        "s": "no", "link": "https://github.com/vllm-project/vllm/issues/2729"}
    assert m.on_hardware("cuda_graph", "cpu")["s"] == "no"
    assert m.hardware_keys == ["volta", "turing", "ampere", "ada", "hopper", "cpu", "amd", "intel_gpu"]


def test_releases_without_matrix_and_approximate_ones():
    for v in ("0.6.0", "0.6.1", "0.6.2"):
        assert matrix.for_release(v) is None
        assert "0.6.3" in matrix.no_matrix_note(v)
    for v in ("0.29.0", "0.33.0"):
        m = matrix.for_release(v)
        assert m.approximate and "00712b3" in m.note
    assert not matrix.for_release("0.28.0").approximate


def test_identical_matrices_are_stored_once():
    index = json.loads((matrix.DATA_DIR / "index.json").read_text())["releases"]
    ids = {e["matrix"] for e in index.values() if e.get("matrix")}
    files = list(matrix.DATA_DIR.glob("m-*.json"))
    assert len(files) == len(ids) < len(matrix.releases_with_matrix())
    # 0.18.0 and 0.18.1 docs come from the same commit
    assert index["0.18.0"]["matrix"] == index["0.18.1"]["matrix"]
    assert all(e.get("source_url") or not e.get("matrix") for e in index.values())


@pytest.mark.parametrize("gpu,column", [
    (SimpleNamespace(vendor="NVIDIA", arch="Volta GV100", compute_capability="7.0"), "volta"),
    (SimpleNamespace(vendor="NVIDIA", arch="Turing TU104", compute_capability="7.5"), "turing"),
    (SimpleNamespace(vendor="NVIDIA", arch="Ampere GA102, sm_86", compute_capability="8.6"), "ampere"),
    (SimpleNamespace(vendor="NVIDIA", arch="Ada Lovelace AD102, sm_89", compute_capability="8.9"), "ada"),
    (SimpleNamespace(vendor="NVIDIA", arch="Hopper GH100, sm_90", compute_capability="9.0"), "hopper"),
    (SimpleNamespace(vendor="AMD", arch="CDNA3, gfx942", compute_capability=None), "amd"),
    (SimpleNamespace(vendor="Intel", arch="Gaudi 3", compute_capability=None), None),
    (None, None),
])
def test_hardware_column(gpu, column):
    assert matrix.hardware_column(gpu) == column


# ---- parser on small hand-written tables of each format -------------------------------------------

PIPE = """## Feature x Feature

| Feature | [CP][chunked-prefill] | <abbr title="Logprobs">logP</abbr> |
|---|---|---|
| [CP][chunked-prefill] | ✅ | |
| <abbr title="Logprobs">logP</abbr> | [❌](gh-issue:12)<sup>^</sup> | ✅ |

<sup>^</sup> A note.

## Feature x Hardware

| Feature | Volta | AMD |
|---|---|---|
| [CP][chunked-prefill] | 🟠\\* | ❔ |
| <abbr title="Logprobs">logP</abbr> | ✅ | ✅ |

\\* Star note.
"""

MYST = """## Feature x Feature

:::{list-table}
:header-rows: 1

- * Feature
  * [SD](#spec_decode)
  * multi-step
- * [SD](#spec_decode)
  * ✅
  *
- * multi-step
  * [❌](gh-pr:7)
  * ✅
:::

## Feature x Hardware

:::{list-table}
:header-rows: 1

- * Feature
  * CPU
- * [SD](#spec_decode)
  * ✅
- * multi-step
  * ❌
:::
"""

RST = """Feature x Feature
-----------------

.. list-table::
   :header-rows: 1

   * - Feature
     - :ref:`APC <apc>`
     - :abbr:`prmpt adptr (Prompt Adapter)`
   * - :ref:`APC <apc>`
     -
     -
   * - :abbr:`prmpt adptr (Prompt Adapter)`
     - `✗ <https://example.invalid/x>`__
     - ?

Feature x Hardware
^^^^^^^^^^^^^^^^^^

.. list-table::
   :header-rows: 1

   * - Feature
     - Hopper
   * - :ref:`APC <apc>`
     - ✅
   * - :abbr:`prmpt adptr (Prompt Adapter)`
     - ✗
"""


def test_parse_pipe_table():
    p = _tool().parse_matrix(PIPE)
    assert p["ff"]["logprobs"]["chunked_prefill"] == {
        "s": "no", "link": "https://github.com/vllm-project/vllm/issues/12", "notes": ["A note."]}
    assert p["fh"]["chunked_prefill"] == {"volta": {"s": "partial", "notes": ["Star note."]}, "amd": {"s": "unknown"}}
    assert [f["key"] for f in p["features"]] == ["chunked_prefill", "logprobs"]
    assert p["features"][1]["title"] == "Logprobs"


def test_parse_myst_list_table():
    p = _tool().parse_matrix(MYST)
    assert p["ff"]["multi_step"]["spec_decode"] == {"s": "no", "link": "https://github.com/vllm-project/vllm/pull/7"}
    assert "multi_step" not in p["ff"]["spec_decode"]
    assert p["fh"]["multi_step"]["cpu"] == {"s": "no"}


def test_parse_rst_list_table():
    p = _tool().parse_matrix(RST)
    assert p["ff"]["prompt_adapter"] == {"prefix_caching": {"s": "no", "link": "https://example.invalid/x"},
                                         "prompt_adapter": {"s": "unknown"}}
    assert "prefix_caching" not in p["ff"]  # empty diagonal in 0.6.3-style docs
    assert p["fh"]["prompt_adapter"]["hopper"] == {"s": "no"}


def test_parser_rejects_unknown_labels_and_cells():
    tool = _tool()
    with pytest.raises(ValueError):
        tool.parse_matrix(PIPE.replace("logP</abbr> |\n|---", "wat</abbr> |\n|---"))
    with pytest.raises(ValueError):
        tool.parse_matrix(PIPE.replace("| ✅ | ✅ |", "| ✅ | maybe |"))
    with pytest.raises(ValueError):
        tool.parse_matrix("no tables here")
