"""vLLM 0.6.5-0.9.1 and 0.11.0 re-parse the chat template on every /v1/chat/completions request

A chat request of a Jinja-template model renders a template compiled once and cached. Two release windows
also parse the whole template again per request, on the API server's single event loop (release wheels,
vllm/entrypoints/chat_utils.py; ``compat/chat_template_work.py``): 0.6.5-0.9.1 detect its content format
uncached (cached from 0.9.2, vLLM PR #20065); exactly 0.11.0 parses it and runs
``jinja2.meta.find_undeclared_variables`` on it (cached from 0.11.1). ``models/cost/frontend.py`` prices it:
4.8 ms per request in the first window (vLLM PR #18566's 0.9.0 chat burst), 2.1x that on 0.11.0
(``tools/measure_chat_template_cost.py``), ~1.5 ms where only rendered. N chat requests sent at once reach
the engine after N times that. /v1/completions and gpt-oss (Rust harmony encoder) do not pay it.
"""

from __future__ import annotations

from sched_reader.compat.chat_template_work import cached_from, template_release
from sched_reader.findings import Finding
from sched_reader.models.cost.frontend import API_INTAKE_S, endpoint_for, intake_base_s
from sched_reader.models.engine_spec import EngineSpec

ID = "SR120"
NAME = "chat-template-reparsed-per-request"
SEVERITY = "info"
FIX = ("use a release that caches the parse (0.9.2+ after 0.6.5-0.9.1, 0.11.1+ after 0.11.0), or send "
       "/v1/completions requests")
TAGS = ("api-server", "release", "performance")


def check(spec: EngineSpec) -> list[Finding]:
    arch = spec.arch
    if arch is None:
        return []
    # the API-server model's name for a chat request on this release and model: "chat-template-<work>" only
    # where the release re-parses a Jinja template (gpt-oss's harmony encoder and render-only releases differ)
    endpoint = endpoint_for("chat", getattr(arch, "model_type", None), template_release(spec))
    if not endpoint.startswith("chat-template-"):
        return []
    fixed = cached_from(endpoint[len("chat-template-"):])
    per_request_ms = 1e3 * intake_base_s(endpoint)
    render_ms = 1e3 * API_INTAKE_S["chat"]
    origin = spec.vllm_version_origin   # where the release was read (an image tag, --vllm), when known
    return [Finding(
        rule=ID, severity=SEVERITY,
        message=(f"vLLM {spec.vllm_version} parses the Jinja chat template again on every /v1/chat/completions "
                 f"request (fixed in {fixed}): about {per_request_ms:.1f} ms of the API server's event "
                 f"loop per chat request instead of {render_ms:.1f} ms, so 1,000 chat requests sent at once reach the "
                 f"engine only after ~{per_request_ms:.0f} s"),
        file=(origin.file if origin is not None and origin.file else spec.file),
        line=(origin.line if origin is not None and origin.file else spec.line),
        key=(origin.key if origin is not None and origin.key else "vllm version"),
        fix=f"use vLLM {fixed} or later (the parse is cached there), or send /v1/completions requests",
    )]
