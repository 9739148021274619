"""`vllm bench throughput` (and vLLM's benchmarks/benchmark_throughput.py) as an engine plus a workload.

The offline throughput benchmark starts vLLM's ``LLM`` class in-process with every engine flag it is
given and feeds it ``--num-prompts`` prompts at once; there is no API server. Its own flags (vllm 0.11.0
vllm/benchmarks/throughput.py ``add_cli_args`` and vllm/benchmarks/datasets.py ``add_dataset_parser``)
describe the workload, not the engine, so they are taken out of the engine's settings here and become
sched-reader's ``workload:`` section with the offline entry point; the engine is marked with vLLM's
``LLM_CLASS`` usage context, whose scheduler defaults differ from `vllm serve`'s (compat/defaults.py).

Semantics kept from vLLM: without ``--dataset-path`` the dataset is random and ``--input-len`` is required
(``validate_args``: "When dataset path is not set, it will default to random dataset"); a ShareGPT path
selects the ShareGPT dataset; ``--output-len`` also overrides the ShareGPT output lengths.
"""

from __future__ import annotations

from typing import Any

from sched_reader.readers.raw import RawEngine, Setting

# bench flag -> sched-reader workload key (tokens, counts; see models/workload.py)
_WORKLOAD_FLAGS = {
    "--input-len": "random_input_len",
    "--random-input-len": "random_input_len",
    "--output-len": "random_output_len",
    "--random-output-len": "random_output_len",
    "--num-prompts": "num_prompts",
    "--random-range-ratio": "random_range_ratio",
}
# bench-only flags that do not change what the engine does, or that sched-reader does not model (noted)
_IGNORED_FLAGS = {
    "--backend", "--dataset", "--dataset-path", "--dataset-name", "--n", "--hf-max-batch-size",
    "--output-json", "--async-engine", "--disable-frontend-multiprocessing", "--disable-detokenize",
    "--lora-path", "--prefix-len", "--random-prefix-len", "--hf-subset", "--hf-split", "--hf-name",
    "--profile", "--seed", "--sharegpt-output-len", "--random-batch-size", "--no-oversample",
    "--prefix-repetition-prefix-len", "--prefix-repetition-suffix-len", "--prefix-repetition-num-prefixes",
    "--prefix-repetition-output-len",
}
_NOT_MODELLED = {"--n": "1", "--backend": "vllm", "--prefix-len": "0", "--random-prefix-len": "0"}


def split_bench_throughput(engine: RawEngine) -> RawEngine:
    """Move the benchmark's own flags of ``engine`` into its workload section (in place; returns it)."""
    keep: list[Setting] = []
    workload: dict[str, Any] = {"endpoint": "offline"}
    dataset_name = dataset_path = None
    for s in engine.settings:
        flag = s.flag.replace("_", "-")
        if flag in _WORKLOAD_FLAGS:
            workload[_WORKLOAD_FLAGS[flag]] = _number(s.value)
            if flag == "--output-len":
                workload["sharegpt_output_len"] = _number(s.value)
        elif flag in _IGNORED_FLAGS:
            if flag == "--dataset-name":
                dataset_name = str(s.value)
            elif flag in ("--dataset-path", "--dataset"):
                dataset_path = str(s.value)
            default = _NOT_MODELLED.get(flag)
            if default is not None and s.value is not None and str(s.value) != default:
                engine.notes.append(f"{s.flag} {s.value} is not modelled: sched-reader predicts {flag} {default}")
        else:
            keep.append(s)
    if dataset_path is None:
        workload["dataset_name"] = "random"  # vLLM: no dataset path -> random dataset
    elif "sharegpt" in (dataset_name or dataset_path or "").lower():
        workload["dataset_name"] = "sharegpt"
    else:
        engine.notes.append(f"dataset {dataset_name or dataset_path!r} is replayed as random lengths "
                            "(--input-len / --output-len)")
        workload["dataset_name"] = "random"
    engine.settings = keep
    engine.workload = {**workload, **(engine.workload or {})}
    engine.usage_context = "LLM_CLASS"
    engine.notes.append("offline run (vllm bench throughput): the LLM class, no API server; its bench flags "
                        "are the workload")
    return engine


def _number(value: Any) -> Any:
    """A bench flag's value as int or float when it reads as one (else as written, for validation later)."""
    try:
        f = float(value)
    except (TypeError, ValueError):
        return value
    return int(f) if f.is_integer() else f
