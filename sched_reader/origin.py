"""Where a value came from (file, 1-based line, source kind, key as written): the ground layer.

Readers create origins, every later layer carries them into specs and findings, so the type lives
below all of them.
"""

from typing import Literal

from pydantic import ConfigDict

from sched_reader.data_model import DataModel

SourceKind = Literal[
    "config-file",      # vLLM --config YAML
    "command-line",     # vllm serve / api_server argv (shell, k8s args, compose command, after `--`)
    "helm-field",       # a typed Helm value such as vllmConfig.maxModelLen
    "helm-extra-args",  # Helm extraArgs list
    "kubernetes",       # resources / nodeSelector / image in a manifest
    "compose",          # docker compose deploy/resources, image
    "sched-reader",     # sched-reader's own file (hardware / vllm_version / workload)
    "cli-option",       # sched-reader's own --gpu / --vllm options
    "chart-default",    # a default that a Helm chart renders when the value is unset
    "inferred",         # guessed by sched-reader (says so in the output)
]


class Origin(DataModel):
    """Where a value came from. ``line`` is 1-based in ``file``; None when unknown."""

    model_config = ConfigDict(frozen=True)

    file: str | None = None
    line: int | None = None
    source: SourceKind = "command-line"
    key: str | None = None  # the key or flag exactly as written

    def where(self) -> str:
        if self.file is None:
            return self.source
        return f"{self.file}:{self.line}" if self.line else self.file
