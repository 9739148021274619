"""Every real start-up log in tests/data/logs/ that sized a KV cache, rebuilt by explain-log from the log
alone (plus the facts tests/data/kv_logs_files.yaml gives, each with its source): predicted KV tokens within
2% of the "GPU KV cache size" the log prints. The expected figure is the log's own line, not a model output.
"""

from __future__ import annotations

import pytest
from kv_log_files import kv_error, load_manifest, replay, sources

MAN = load_manifest()

# Logs the model cannot express yet: file -> reason (xfail, strict).
XFAIL: dict[str, str] = {}


def test_manifest_covers_every_log_once():
    listed = [e["file"] for e in MAN["files"]] + list(MAN["left_out"])
    assert len(listed) == len(set(listed))
    assert set(listed) == set(sources())
    assert all(e.get("gpu") and e.get("gpu_from") for e in MAN["files"])
    assert all((e.get("model") is None) == (e.get("model_from") is None) for e in MAN["files"])
    assert all((e.get("args") is None) == (e.get("args_from") is None) for e in MAN["files"])


@pytest.mark.parametrize("entry", [
    pytest.param(e, id=e["file"][:60],
                 marks=[pytest.mark.xfail(reason=XFAIL[e["file"]], strict=True)] if e["file"] in XFAIL else [])
    for e in MAN["files"]])
def test_rebuilt_log_predicts_its_kv_size_within_2_percent(entry):
    _, ex = replay(entry)
    ke = kv_error(ex)
    assert ke is not None, ex.notes
    what, err = ke
    assert what == "kv_tokens"
    assert abs(err) <= 0.02, (what, err, ex.differs, ex.differs_by_gib)
