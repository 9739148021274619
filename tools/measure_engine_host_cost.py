"""Host time per running request per decode step of vLLM's V1 engine core, timed with vLLM's own code on CPU.

Not part of the package (needs an installed vLLM wheel and torch; sched-reader depends on neither). For a
release X: ``pip download vllm==X --no-deps``, install it (``pip install --no-deps --target DIR``; 0.9.x
needs ``transformers<4.54``) next to a CPU torch, and run with ``PYTHONPATH=DIR``. No GPU is touched: the
model runner is replaced by a ModelRunnerOutput of one sampled token per request, so what is timed is the
engine-core work the cost model's ``Efficiency.step_cpu_per_seq_s`` stands for, per step, on the host:

  schedule      Scheduler.schedule(): the running loop, KV block allocation (KVCacheManager.allocate_slots),
                the SchedulerOutput with its per-request CachedRequestData
  update        Scheduler.update_from_output(): per request, append the token, check_stop, the
                EngineCoreOutput, block hashing of a filled block (0.10+: Request.block_hasher, sha256)
  encode        MsgpackEncoder.encode of each EngineCoreOutput (the output thread's serialization)

N requests of 200 prompt tokens are prefilled first, then 60 decode steps are timed with the garbage
collector off (CPU time, ``time.process_time``). Not timed: the model runner's own per-request host work
(GPUModelRunner._update_states, _prepare_inputs, _bookkeeping_sync; it needs a device) and the API-server
process (models/cost/frontend.py).

Results on this project's build machine (2-core AMD EPYC at 2.6 GHz shared with other jobs; releases
interleaved, two rounds; us per running request per step, schedule + update + encode):

  release   N=64        N=256       N=1024
  0.9.2     8.2-11.9    9.5-19.3    12.4-17.9
  0.10.2    8.1-16.7    8.3-16.0    10.9-13.8
  0.11.0    7.7-10.3    9.0-14.8    10.9-15.1

The spread between rounds on the shared machine (up to 2x) is larger than any difference between releases:
no release costs measurably more than another, so this host work cannot separate the vLLM 0.9.2 bursts
(PR 20308, predicted too slow) from the 0.10.2-0.11.0 GPUStack bursts (predicted too fast). Schedule alone is
6-14 us per request, in line with the 12.7 us the simllm profile behind ``step_cpu_per_seq_s`` (45 us)
measured for Scheduler.schedule; that constant's other 30 us come from scaling by the profile's phase shares
(67.1 / 18.8), which the timed update + encode (2-6 us) do not reach.

Run:  PYTHONPATH=DIR python3 tools/measure_engine_host_cost.py [N ...]
"""

from __future__ import annotations

import dataclasses
import gc
import statistics
import sys
import tempfile
import time
from pathlib import Path

import torch
import vllm
from vllm.config import CacheConfig, DeviceConfig, ModelConfig, SchedulerConfig, VllmConfig
from vllm.model_executor.models import registry
from vllm.platforms import current_platform
from vllm.sampling_params import SamplingParams
from vllm.v1.core.sched.scheduler import Scheduler
from vllm.v1.kv_cache_interface import FullAttentionSpec, KVCacheConfig, KVCacheGroupSpec, KVCacheTensor
from vllm.v1.outputs import ModelRunnerOutput
from vllm.v1.request import Request
from vllm.v1.serial_utils import MsgpackEncoder
from vllm.v1.structured_output import StructuredOutputManager

# Llama-3.1-8B's config.json (huggingface.co/meta-llama/Llama-3.1-8B-Instruct): the scheduler reads only the
# context length and the architecture name from it; KV blocks of 16 tokens, 8 KV heads of 128
LLAMA_CONFIG = ('{"architectures": ["LlamaForCausalLM"], "model_type": "llama", "hidden_size": 4096, '
                '"intermediate_size": 14336, "num_attention_heads": 32, "num_hidden_layers": 32, '
                '"num_key_value_heads": 8, "max_position_embeddings": 131072, "rms_norm_eps": 1e-05, '
                '"rope_theta": 500000.0, "vocab_size": 128256, "torch_dtype": "bfloat16", '
                '"tie_word_embeddings": false, "hidden_act": "silu"}')
BLOCK = 16
PROMPT = 200
STEPS = 60


def _no_inspection(model_arch, model):
    """The model registry's class inspection (a subprocess importing the model on a device) replaced by the
    answers of a plain text-generation model."""
    fields = {f.name: False for f in dataclasses.fields(registry._ModelInfo)}
    fields.update(architecture=model_arch, is_text_generation_model=True, supports_pp=True)
    if "default_pooling_type" in fields:
        fields["default_pooling_type"] = "LAST"
    return registry._ModelInfo(**fields)


def _setup() -> None:
    registry._try_inspect_model_cls = _no_inspection
    try:   # 0.10.x asks the (CPU-less) unspecified platform whether async output is supported
        type(current_platform).is_async_output_supported = classmethod(lambda cls, eager: False)
    except (AttributeError, TypeError):
        pass


def _hasher():
    """0.10+: the request block hasher EngineCore builds (prefix caching on, sha256); None before."""
    try:
        from vllm.utils import get_hash_fn_by_name
        from vllm.v1.core.kv_cache_utils import get_request_block_hasher, init_none_hash
    except ImportError:
        return None
    fn = get_hash_fn_by_name("sha256")
    init_none_hash(fn)
    return get_request_block_hasher(BLOCK, fn)


def make_scheduler(model_dir: str, num_blocks: int, max_num_seqs: int) -> Scheduler:
    mc = ModelConfig(model=model_dir, skip_tokenizer_init=True, dtype="bfloat16", seed=0, max_model_len=8192)
    sc = SchedulerConfig(max_num_seqs=max_num_seqs, max_num_batched_tokens=8192, max_model_len=8192)
    cc = CacheConfig(block_size=BLOCK, gpu_memory_utilization=0.9, swap_space=0, cache_dtype="auto",
                     enable_prefix_caching=True)
    cc.num_gpu_blocks = num_blocks
    vc = VllmConfig(model_config=mc, scheduler_config=sc, cache_config=cc, device_config=DeviceConfig("cpu"))
    spec = FullAttentionSpec(BLOCK, 8, 128, torch.bfloat16, False)
    kvc = KVCacheConfig(num_blocks=num_blocks, kv_cache_tensors=[KVCacheTensor(size=1, shared_by=["l"])],
                        kv_cache_groups=[KVCacheGroupSpec(["l"], spec)])
    return Scheduler(vllm_config=vc, kv_cache_config=kvc, log_stats=True,
                     structured_output_manager=StructuredOutputManager(vc))


def make_request(i: int, hasher) -> Request:
    sp = SamplingParams(temperature=0.0, max_tokens=100000, ignore_eos=True)   # vllm bench serve: greedy
    start = i * 7919 % 50000   # distinct prompts: no prefix-cache hits
    kw = dict(request_id=str(i), prompt_token_ids=list(range(start, start + PROMPT)), sampling_params=sp,
              pooling_params=None, eos_token_id=2)
    if hasher is not None:
        kw["block_hasher"] = hasher
    try:
        return Request(**kw, mm_features=None)                 # 0.11
    except TypeError:
        return Request(**kw, multi_modal_inputs=None, multi_modal_hashes=None, multi_modal_placeholders=None)


_MRO_FIELDS = {f.name for f in dataclasses.fields(ModelRunnerOutput)}


def runner_output(ids: list[str], token: int) -> ModelRunnerOutput:
    """What the model runner returns for one decode step: one sampled token per scheduled request."""
    kw = dict(req_ids=ids, req_id_to_index={r: j for j, r in enumerate(ids)}, sampled_token_ids=[[token] for _ in ids],
              logprobs=None, prompt_logprobs_dict={}, pooler_output=[], spec_token_ids=None)
    return ModelRunnerOutput(**{k: v for k, v in kw.items() if k in _MRO_FIELDS})


def run(model_dir: str, n: int, hasher) -> tuple[float, float, float]:
    """CPU seconds per decode step (schedule, update_from_output, encoding) with ``n`` running requests."""
    s = make_scheduler(model_dir, n * 40 + 100, n)
    for i in range(n):
        s.add_request(make_request(i, hasher))
    for _ in range(100):   # prefill every prompt
        so = s.schedule()
        ids = list(so.num_scheduled_tokens)
        s.update_from_output(so, runner_output(ids, 5))
        if len(s.running) == n and all(r.num_computed_tokens >= r.num_prompt_tokens for r in s.running):
            break
    enc = MsgpackEncoder()
    gc.collect()
    gc.disable()
    t_s = t_u = t_e = 0.0
    for k in range(STEPS):
        a = time.process_time()
        so = s.schedule()
        b = time.process_time()
        mro = runner_output(list(so.num_scheduled_tokens), 7 + k)
        c = time.process_time()
        outs = s.update_from_output(so, mro)
        d = time.process_time()
        for o in outs.values():
            enc.encode(o)
        e = time.process_time()
        t_s, t_u, t_e = t_s + b - a, t_u + d - c, t_e + e - d
    gc.enable()
    return t_s / STEPS, t_u / STEPS, t_e / STEPS


def main(argv: list[str]) -> int:
    _setup()
    sizes = [int(a) for a in argv] or [64, 256, 1024]
    hasher = _hasher()
    with tempfile.TemporaryDirectory() as d:
        Path(d, "config.json").write_text(LLAMA_CONFIG)
        print(f"vLLM {vllm.__version__}: us per running request per decode step (median of 3 runs)")
        for n in sizes:
            med = [statistics.median(x) for x in zip(*(run(d, n, hasher) for _ in range(3)))]
            print(f"N={n:5}  schedule {med[0] / n * 1e6:5.1f}  update {med[1] / n * 1e6:5.1f}  "
                  f"encode {med[2] / n * 1e6:4.1f}  total {sum(med) / n * 1e6:5.1f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
