"""vLLM's gpt-oss kernel paths by release and GPU, pinned to the release wheels (pip download vllm==X --no-deps):
vllm/third_party/triton_kernels is absent from 0.11.2's wheel and present in 0.12.0's; flashinfer-python is a
Requires-Dist of 0.11.1 (==0.5.2) and 0.14.1 (==0.5.3) but only the "flashinfer" extra of 0.11.0; mxfp4.py picks
Marlin below capability 9.0 and FlashInfer MXFP4 x BF16 on SM100 by default; cuda.py gives sink layers FA3 only
on SM90, FlashInfer on SM100 and Triton attention elsewhere."""

from __future__ import annotations

import pytest

from sched_reader.models.cost.gpt_oss_paths import mxfp4_moe_backend, path_note, sink_attention_backend
from sched_reader.models.gpu_catalog import resolve_gpu


def gpu(name: str):
    return resolve_gpu(name).gpu


@pytest.mark.parametrize("name, release, backend", [
    ("H100 SXM5 80GB", "0.11.2", "marlin_or_triton_kernels"),
    ("H100 SXM5 80GB", "0.12.0", "triton_kernels"),
    ("H200 SXM 141GB", "0.14.1", "triton_kernels"),
    ("A100 SXM4 80GB", "0.14.1", "marlin"),
    ("A100 SXM4 80GB", "0.10.1", "marlin"),
    ("B200 180GB", "0.10.1", "flashinfer_trtllm_mxfp4_bf16"),
])
def test_mxfp4_moe_backend_by_release_and_gpu(name, release, backend):
    assert mxfp4_moe_backend(gpu(name), release)[0] == backend


def test_flashinfer_is_a_wheel_dependency_from_0_11_1():
    assert "extra" not in mxfp4_moe_backend(gpu("B200 180GB"), "0.11.1")[1]
    assert "vllm[flashinfer]" in mxfp4_moe_backend(gpu("B200 180GB"), "0.11.0")[1]


def test_sink_attention_backend():
    assert sink_attention_backend(gpu("H100 SXM5 80GB")).startswith("FLASH_ATTN")
    assert sink_attention_backend(gpu("B200 180GB")).startswith("FLASHINFER")
    assert sink_attention_backend(gpu("A100 SXM4 80GB")).startswith("TRITON_ATTN")


def test_note_says_whether_the_measured_table_times_the_kernel():
    table = "H100 SXM5 80GB mxfp4 shape h=2880 (vllm_gptossmxfp4moe_triton_oaitritonmxfp4expertsmonolithic, aiconfigurator)"
    assert "the measured table times it" in path_note(gpu("H100 SXM5 80GB"), "0.14.1", table)
    assert "named constants" in path_note(gpu("A100 SXM4 80GB"), "0.11.0", "")
    assert "depends on the environment" in path_note(gpu("H100 SXM5 80GB"), "0.10.2", table)
