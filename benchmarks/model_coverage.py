"""How many model ids people serve with vLLM the catalog resolves: exactly, by a guess, or not at all.

Run: python benchmarks/model_coverage.py [--list FILE] [--misses]. The default list,
``benchmarks/data/model_coverage_ids.txt``, holds (1) every model id in a ``vllm serve`` / ``--model`` /
``model_id:`` line of the vLLM recipes repository (text-generation models; the recipes' benchmark tables were not
read) and (2) commonly served Hugging Face ids: vLLM supported-models examples, quantized derivatives
(RedHatAI, nvidia, amd, hugging-quants, unsloth), fine-tunes, and the ROCm MI300X table names. A row whose model
cannot be resolved is a miss for `diagnose`; a guess is a look-alike architecture named as an assumption.
Prints the unresolved and guessed shares; ``--misses`` lists the ids behind them.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from sched_reader.errors import UnknownModelError  # noqa: E402
from sched_reader.models.model_catalog import resolve_model  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--list", default=str(ROOT / "benchmarks" / "data" / "model_coverage_ids.txt"))
    ap.add_argument("--misses", action="store_true", help="list the unresolved and guessed ids")
    args = ap.parse_args()
    ids = [ln.strip() for ln in Path(args.list).read_text().splitlines() if ln.strip() and not ln.startswith("#")]
    missed, guessed = [], []
    for name in ids:
        try:
            r = resolve_model(name)
        except UnknownModelError:
            missed.append(name)
            continue
        if r.guessed:
            guessed.append(f"{name} -> {r.arch.id}")
    n = len(ids)
    print(f"{n} model ids: unresolved {len(missed)} ({len(missed) / n:.1%}), guessed {len(guessed)} "
          f"({len(guessed) / n:.1%}), exact {n - len(missed) - len(guessed)}")
    if args.misses:
        print("unresolved:", *missed, sep="\n  ")
        print("guessed:", *guessed, sep="\n  ")


if __name__ == "__main__":
    main()
