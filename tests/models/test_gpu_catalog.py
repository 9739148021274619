"""GPU catalog: facts pinned to vendor sheets / real logs, and every name form a deploy file uses."""

from __future__ import annotations

import pytest

from sched_reader.errors import EXIT_ERROR, UnknownGPUError
from sched_reader.models.gpu_catalog import (
    default_gpu,
    list_gpus,
    nearest_gpu_names,
    normalize_gpu_name,
    resolve_gpu,
)

GIB = 2**30
MIB = 2**20


# --- facts --------------------------------------------------------------------------------------

def test_h100_memory_is_nvidia_smi_mib_and_vllm_logged_total():
    g = resolve_gpu("H100 SXM5 80GB").gpu
    # nvidia-smi prints 81559MiB for H100 80GB HBM3
    assert g.memory_bytes == 81559 * MIB == 85_520_809_984
    # vLLM v0.19.0 start-up logs on H100 80GB print total memory 79.19 GiB (llm-d-planner logs)
    assert g.cuda_total_gib == pytest.approx(79.19, abs=0.005)
    assert g.cuda_total_inferred is False
    assert g.cuda_total_source and g.cuda_total_source.startswith("https://github.com/")


def test_rtx3090_total_from_vllm_issue_10517():
    g = resolve_gpu("NVIDIA GeForce RTX 3090 24GB").gpu
    assert g.cuda_total_gib == pytest.approx(23.58, abs=0.005)   # "total_gpu_memory=23.58GiB"
    assert g.cuda_total_inferred is False
    assert "10517" in (g.cuda_total_source or "")
    assert g.memory_bytes == 24576 * MIB                          # nvidia-smi 24576MiB
    assert g.compute_capability == "8.6"


def test_cuda_total_never_exceeds_device_memory():
    for g in list_gpus():
        assert 0 < g.cuda_total_bytes <= g.memory_bytes, g.id
        # reservations seen in logs are well under 1 GiB
        if not str(g.memory_type or "").startswith("LPDDR"):  # unified-memory SoCs share with the OS
            assert g.memory_bytes - g.cuda_total_bytes < 1.0 * GIB, g.id


def test_inferred_totals_are_marked_and_explained():
    for g in list_gpus():
        assert g.cuda_total_source, g.id
        if not g.cuda_total_inferred:
            assert g.cuda_total_source.startswith("https://"), g.id


@pytest.mark.parametrize(
    "name, cc",
    [("A100", "8.0"), ("A10", "8.6"), ("RTX 3090", "8.6"), ("L4", "8.9"), ("L40S", "8.9"),
     ("RTX 4090", "8.9"), ("H100", "9.0"), ("H200", "9.0"), ("B200", "10.0"), ("V100", "7.0")],
)
def test_compute_capability_per_arch(name, cc):
    assert resolve_gpu(name).gpu.compute_capability == cc


def test_datasheet_dense_numbers():
    h100 = resolve_gpu("h100-sxm").gpu
    assert h100.tflops["bf16"] == pytest.approx(1979 / 2, abs=0.5)   # datasheet 1,979* sparse
    assert h100.tflops["fp8"] == pytest.approx(3958 / 2, abs=0.5)
    assert h100.hbm_bandwidth_tb_s == 3.35
    a100 = resolve_gpu("A100-SXM4-80GB").gpu
    assert a100.tflops["bf16"] == 312.0 and a100.tflops["fp8"] is None  # no FP8 on Ampere
    v100 = resolve_gpu("Tesla V100-SXM2-16GB").gpu
    assert v100.tflops["fp16"] == 125.0 and v100.tflops["bf16"] is None  # V100 datasheet, no BF16


def test_every_gpu_has_a_source_url():
    gpus = list_gpus()
    assert len(gpus) >= 20
    assert len({g.id for g in gpus}) == len(gpus)
    for g in gpus:
        assert g.source_url.startswith("https://"), g.id


def test_default_gpu_is_h100_sxm5():
    assert default_gpu().id == "nvidia-h100-sxm5-80gb"


# --- name resolution ---------------------------------------------------------------------------

@pytest.mark.parametrize(
    "name, gpu_id",
    [
        # ids and short names
        ("nvidia-h100-sxm5-80gb", "nvidia-h100-sxm5-80gb"),
        ("h100-sxm", "nvidia-h100-sxm5-80gb"),
        ("L40S", "nvidia-l40s-48gb"),
        ("B200", "nvidia-b200"),
        ("MI300X", "amd-mi300x-192gb"),
        # nvidia-smi / torch device names
        ("NVIDIA H100 80GB HBM3", "nvidia-h100-sxm5-80gb"),
        ("NVIDIA A100-SXM4-80GB", "nvidia-a100-sxm4-80gb"),
        ("NVIDIA A100 80GB PCIe", "nvidia-a100-pcie-80gb"),
        ("NVIDIA H100 PCIe", "nvidia-h100-pcie-80gb"),
        ("NVIDIA H100 NVL", "nvidia-h100-nvl-94gb"),
        ("NVIDIA L4", "nvidia-l4-24gb"),
        ("NVIDIA A10G", "nvidia-a10g-24gb"),
        # spec-sheet names
        ("NVIDIA H200 SXM 141GB", "nvidia-h200-sxm-141gb"),
        # Kubernetes GPU feature discovery product labels
        ("NVIDIA-H100-80GB-HBM3", "nvidia-h100-sxm5-80gb"),
        ("NVIDIA-A100-SXM4-40GB", "nvidia-a100-sxm4-40gb"),
        ("Tesla-V100-SXM2-16GB", "nvidia-v100-sxm2-16gb"),
        ("Tesla-V100-SXM2-32GB", "nvidia-v100-sxm2-32gb"),
        # KubeAI resource profiles (count suffix ignored)
        ("nvidia-gpu-l4", "nvidia-l4-24gb"),
        ("nvidia-gpu-l4:1", "nvidia-l4-24gb"),
        ("amd-gpu-mi300x", "amd-mi300x-192gb"),
        # case / space / dash insensitive
        ("  h100 SXM5 80gb ", "nvidia-h100-sxm5-80gb"),
        ("H100_SXM5_80GB", "nvidia-h100-sxm5-80gb"),
        ("nvidia h200 141gb hbm3e", "nvidia-h200-sxm-141gb"),
    ],
)
def test_exact_name_forms(name, gpu_id):
    r = resolve_gpu(name)
    assert r.gpu.id == gpu_id
    assert r.guessed is False and r.note is None


@pytest.mark.parametrize(
    "name, gpu_id",
    [
        ("H100", "nvidia-h100-sxm5-80gb"),
        ("H100-80GB", "nvidia-h100-sxm5-80gb"),
        ("nvidia-gpu-h100", "nvidia-h100-sxm5-80gb"),
        ("nvidia-gpu-h100:8", "nvidia-h100-sxm5-80gb"),   # kubeai__llama-3.1-405b-instruct-fp8-h100.yaml
        ("A100", "nvidia-a100-sxm4-80gb"),
        ("A100-40GB", "nvidia-a100-sxm4-40gb"),
        ("nvidia-gpu-a100-80gb", "nvidia-a100-sxm4-80gb"),   # KubeAI profile: SXM4 or PCIe
        ("V100", "nvidia-v100-sxm2-16gb"),
    ],
)
def test_ambiguous_short_names_are_guessed_with_note(name, gpu_id):
    r = resolve_gpu(name)
    assert r.gpu.id == gpu_id
    assert r.guessed is True
    assert r.note and "assumed" in r.note


@pytest.mark.parametrize(
    "name, gpu_id, guessed",
    [   # every `gpu:` value in calibration/kv_logs.yaml and throughput.yaml
        ("NVIDIA H100 80GB", "nvidia-h100-sxm5-80gb", True),
        ("NVIDIA H100 SXM 80GB", "nvidia-h100-sxm5-80gb", False),
        ("NVIDIA H100 SXM 80GB (DGX H100)", "nvidia-h100-sxm5-80gb", False),
        ("NVIDIA H200 SXM 141GB", "nvidia-h200-sxm-141gb", False),
        ("NVIDIA GeForce RTX 3090 24GB", "nvidia-rtx-3090-24gb", False),
        ("NVIDIA A100 SXM 80GB", "nvidia-a100-sxm4-80gb", False),
        ("NVIDIA A100 80GB", "nvidia-a100-sxm4-80gb", True),
        ("NVIDIA A100 40GB", "nvidia-a100-sxm4-40gb", True),
        ("NVIDIA A100", "nvidia-a100-sxm4-80gb", True),
        # production-stack values-25 header: "Tesla V100 SXM2 16GB"
        ("Tesla V100 SXM2 16GB", "nvidia-v100-sxm2-16gb", False),
    ],
)
def test_names_seen_in_calibration_and_fixtures(name, gpu_id, guessed):
    r = resolve_gpu(name)
    assert (r.gpu.id, r.guessed) == (gpu_id, guessed)


def test_normalize():
    assert normalize_gpu_name("NVIDIA-H100-80GB-HBM3") == "h10080gbhbm3"
    assert normalize_gpu_name("nvidia-gpu-h100:8") == "h100"
    assert normalize_gpu_name("NVIDIA H100 SXM 80GB (DGX H100)") == "h100sxm80gb"


# --- errors ------------------------------------------------------------------------------------

def test_unknown_gpu_names_three_nearest():
    with pytest.raises(UnknownGPUError) as exc:
        resolve_gpu("H1000 SXM")
    err = exc.value
    assert err.exit_code == EXIT_ERROR
    assert err.key == "gpu"
    assert "H1000 SXM" in str(err)
    assert err.hint and err.hint.count("(") == 3          # three "Name (id)" suggestions
    assert "nvidia-h100" in err.hint


def test_nearest_prefers_the_same_family():
    near = nearest_gpu_names("A100-SXM4-48GB")
    assert len(near) == 3
    assert "nvidia-a100-sxm4" in near[0]


@pytest.mark.parametrize("bad", ["", "   ", "tpu-v5e", None, 42])
def test_bad_input_raises_user_error_not_traceback(bad):
    with pytest.raises(UnknownGPUError):
        resolve_gpu(bad)  # type: ignore[arg-type]


# --- widened catalog -------------------------------------------------------------------------------

@pytest.mark.parametrize(
    "name, gpu_id",
    [   # nvidia-smi / torch names and Kubernetes GPU feature discovery labels
        ("Tesla T4", "nvidia-t4-16gb"), ("Tesla-T4", "nvidia-t4-16gb"), ("T4", "nvidia-t4-16gb"),
        ("NVIDIA A10G", "nvidia-a10g-24gb"), ("NVIDIA-A10G", "nvidia-a10g-24gb"),
        ("NVIDIA L4", "nvidia-l4-24gb"), ("NVIDIA-L4", "nvidia-l4-24gb"),
        ("NVIDIA L40S", "nvidia-l40s-48gb"), ("NVIDIA-L40S", "nvidia-l40s-48gb"),
        ("NVIDIA RTX A6000", "nvidia-rtx-a6000-48gb"), ("NVIDIA-RTX-A6000", "nvidia-rtx-a6000-48gb"),
        ("A6000", "nvidia-rtx-a6000-48gb"),
        ("NVIDIA RTX 6000 Ada Generation", "nvidia-rtx-6000-ada-48gb"),
        ("NVIDIA-RTX-6000-Ada-Generation", "nvidia-rtx-6000-ada-48gb"),
        ("NVIDIA GeForce RTX 4090", "nvidia-rtx-4090-24gb"), ("NVIDIA-GeForce-RTX-4090", "nvidia-rtx-4090-24gb"),
        ("NVIDIA GeForce RTX 5090", "nvidia-rtx-5090-32gb"), ("NVIDIA-GeForce-RTX-5090", "nvidia-rtx-5090-32gb"),
        ("NVIDIA H20", "nvidia-h20-96gb"), ("NVIDIA-H20", "nvidia-h20-96gb"),
        ("NVIDIA B200", "nvidia-b200"), ("NVIDIA-B200", "nvidia-b200"),
        ("NVIDIA GB200", "nvidia-gb200"), ("NVIDIA-GB200", "nvidia-gb200"),
        ("AMD Instinct MI300X", "amd-mi300x-192gb"), ("AMD Instinct MI325X", "amd-mi325x-256gb"),
    ],
)
def test_common_inference_gpus_resolve_exactly(name, gpu_id):
    r = resolve_gpu(name)
    assert (r.gpu.id, r.guessed) == (gpu_id, False)


def test_added_gpus_facts():
    t4 = resolve_gpu("Tesla T4").gpu
    assert t4.compute_capability == "7.5" and t4.tflops["bf16"] is None and t4.tflops["fp16"] == 65.0
    assert t4.memory_bytes == 15360 * MIB
    a6000 = resolve_gpu("NVIDIA RTX A6000").gpu
    assert a6000.compute_capability == "8.6" and a6000.tflops["fp8"] is None and a6000.tflops_estimated
    ada = resolve_gpu("NVIDIA RTX 6000 Ada Generation").gpu
    assert ada.tflops["fp8"] == pytest.approx(1457.0 / 2) and ada.hbm_bandwidth_tb_s == 0.96
    r5090 = resolve_gpu("NVIDIA GeForce RTX 5090").gpu
    assert r5090.compute_capability == "12.0" and r5090.tflops_estimated and r5090.cuda_total_inferred
