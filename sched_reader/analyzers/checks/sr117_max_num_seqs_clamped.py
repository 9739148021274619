"""vLLM lowers --max-num-seqs to --max-num-batched-tokens

From vLLM 0.11.1 the V1 engine's `EngineArgs` resolves the batch defaults and then clamps them: when
--max-num-seqs is not given, `max_num_seqs = min(max_num_seqs, max_num_batched_tokens)`. A token budget
set below the release's default sequence limit (1024 on >= 70 GiB GPUs, 256 on smaller ones) therefore
silently lowers how many requests run at once, with no message at start-up. (Before 0.11.1, and whenever
both flags are given, `--max-num-batched-tokens` < `--max-num-seqs` makes vLLM refuse to start instead:
start-up rule SR106.batched-tokens-below-max-num-seqs.) Source: vLLM `EngineArgs`
`_set_default_max_num_seqs_and_batched_tokens_args` (0.12.0+; `get_batch_defaults` in 0.11.1),
https://github.com/vllm-project/vllm/blob/v0.12.0/vllm/engine/arg_utils.py
"""

from __future__ import annotations

from sched_reader.compat.defaults import scheduler_defaults
from sched_reader.findings import Finding
from sched_reader.models.engine_spec import EngineSpec
from sched_reader.versions import version_key

ID = "SR117"
NAME = "max-num-seqs-clamped"
SEVERITY = "warning"
FIX = "set --max-num-seqs explicitly (at most --max-num-batched-tokens), or raise --max-num-batched-tokens"
TAGS = ("scheduler", "defaults")
FIRST_RELEASE = "0.11.1"  # the clamp exists from this release on


def check(spec: EngineSpec) -> list[Finding]:
    eff, hw = spec.effective, spec.hardware
    if eff is None or hw is None or eff.engine != "v1" or version_key(spec.vllm_version) < version_key(FIRST_RELEASE):
        return []
    if "max_num_seqs" in spec.args or "max_num_batched_tokens" not in spec.args:
        return []
    defaults = scheduler_defaults(spec.vllm_version, hw.gpu.name, hw.gpu.cuda_total_gib,
                                  max_model_len=eff.max_model_len, explicit={})
    default_seqs = (defaults.get("max_num_seqs") or (None, ""))[0]
    budget = eff.max_num_batched_tokens
    if not isinstance(default_seqs, int) or budget is None or budget >= default_seqs:
        return []
    o = spec.args["max_num_batched_tokens"].origin
    return [Finding(
        rule=ID, severity=SEVERITY,
        message=(f"--max-num-batched-tokens {budget} is below vLLM {spec.vllm_version}'s default --max-num-seqs "
                 f"{default_seqs} on {hw.gpu.name}: vLLM lowers --max-num-seqs to {budget} without a message, "
                 f"so at most {budget} requests run at once"),
        file=o.file, line=o.line, key=o.key, fix=FIX,
    )]
