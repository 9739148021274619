"""Block accounting: contiguous per-request KV reservation vs paged blocks (PagedAttention).

For a seeded sample of request lengths (tokens held in the KV cache at the end of each request), a
contiguous allocator reserves ``max_model_len`` token slots per request up front; a paged allocator
reserves ``ceil(len / block_size)`` blocks of ``block_size`` slots. Waste is the share of reserved
slots never written. Concurrency is how many requests of the sample's average footprint fit in a KV
budget. Units: tokens, bytes; deterministic for a given seed (numpy default_rng).
"""

import numpy as np
from pydantic import Field

from sched_reader.data_model import DataModel, new_list
from sched_reader.models.weights import Term


class AllocatorStats(DataModel):
    """One allocator's totals over the sample."""

    name: str
    reserved_tokens: int            # token slots reserved, summed over requests
    used_tokens: int                # token slots actually written
    waste_fraction: float           # (reserved - used) / reserved
    reserved_bytes: int
    max_concurrency: float          # requests of average footprint that fit in the budget (floor)


class BlockAccountingResult(DataModel):
    n_requests: int
    block_size: int
    max_model_len: int
    kv_bytes_per_token: int
    kv_budget_bytes: int
    mean_len: float
    contiguous: AllocatorStats
    paged: AllocatorStats
    explain: list[Term] = Field(default_factory=new_list)


def sample_lengths(n: int, mean: float, sd: float, max_model_len: int, seed: int = 0,
                   prompt_len: int = 0) -> np.ndarray:
    """Request KV lengths: prompt + normal(mean, sd) output tokens, rounded, clipped to [1, max_model_len]."""
    rng = np.random.default_rng(seed)
    out = np.rint(rng.normal(mean, sd, size=n)).astype(np.int64)
    return np.clip(out + prompt_len, 1, max_model_len)


def block_accounting(n_requests: int = 1000, output_mean: float = 1500, output_sd: float = 600,
                     max_model_len: int = 8192, block_size: int = 16, kv_bytes_per_token: int = 327_680,
                     kv_budget_bytes: int | None = None, prompt_len: int = 0, seed: int = 0) -> BlockAccountingResult:
    """Compare contiguous (reserve max_model_len) and paged (block_size blocks) KV allocation.

    ``kv_budget_bytes`` defaults to what the contiguous allocator needs for 100 requests.
    """
    lens = sample_lengths(n_requests, output_mean, output_sd, max_model_len, seed, prompt_len)
    budget = int(kv_budget_bytes if kv_budget_bytes is not None else 100 * max_model_len * kv_bytes_per_token)
    lengths_term = Term(
        name="lengths", formula="clip(rint(normal(mean, sd)) + prompt, 1, max_model_len), numpy default_rng(seed)",
        inputs={"n": n_requests, "mean": output_mean, "sd": output_sd, "seed": seed, "prompt": prompt_len},
        value=float(lens.mean()), unit="tokens (mean)")
    return account_lengths(lens, max_model_len=max_model_len, block_size=block_size,
                           kv_bytes_per_token=kv_bytes_per_token, kv_budget_bytes=budget,
                           lengths_term=lengths_term)


def account_lengths(lens: np.ndarray, *, max_model_len: int, block_size: int, kv_bytes_per_token: int,
                    kv_budget_bytes: int, lengths_term: Term | None = None) -> BlockAccountingResult:
    """Contiguous vs paged reservation for explicit per-request KV lengths (tokens, clipped to max_model_len)."""
    lens = np.clip(np.asarray(lens, dtype=np.int64), 1, max_model_len)
    n_requests = int(lens.shape[0])
    used = int(lens.sum())
    budget = int(kv_budget_bytes)
    budget_tokens = budget // kv_bytes_per_token

    cont_reserved = n_requests * max_model_len
    paged_reserved = int((-(-lens // block_size) * block_size).sum())

    def stats(name: str, reserved: int, per_request_slots: float) -> AllocatorStats:
        return AllocatorStats(
            name=name, reserved_tokens=reserved, used_tokens=used,
            waste_fraction=(reserved - used) / reserved if reserved else 0.0,
            reserved_bytes=reserved * kv_bytes_per_token,
            max_concurrency=float(np.floor(budget_tokens / per_request_slots)) if per_request_slots else 0.0)

    cont = stats("contiguous", cont_reserved, float(max_model_len))
    paged = stats("paged", paged_reserved, paged_reserved / n_requests)
    explain = ([lengths_term] if lengths_term is not None else []) + [
        Term(name="contiguous_waste", formula="1 - sum(len) / (n x max_model_len)",
             inputs={"sum_len": used, "n": n_requests, "max_model_len": max_model_len},
             value=cont.waste_fraction, unit="fraction"),
        Term(name="paged_waste", formula="1 - sum(len) / sum(ceil(len / block_size) x block_size)",
             inputs={"sum_len": used, "reserved": paged_reserved, "block_size": block_size},
             value=paged.waste_fraction, unit="fraction"),
        Term(name="contiguous_concurrency", formula="floor(budget_tokens / max_model_len)",
             inputs={"budget_tokens": budget_tokens}, value=cont.max_concurrency, unit="requests"),
        Term(name="paged_concurrency", formula="floor(budget_tokens / mean reserved slots per request)",
             inputs={"budget_tokens": budget_tokens, "mean_reserved": paged_reserved / n_requests},
             value=paged.max_concurrency, unit="requests"),
    ]
    return BlockAccountingResult(n_requests=n_requests, block_size=block_size, max_model_len=max_model_len,
                                 kv_bytes_per_token=kv_bytes_per_token, kv_budget_bytes=budget,
                                 mean_len=float(lens.mean()), contiguous=cont, paged=paged, explain=explain)
