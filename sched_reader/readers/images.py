"""Facts read off container images and scheduling hints: vLLM release from an image tag, GPU counts
from resource quantities, GPU product from node labels. No vLLM flag knowledge lives here."""

from __future__ import annotations

import re

from sched_reader.limits import MAX_INT_DIGITS
from sched_reader.origin import Origin
from sched_reader.readers.raw import Hint, RawEngine

# Image repositories (last path component) that ship vLLM with the release in the tag:
# vllm/vllm-openai (https://hub.docker.com/r/vllm/vllm-openai/tags), vllm-openai-rocm, vllm-cpu, mirrors
# such as aibrix/vllm-openai.
_VLLM_REPO = re.compile(r"^vllm(?:-openai)?(?:-[a-z0-9]+)*$")
_VERSION_TAG = re.compile(r"^v?(\d+\.\d+(?:\.\d+)*(?:\.?(?:post|rc|dev|a|b)\d*)*)(?:[-+_].*)?$")
_RELEASE_PREFIX = re.compile(r"^v?(\d+\.\d+\.\d+)[._-]?([A-Za-z0-9][A-Za-z0-9._-]*)$")
# AMD's dated images: rocm6.4.1_vllm_0.9.1_20250715 -> ("0.9.1", "20250715")
# and the older form rocm6.3.1_instinct_vllm0.8.3_20250410 -> ("0.8.3", "20250410")
_ROCM_DATED = re.compile(r"(?:^|_)vllm_?v?(\d+\.\d+(?:\.\d+)*)_(20\d{6})(?:_|$)")
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
    "cloud.google.com/gke-tpu-accelerator",
)

# Extended resources that count accelerators per pod/container (Kubernetes device plugins): NVIDIA, AMD,
# Intel GPU, Intel Gaudi (https://docs.habana.ai/en/latest/Orchestration/Gaudi_Kubernetes/), Google TPU
# (https://cloud.google.com/kubernetes-engine/docs/concepts/tpus), AWS Neuron.
GPU_RESOURCES = ("nvidia.com/gpu", "amd.com/gpu", "gpu.intel.com/i915", "gpu.intel.com/xe", "habana.ai/gaudi",
                 "google.com/tpu", "aws.amazon.com/neuroncore", "aws.amazon.com/neuron")

# Node labels that name a TPU slice type (GKE) -- an accelerator, not a GPU product.
TPU_LABELS = ("cloud.google.com/gke-tpu-accelerator",)


def accelerator_family(key: str, value: object = None) -> str | None:
    """Accelerator family implied by a resource name / label key (and its value): ``google.com/tpu`` ->
    ``tpu``, ``habana.ai/gaudi`` -> ``gaudi``, ``amd.com/gpu`` -> ``amd``; None for NVIDIA or unknown."""
    k = key.lower()
    v = str(value or "").lower()
    if "google.com/tpu" in k or "gke-tpu" in k or v.startswith("tpu-v") or v.startswith("tpu v"):
        return "tpu"
    if "habana" in k or "gaudi" in k or "gaudi" in v or v.startswith("hl-"):
        return "gaudi"
    if "amd.com/gpu" in k:
        return "amd"
    if "gpu.intel.com" in k:
        return "intel-gpu"
    if "neuron" in k:
        return "neuron"
    return None


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
    None when the image is not a vLLM image (``ghcr.io/llm-d/llm-d-cuda:v0.5.0`` names llm-d's release). AMD's dated
    images keep their build date: ``rocm/vllm:rocm6.4.1_vllm_0.9.1_20250715`` -> ``0.9.1+rocm.20250715`` (a local
    version label, which compat/rocm_builds.py reads)."""
    repo, tag = split_image(image)
    if repo.lower().startswith("rocm/") and tag:
        # AMD's dated images (rocm6.4.1_vllm_0.9.1_20250715) are ROCm/vllm fork builds ahead of the release they name:
        # the build date travels as a local version label (compat/rocm_builds.py)
        m = _ROCM_DATED.search(tag)
        if m:
            return f"{m.group(1)}+rocm.{m.group(2)}"
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
    m = _RELEASE_PREFIX.match(tag)
    if m:  # a custom build named after its base release: v0.7.3.self.post1 -> 0.7.3+self.post1
        return f"{m.group(1)}+{m.group(2)}"
    return tag


def version_from_option(text: str) -> str:
    """A ``--vllm`` value as the image readers would give it: an image reference (``rocm/vllm:rocm6.4.1_vllm_0.9.1_20250715``,
    ``vllm/vllm-openai:v0.9.2``) -> :func:`vllm_version_from_image` of it (``0.9.1+rocm.20250715``, ``0.9.2``); a bare AMD
    dated tag (``rocm6.4.1_vllm_0.9.1_20250715``) -> the same as under ``rocm/vllm``; any other text unchanged."""
    s = str(text or "").strip().strip("'\"").strip()
    if "/" in s and ":" in s.rsplit("/", 1)[-1]:
        return vllm_version_from_image(s) or s
    if s.lower().startswith("rocm") and _ROCM_DATED.search(s):
        return vllm_version_from_image("rocm/vllm:" + s) or s
    return s


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


_DOWNLOAD = re.compile(
    r"(?:huggingface-cli|\bhf)\s+download\s+([A-Za-z0-9][\w.-]*/[\w.-]+)((?:\s+(?!--local-dir)\S+)*?)\s+--local-dir[=\s]+"
    r"['\"]?([^\s'\"]+)")
_SNAPSHOT = re.compile(r"snapshot_download\(\s*(?:repo_id\s*=\s*)?['\"]([\w.-]+/[\w.-]+)['\"][^)]*?local_dir\s*=\s*"
                       r"['\"]([^'\"]+)['\"]")


def downloaded_model(path: str, scripts: list[str]) -> str | None:
    """The Hugging Face id that a download step in ``scripts`` writes to the local ``path``
    (``hf download ORG/NAME --local-dir PATH``, ``huggingface-cli download ...``, ``snapshot_download(
    repo_id=..., local_dir=...)``), or None."""
    want = path.rstrip("/")
    for text in scripts:
        for m in _DOWNLOAD.finditer(text):
            if m.group(3).rstrip("/") == want:
                return m.group(1)
        for m in _SNAPSHOT.finditer(text):
            if m.group(2).rstrip("/") == want:
                return m.group(1)
    return None


def release_from_image(e: RawEngine, image: str, origin: Origin, why_unknown: str = "") -> None:
    """Set ``e.vllm_version`` from the release ``image`` names (a hint at ``origin``), or note on the engine
    that it names none (``why_unknown`` is appended to that note, e.g. " (llm-d images carry their own
    version)")."""
    version = vllm_version_from_image(image)
    if version is not None:
        e.vllm_version = Hint(value=version, origin=origin)
    else:
        e.notes.append(f"image {image} does not name a vLLM release{why_unknown}")
