"""Facts read off container images and scheduling hints: vLLM release from an image tag, GPU counts
from resource quantities, GPU product from node labels. No vLLM flag knowledge lives here."""

from __future__ import annotations

import re

from sched_reader.limits import MAX_INT_DIGITS

# Image repositories (last path component) that ship vLLM with the release in the tag:
# vllm/vllm-openai (https://hub.docker.com/r/vllm/vllm-openai/tags), vllm-openai-rocm, vllm-cpu, mirrors
# such as aibrix/vllm-openai.
_VLLM_REPO = re.compile(r"^vllm(?:-openai)?(?:-[a-z0-9]+)*$")
_VERSION_TAG = re.compile(r"^v?(\d+\.\d+(?:\.\d+)*(?:\.?(?:post|rc|dev|a|b)\d*)*)(?:[-+_].*)?$")
_EMBEDDED_VERSION = re.compile(r"vllm[_-]v?(\d+\.\d+(?:\.\d+)*(?:\.?(?:post|rc|dev)\d*)?)")

# Node labels that name a GPU product (values recorded verbatim; the GPU catalog resolves them):
# NVIDIA GPU feature discovery (https://github.com/NVIDIA/k8s-device-plugin#catalog-of-labels),
# GKE (https://cloud.google.com/kubernetes-engine/docs/how-to/gpus), Karpenter AWS, AMD.
GPU_PRODUCT_LABELS = (
    "nvidia.com/gpu.product",
    "cloud.google.com/gke-accelerator",
    "karpenter.k8s.aws/instance-gpu-name",
    "nvidia.com/gpu.family",
    "amd.com/gpu.product-name",
    "gpu.nvidia.com/class",
    "accelerator",
)

# Extended resources that count GPUs per pod/container (Kubernetes device plugins).
GPU_RESOURCES = ("nvidia.com/gpu", "amd.com/gpu", "gpu.intel.com/i915", "habana.ai/gaudi")


def split_image(image: str) -> tuple[str, str | None]:
    """``"vllm/vllm-openai:v0.8.5"`` -> ``("vllm/vllm-openai", "v0.8.5")``; a digest is dropped."""
    image = image.strip().split("@", 1)[0]
    slash = image.rfind("/")
    colon = image.rfind(":")
    if colon > slash:
        return image[:colon], image[colon + 1 :]
    return image, None


def is_vllm_image(image: str) -> bool:
    """True when the image is a vLLM server image (its entrypoint runs the vLLM OpenAI server)."""
    repo, _ = split_image(image)
    return bool(_VLLM_REPO.match(repo.rsplit("/", 1)[-1]))


def vllm_version_from_image(image: str) -> str | None:
    """The vLLM release an image tag names: ``v0.8.5`` -> ``0.8.5``, ``0.8.5.post1``, ``v0.11.0rc2`` ->
    ``0.11.0rc2``; a non-version tag of a vLLM image (``latest``, ``nightly``) is returned as written.
    None when the image is not a vLLM image (``ghcr.io/llm-d/llm-d-cuda:v0.5.0`` names llm-d's release)."""
    repo, tag = split_image(image)
    embedded = _EMBEDDED_VERSION.search(tag or "")
    if not is_vllm_image(image):
        return embedded.group(1) if embedded else None
    if tag is None:
        return "latest"
    m = _VERSION_TAG.match(tag)
    if m:
        return m.group(1)
    if embedded:
        return embedded.group(1)
    return tag


def gpu_quantity(value: object) -> int | str | None:
    """A Kubernetes / compose GPU quantity as an int (``"4"`` -> 4); other text as written."""
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    text = str(value).strip()
    return int(text) if text.isdigit() and len(text) <= MAX_INT_DIGITS else text


def docker_gpus(value: str) -> int | str:
    """``docker run --gpus`` value: ``2`` -> 2, ``"device=0,1"`` -> 2, ``all`` -> ``"all"``."""
    v = value.strip().strip("'\"")
    if v.isdigit():
        return int(v)
    m = re.search(r"device=([0-9,]+)", v)
    if m:
        return len([d for d in m.group(1).split(",") if d])
    m = re.search(r"count=(\d+)", v)
    if m:
        return int(m.group(1))
    return v
