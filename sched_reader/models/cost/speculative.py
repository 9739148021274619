"""Speculative decoding: expected tokens per step, draft and verify cost, and where it stops paying.

With per-token acceptance rate a (probability that each successive draft token is accepted, i.i.d.)
and k draft tokens, the tokens emitted per verify step (accepted prefix + the bonus token) are
    E[tokens] = 1 + a + a^2 + ... + a^k = (1 - a^(k+1)) / (1 - a)        (= k + 1 when a = 1)
(Leviathan et al. 2023, "Fast Inference from Transformers via Speculative Decoding", eq. 1).

One speculative step = draft (k proposals per sequence) + verify (k + 1 query tokens per sequence
through the target model, context KV read once). TPOT = step time / E[tokens].
Draft cost by method (``cfg.speculative["method"]``):
  ngram        host-side n-gram lookup: NGRAM_HOST_S_PER_SEQ per sequence, no GPU work
  eagle/eagle3 one decoder layer of the target's width + the target lm_head, run k times
  mtp          the model's own next-token module (one decoder layer, MoE if the model is), run k times
  medusa       k heads (hidden x hidden residual block + lm_head), one pass
  draft_model  a separate model (pass ``draft_arch``), k decode steps; unknown -> DRAFT_MODEL_FALLBACK
Units: seconds, tokens.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sched_reader.models.architecture import ModelArch
from sched_reader.models.cost.iteration import IterationCostModel

# Default per-token acceptance rate by method: (value, where it comes from).
DEFAULT_ACCEPTANCE: dict[str, tuple[float, str]] = {
    "mtp": (0.85, "DeepSeek-V3 Technical Report (arXiv:2412.19437) sec. 5.4.3: acceptance rate of the "
                  "second-token prediction 85%-90%; lower end used"),
    "eagle3": (0.70, "assumed: EAGLE-3 raises acceptance over EAGLE; measure with vLLM spec-decode metrics"),
    "eagle": (0.60, "assumed: typical chat acceptance for EAGLE heads; measure with vLLM spec-decode metrics"),
    "medusa": (0.50, "assumed: Medusa heads accept less than EAGLE (later heads see no draft context)"),
    "draft_model": (0.60, "assumed: small same-family draft model on chat data"),
    "ngram": (0.30, "assumed: prompt-lookup n-gram on chat data (much higher on summarization/code edits)"),
}
NGRAM_HOST_S_PER_SEQ = 5e-6      # assumed: numba n-gram match over the prompt on the host, per sequence
DRAFT_MODEL_FALLBACK = 0.10      # assumed: unknown draft model costs 10% of a target decode step


def expected_tokens_per_step(acceptance: float, k: int) -> float:
    """(1 - a^(k+1)) / (1 - a): tokens emitted per verify step (see module docstring)."""
    if k <= 0:
        return 1.0
    a = min(max(acceptance, 0.0), 1.0)
    if a >= 1.0:
        return float(k + 1)
    return (1.0 - a ** (k + 1)) / (1.0 - a)


def _one_layer(arch: ModelArch) -> ModelArch:
    """A copy of ``arch`` with a single full-attention decoder layer (MoE if the model has experts)."""
    c = dict(arch.config)
    c["num_hidden_layers"] = 1
    c["first_k_dense_replace"] = 0
    c["mlp_only_layers"] = []
    if isinstance(c.get("layer_types"), list):
        c["layer_types"] = ["full_attention"]
    return arch.model_copy(update={"config": c, "id": f"{arch.id}#draft-layer"})


@dataclass(frozen=True)
class SpecStep:
    """One speculative step at a batch: times in seconds, tokens per sequence."""

    num_seqs: int
    draft_s: float
    verify_s: float
    step_s: float
    tokens_per_step: float
    tpot_s: float
    baseline_step_s: float     # plain decode step at the same batch

    @property
    def speedup(self) -> float:
        """Throughput (and TPOT) ratio spec / no-spec at this batch."""
        return self.baseline_step_s / self.tpot_s if self.tpot_s else 0.0


class SpeculativeModel:
    """Cost of speculative decoding on top of an :class:`IterationCostModel`."""

    def __init__(self, target: IterationCostModel, spec: dict[str, Any], acceptance: float | None = None,
                 draft_arch: ModelArch | None = None) -> None:
        self.target = target
        self.method = str(spec.get("method") or "draft_model").lower()
        self.k = int(spec.get("num_speculative_tokens") or 1)
        default, source = DEFAULT_ACCEPTANCE.get(self.method, DEFAULT_ACCEPTANCE["draft_model"])
        self.acceptance = float(acceptance) if acceptance is not None else default
        self.acceptance_source = "given" if acceptance is not None else source
        self.notes: list[str] = []
        self._draft: IterationCostModel | None = None
        cfg_plain = target.cfg.model_copy(update={"speculative": None})
        if self.method in ("eagle", "eagle3", "mtp"):
            self._draft = IterationCostModel(_one_layer(target.arch), target.gpu, cfg_plain,
                                             efficiency=target.eff)
        elif self.method == "draft_model" and draft_arch is not None:
            self._draft = IterationCostModel(draft_arch, target.gpu, cfg_plain, efficiency=target.eff)
        elif self.method == "draft_model":
            self.notes.append(f"draft model unknown: its step assumed {DRAFT_MODEL_FALLBACK:.0%} of a target step")

    @property
    def tokens_per_step(self) -> float:
        return expected_tokens_per_step(self.acceptance, self.k)

    def draft_time(self, num_seqs: int, context_sum: int) -> float:
        """Seconds to propose k tokens for ``num_seqs`` sequences (GPU time; host time is in verify)."""
        if num_seqs <= 0:
            return 0.0
        if self.method == "ngram":
            return NGRAM_HOST_S_PER_SEQ * num_seqs
        if self.method == "medusa":
            t = self.target
            f_lm, w_lm, io_lm, r_lm = t._lm
            h = t.shapes.hidden
            # k heads: residual block (h x h) + lm_head each, one pass over num_seqs tokens
            res_params = h * h
            flops = self.k * (f_lm * num_seqs + 2.0 * res_params * num_seqs)
            nbytes = self.k * (w_lm + io_lm * num_seqs + res_params * t.precision.act_bytes)
            return max(flops / r_lm, nbytes / t.bw)
        if self._draft is None:
            return DRAFT_MODEL_FALLBACK * self.target.step_time(num_seqs, context_sum, 0, 0.0) * self.k
        gpu, _, _, _ = self._draft._evaluate(num_seqs, context_sum, 0, 0.0, 0, max, min, False)
        return self.k * float(gpu)

    def step(self, num_seqs: int, mean_context: float) -> SpecStep:
        """Draft + verify at ``num_seqs`` sequences with ``mean_context`` cached tokens each."""
        S = int(round(num_seqs * mean_context))
        draft = self.draft_time(num_seqs, S)
        verify = self.target.verify_step_time(num_seqs, S, self.k + 1)
        step = draft + verify
        base = self.target.step_time(num_seqs, S, 0, 0.0)
        return SpecStep(num_seqs, draft, verify, step, self.tokens_per_step, step / self.tokens_per_step, base)

    def breakeven_batch(self, mean_context: float, max_batch: int) -> int | None:
        """Smallest batch in [1, max_batch] where speculation no longer raises throughput; None if it
        pays up to ``max_batch``."""
        for b in range(1, max_batch + 1):
            if self.step(b, mean_context).speedup <= 1.0:
                return b
        return None

    def describe(self) -> dict[str, Any]:
        return {"method": self.method, "num_speculative_tokens": self.k, "acceptance_rate": self.acceptance,
                "acceptance_source": self.acceptance_source, "tokens_per_step": self.tokens_per_step,
                "notes": list(self.notes)}
