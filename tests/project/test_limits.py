"""sched_reader.limits: the edge checks every reader and flag goes through."""

from __future__ import annotations

import json
import os

import pytest

from sched_reader.errors import InputError
from sched_reader.limits import (
    MAX_FILE_BYTES,
    MAX_NESTING,
    bounded_int,
    clip,
    finite_float,
    json_depth,
    loads_json,
    read_regular_file,
    read_text_file,
)


def test_reads_a_regular_file(tmp_path):
    p = tmp_path / "a.yaml"
    p.write_bytes(b"\xef\xbb\xbfmodel: m\n")
    assert read_text_file(p) == "model: m\n"


@pytest.mark.skipif(not os.path.exists("/dev/zero"), reason="needs /dev/zero")
def test_device_refused_without_reading(tmp_path):
    link = tmp_path / "z.yaml"
    link.symlink_to("/dev/zero")
    for p in ("/dev/zero", link):
        with pytest.raises(InputError, match="not a regular file"):
            read_regular_file(p)


def test_fifo_refused_without_blocking(tmp_path):
    fifo = tmp_path / "f"
    os.mkfifo(fifo)  # no writer: a blocking open would wait forever
    with pytest.raises(InputError, match="not a regular file"):
        read_regular_file(fifo)


@pytest.mark.parametrize("setup,needle", [
    (lambda d: d / "missing", "file not found"),
    (lambda d: d / ("x" * 300), "file name too long"),
    (lambda d: d, "is a directory"),
])
def test_path_errors_are_named(tmp_path, setup, needle):
    with pytest.raises(InputError, match=needle):
        read_regular_file(setup(tmp_path))


def test_symlink_loop(tmp_path):
    (tmp_path / "a").symlink_to(tmp_path / "b")
    (tmp_path / "b").symlink_to(tmp_path / "a")
    with pytest.raises(InputError, match="symbolic link loop"):
        read_regular_file(tmp_path / "a")


def test_size_bound_checked_before_reading(tmp_path):
    p = tmp_path / "big.yaml"
    with open(p, "wb") as fh:
        fh.truncate(MAX_FILE_BYTES + 1)  # sparse: no disk used
    with pytest.raises(InputError, match="byte limit"):
        read_regular_file(p)


def test_bad_utf8_names_line_and_offset(tmp_path):
    p = tmp_path / "w.yaml"
    p.write_bytes(b"a: 1\nb: caf\xe9\n")
    with pytest.raises(InputError) as e:
        read_text_file(p)
    assert e.value.line == 2 and "0xe9 at offset 11" in e.value.message


def test_json_depth_ignores_brackets_in_strings():
    assert json_depth('{"a": "[[[[", "b": [1, [2]]}') == 3
    assert json_depth(r'["\"[", {}]') == 2


def test_loads_json_refuses_deep_nan_and_huge_ints():
    assert loads_json('{"a": [1, 2.5]}') == {"a": [1, 2.5]}
    with pytest.raises(InputError, match=f"more than {MAX_NESTING}"):
        loads_json("[" * (MAX_NESTING + 1) + "]" * (MAX_NESTING + 1))
    with pytest.raises(InputError, match="NaN"):
        loads_json('{"a": NaN}')
    with pytest.raises(InputError, match="20 digits"):
        loads_json('{"a": 99999999999999999999}')
    with pytest.raises(json.JSONDecodeError):
        loads_json("{")


@pytest.mark.parametrize("value,ok", [
    (5, 5), ("7", 7), (3.0, 3), ("1_0", 10),
    (0, None), (11, None), (2.5, None), (float("inf"), None), (float("nan"), None), (True, None),
    ("9" * 5000, None), ("x", None), (None, None),
])
def test_bounded_int(value, ok):
    if ok is None:
        with pytest.raises(InputError):
            bounded_int(value, key="k", lo=1, hi=10)
    else:
        assert bounded_int(value, key="k", lo=1, hi=10) == ok


def test_finite_float():
    assert finite_float("2.5", key="r", lo=0.1) == 2.5
    assert finite_float("inf", key="r", lo=0.1, allow_inf=True) == float("inf")
    for bad in ("inf", "nan", "-1", "x", "1e-9"):
        with pytest.raises(InputError):
            finite_float(bad, key="r", lo=1e-6)


def test_clip_keeps_messages_one_short_line():
    assert clip("abc") == "'abc'"
    text = clip("9" * 1_000_000)
    assert len(text) < 100 and "1,000,000 characters" in text
