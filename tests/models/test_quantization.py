"""Quantization facts: bytes per weight / KV element from the formats' definitions, and compute pipes."""

from __future__ import annotations

import pytest

from sched_reader.errors import InputError, SchedReaderError
from sched_reader.models.gpu_catalog import resolve_gpu
from sched_reader.models.quantization import (
    compute_dtype,
    get_weight_format,
    known_methods,
    kv_bytes_per_element,
    list_weight_formats,
    scheme_from_quant_config,
    weight_format_for,
)


# --- KV cache element sizes ---------------------------------------------------------------------

@pytest.mark.parametrize(
    "kv, model_dtype, expected",
    [
        ("auto", "bfloat16", 2.0),   # "auto" = model dtype; bf16 is 2 bytes
        ("auto", "float16", 2.0),
        ("auto", "half", 2.0),
        ("auto", "float32", 4.0),    # fp32 model -> 4-byte cache (llm-d-planner dtf32 run)
        (None, "bfloat16", 2.0),
        ("bfloat16", "float32", 2.0),
        ("fp8", "bfloat16", 1.0),
        ("fp8_e4m3", "bfloat16", 1.0),
        ("fp8_e5m2", "float16", 1.0),
        ("FP8", "bfloat16", 1.0),
        ("nvfp4", "bfloat16", 0.5625),   # 4 bits + one 8-bit scale per 16 = 4.5 bits
    ],
)
def test_kv_bytes_per_element(kv, model_dtype, expected):
    assert kv_bytes_per_element(kv, model_dtype) == pytest.approx(expected)


def test_fp8_ds_mla_gives_656_bytes_per_token_layer():
    # DeepSeek MLA caches 512 latent + 64 rope = 576 elements per token per layer; the FP8 layout is
    # 512 fp8 bytes + 16 bytes of fp32 tile scales + 64 bf16 rope dims (128 bytes) = 656 bytes.
    assert 576 * kv_bytes_per_element("fp8_ds_mla", "bfloat16") == pytest.approx(512 + 16 + 128)


@pytest.mark.parametrize("bad", ["fp7", "turboquant_k8v4", "int3"])
def test_unknown_kv_dtype_is_a_user_error(bad):
    with pytest.raises(InputError) as exc:
        kv_bytes_per_element(bad, "bfloat16")
    assert exc.value.key == "--kv-cache-dtype"


def test_unknown_model_dtype_is_a_user_error():
    with pytest.raises(SchedReaderError):
        kv_bytes_per_element("auto", "float13")


# --- weight formats ------------------------------------------------------------------------------

def test_scale_overheads_from_the_format_definitions():
    # GPTQ/AWQ int4, group 128: 4 bits + 16-bit scale/128 + 4-bit zero/128 = 4.15625 bits
    assert get_weight_format("gptq_int4_g128").bytes_per_weight == pytest.approx((4 + 20 / 128) / 8)
    assert get_weight_format("awq_int4_g128").bytes_per_weight == pytest.approx((4 + 20 / 128) / 8)
    # MXFP4: E2M1 + one 8-bit E8M0 scale per 32 -> 4.25 bits (OCP MX spec)
    assert get_weight_format("mxfp4").bytes_per_weight == pytest.approx(4.25 / 8)
    # NVFP4: 16 values = 8 packed bytes + 1 fp8 scale byte = 9 bytes (NVIDIA cuTile tutorial)
    assert get_weight_format("nvfp4").bytes_per_weight == pytest.approx(9 / 16)
    # FP8 128x128 block scales: one fp32 per 16384 weights
    assert get_weight_format("fp8_e4m3_block128").bytes_per_weight == pytest.approx(1 + 4 / 16384, rel=1e-6)
    # QLoRA NF4 with double quantisation: 4 + 0.127 bits
    assert get_weight_format("nf4_double_quant").effective_bits_per_weight == pytest.approx(4.127, abs=1e-3)


def test_catalog_rows_are_self_consistent():
    for f in list_weight_formats():
        assert f.bytes_per_weight == pytest.approx(f.effective_bits_per_weight / 8, rel=1e-5), f.id
        assert f.effective_bits_per_weight >= f.weight_bits, f.id
        assert f.source, f.id


@pytest.mark.parametrize(
    "method, fmt_id",
    [
        (None, "bf16"),
        ("fp8", "fp8_e4m3_per_tensor"),
        ("fbgemm_fp8", "fp8_e4m3_per_channel"),
        ("gptq", "gptq_int4_g128"),
        ("gptq_marlin", "gptq_int4_g128"),
        ("awq", "awq_int4_g128"),
        ("awq_marlin", "awq_int4_g128"),
        ("mxfp4", "mxfp4"),
        ("modelopt", "fp8_e4m3_per_tensor"),
        ("modelopt_fp4", "nvfp4"),
        ("bitsandbytes", "nf4_double_quant"),
        ("experts_int8", "int8_experts_only"),
        ("w4a16", "w4a16_g128_symmetric"),
        ("W8A8", "int8_w8a8"),
    ],
)
def test_method_to_format(method, fmt_id):
    assert weight_format_for(method, None, "bfloat16").id == fmt_id


def test_16bit_dtype_when_unquantized():
    assert weight_format_for(None, None, "float16").bytes_per_weight == 2.0
    assert weight_format_for(None, None, "float32").bytes_per_weight == 4.0
    assert weight_format_for(None, None, "auto").id == "bf16"


def test_experts_int8_only_touches_moe_experts():
    assert weight_format_for("experts_int8", None, "bfloat16").applies_to == "moe_experts"
    assert weight_format_for("mxfp4", None, "bfloat16").applies_to == "moe_experts"


def test_checkpoint_config_refines_the_method():
    deepseek = {"quant_method": "fp8", "fmt": "e4m3", "activation_scheme": "dynamic", "weight_block_size": [128, 128]}
    assert weight_format_for("fp8", deepseek, "bfloat16").id == "fp8_e4m3_block128"
    gptq_g64 = {"quant_method": "gptq", "bits": 4, "group_size": 64, "desc_act": False}
    assert weight_format_for("gptq_marlin", gptq_g64, "float16").bytes_per_weight == pytest.approx((4 + 20 / 64) / 8)
    gptq_int8 = {"quant_method": "gptq", "bits": 8, "group_size": 128}
    assert weight_format_for(None, gptq_int8, "float16").weight_bits == 8


def test_compressed_tensors_configs():
    w4a16 = {"quant_method": "compressed-tensors", "format": "pack-quantized",
             "config_groups": {"group_0": {"weights": {"num_bits": 4, "type": "int", "symmetric": True,
                                                       "strategy": "group", "group_size": 128},
                                           "input_activations": None}}}
    assert weight_format_for("compressed-tensors", w4a16, "bfloat16").id == "w4a16_g128_symmetric"
    assert scheme_from_quant_config(w4a16) == ("w4a16", "compressed-tensors")
    fp8_dyn = {"quant_method": "compressed-tensors", "format": "float-quantized",
               "config_groups": {"group_0": {"weights": {"num_bits": 8, "type": "float", "strategy": "channel"},
                                             "input_activations": {"num_bits": 8, "type": "float", "dynamic": True}}}}
    assert weight_format_for("compressed-tensors", fp8_dyn, "bfloat16").id == "fp8_e4m3_per_channel"
    assert scheme_from_quant_config(fp8_dyn) == ("fp8", "compressed-tensors")
    int8 = {"quant_method": "compressed-tensors",
            "config_groups": {"g": {"weights": {"num_bits": 8, "type": "int", "strategy": "channel"},
                                    "input_activations": {"num_bits": 8, "type": "int", "dynamic": True}}}}
    assert weight_format_for("compressed-tensors", int8, "bfloat16").id == "int8_w8a8"


def test_compressed_tensors_scheme_label_without_config():
    assert weight_format_for("compressed-tensors", None, "bfloat16", scheme="w4a16").weight_bits == 4
    assert weight_format_for("compressed-tensors", None, "bfloat16", scheme="fp8").id == "fp8_e4m3_per_channel"
    assumed = weight_format_for("compressed-tensors", None, "bfloat16")
    assert assumed.note and "assumed" in assumed.note


def test_unknown_method_is_a_user_error():
    with pytest.raises(InputError) as exc:
        weight_format_for("fp9000", None, "bfloat16")
    assert "fp9000" in str(exc.value)


def test_vllm_method_names_are_covered():
    for m in ["fp8", "compressed-tensors", "gptq", "gptq_marlin", "awq", "awq_marlin", "mxfp4", "modelopt",
              "modelopt_fp4", "bitsandbytes", "fbgemm_fp8", "experts_int8"]:
        assert m in known_methods()


# --- compute pipes -------------------------------------------------------------------------------

@pytest.mark.parametrize(
    "fmt_id, gpu, expected",
    [
        ("fp8_e4m3_per_channel", "H100", "fp8"),     # Hopper has FP8 tensor cores
        ("fp8_e4m3_per_channel", "L40S", "fp8"),     # Ada too
        ("fp8_e4m3_per_channel", "B200", "fp8"),     # Blackwell too
        ("fp8_e4m3_per_channel", "A100", "bf16"),    # Ampere: weight-only FP8 (Marlin), 16-bit MMA
        ("int8_w8a8", "A100", "int8"),               # Ampere has INT8 tensor cores
        ("gptq_int4_g128", "H100", "bf16"),          # w4a16 computes in 16-bit
        ("awq_int4_g128", "B200", "bf16"),
        ("nvfp4", "B200", "fp4"),                    # native FP4 on Blackwell
        ("nvfp4", "H100", "bf16"),                   # weight-only elsewhere
        ("mxfp4", "H100", "bf16"),                   # gpt-oss on Hopper: w4a16
        ("bf16", "V100", "fp16"),                    # Volta has no BF16 tensor cores
        ("fp8_e4m3_per_tensor", "V100", "fp16"),
        ("fp8_e4m3_per_tensor", "MI300X", "fp8"),
    ],
)
def test_compute_dtype(fmt_id, gpu, expected):
    assert compute_dtype(get_weight_format(fmt_id), resolve_gpu(gpu).gpu) == expected


def test_compute_dtype_follows_fp16_activations():
    assert compute_dtype(get_weight_format("gptq_int4_g128"), resolve_gpu("A100").gpu, "float16") == "fp16"


@pytest.mark.parametrize(
    "label, gpu, expected",
    [("fp8", "H100", "fp8"), ("fp8", "A100", "bf16"), ("w4a16", "H100", "bf16"), ("int8", "A100", "int8"),
     ("awq_marlin", "L4", "bf16"), ("nvfp4", "B200", "fp4"), ("mxfp4", "B200", "fp8")],
)
def test_compute_dtype_accepts_labels(label, gpu, expected):
    assert compute_dtype(label, resolve_gpu(gpu).gpu) == expected


def test_compute_dtype_unknown_label_is_a_user_error():
    with pytest.raises(InputError):
        compute_dtype("fp3", resolve_gpu("H100").gpu)
