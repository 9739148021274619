"""vLLM as AMD ships it in its dated ``rocm/vllm`` images: builds of the ROCm/vllm fork, ahead of the release they name.

AMD's images (the ones the ROCm vLLM documentation benchmarks) are tagged ``rocm<ROCm>_vllm_<release>_<YYYYMMDD>``,
e.g. ``rocm/vllm:rocm6.4.1_vllm_0.9.1_20250715``. Each is built from a release branch of github.com/ROCm/vllm named
after the tag's date (``0715_rc1``) whose code is upstream vLLM main of a few days or weeks before that date plus
AMD's patches, so it carries upstream changes the named release does not have. Read in the fork's branches
(git history of github.com/ROCm/vllm, snapshot of 2025-08-28; ``git describe`` of each branch tip):

  branch         last commit   git describe                      V1 default on ROCm  V1 AITER FA  unified causal skip
  0610_rc2       2025-06-05    v0.9.0.1+rocm-108-g71faa1880      no                  yes          no
  0624_rc2       2025-06-20    (upstream main after v0.9.1)      yes                 yes          no
  0715_rc1       2025-07-01    (upstream main, 0.9.2 dev)        yes                 yes          no
  0729_rc1       2025-07-25    v0.9.2rc1-400-gebb5d3f44          yes                 yes          yes
  0812_rc2       2025-08-08    v0.9.2rc1-859-g340ea86df          yes                 yes          yes
  0902_rc1       2025-08-26    v0.9.2rc1-1598-gd457cf2d6         yes                 yes          yes
  0909_rc2       2025-09-03    v0.9.2rc1-1600-g0b6bf6691         yes                 yes          yes

so ``rocm/vllm:rocm6.4.1_vllm_0.9.1_20250715`` runs the V1 engine by default on MI300X although upstream 0.9.1 falls
back to V0 on AMD GPUs (compat/platform_engine.py). A feature is in a build when the build's code date (the branch's
last commit; for a tag date without a branch read here, the tag date minus ``MAX_LAG_DAYS``, the longest gap seen
between a branch's name and its last commit, so that an unknown build is never credited with code it may lack) is
on or after the day the feature merged (``FEATURES``).
"""

from __future__ import annotations

import re

from sched_reader.compat.releases import known_releases, release_info

# the local version label the image readers give such a tag: 0.9.1+rocm.20250715 (resolves to the 0.9.1 release data)
LOCAL_LABEL = re.compile(r"\+rocm\.(20\d{6})$")
SOURCE = "github.com/ROCm/vllm release branches (git history), the branches behind AMD's dated rocm/vllm images"

# tag date -> (release branch, date of its last commit)
BRANCHES: dict[str, tuple[str, str]] = {
    "20250610": ("0610_rc2", "2025-06-05"),
    "20250624": ("0624_rc2", "2025-06-20"),
    "20250715": ("0715_rc1", "2025-07-01"),
    "20250729": ("0729_rc1", "2025-07-25"),
    "20250812": ("0812_rc2", "2025-08-08"),
    "20250902": ("0902_rc1", "2025-08-26"),
    "20250909": ("0909_rc2", "2025-09-03"),
}
MAX_LAG_DAYS = 14   # 0715_rc1: tag date 2025-07-15, last commit 2025-07-01

# feature -> (merge date, what it changes, where it was read)
FEATURES: dict[str, tuple[str, str, str]] = {
    "v1_default": ("2025-06-10", "V1 is the default engine on ROCm",
                   "vLLM PR #19440 '[ROCm][V1] Adding ROCm to the list of plaforms using V1 by default', commit "
                   "5241ca50d (vllm/engine/arg_utils.py _is_v1_supported_oracle: is_cuda_alike())"),
    "aiter_fa_v1": ("2025-05-29", "V1 runs AiterFlashAttentionBackend when VLLM_ROCM_USE_AITER and _MHA are on",
                    "ROCm/vllm #561 'Fa upstream3', commit 720729c9c (vllm/v1/attention/backends/rocm_aiter_fa.py, "
                    "vllm/platforms/rocm.py)"),
    "unified_causal_skip": ("2025-07-07", "Triton unified attention skips KV tiles past the causal mask",
                            "vLLM PR #20308, commit 22dd9c273 (vllm/attention/ops/triton_unified_attention.py "
                            "max_seq_prefix_len)"),
}


# a dated moving tag (rocm/vllm-dev:nightly_main_20250801): the build date alone
DATED_TAG = re.compile(r"(?:^|[_-])(20\d{2})(\d{2})(\d{2})(?:[_-]|$)")


def dated_release(tag: str) -> str | None:
    """A dated nightly / main build tag that names no release (``nightly_main_20250801``) -> the newest vLLM release
    whose wheel was built on or before that date (``0.10.0``): a build of main is at least that release (release
    dates: compat/releases index, ``wheel_build_date``). None without a date or when no release predates it."""
    m = DATED_TAG.search(tag or "")
    if not m:
        return None
    day = f"{m.group(1)}-{m.group(2)}-{m.group(3)}"
    older = [r for r in known_releases() if str(release_info(r).get("wheel_build_date") or "9999") <= day]
    return older[-1] if older else None


def code_date(requested: str | None) -> str:
    """ISO date of the fork code behind a version string the image readers give an AMD dated tag (``0.9.1+rocm.20250715`` ->
    ``2025-07-01``); "" for any other version (an upstream release: its own release facts apply)."""
    m = LOCAL_LABEL.search(str(requested or ""))
    if not m:
        return ""
    tag = m.group(1)
    if tag in BRANCHES:
        return BRANCHES[tag][1]
    from datetime import date, timedelta   # only for a dated image without a branch read here

    try:
        built = date(int(tag[:4]), int(tag[4:6]), int(tag[6:]))
    except ValueError:
        return ""
    return (built - timedelta(days=MAX_LAG_DAYS)).isoformat()


def has(build: str, feature: str) -> bool:
    """Whether fork code of ISO date ``build`` (from :func:`code_date`; "" = not a fork build) has ``feature``."""
    return bool(build) and build >= FEATURES[feature][0]


def why(build: str, feature: str) -> str:
    """One line naming the build and the feature's source, for reasons and provenance."""
    merged, what, src = FEATURES[feature]
    return f"ROCm/vllm fork build of {build} ({what} from {merged}: {src}; {SOURCE})"
