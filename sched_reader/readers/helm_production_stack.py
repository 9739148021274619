"""vLLM production-stack Helm values (``servingEngineSpec.modelSpec[]``) -> one engine per modelSpec.

The chart renders typed values into a ``vllm serve <modelURL>`` command line in a fixed order (see
``data/chart_rendering.yaml`` for the rules and the template files they were read from); settings are
recorded in that order so later ones win, as with argparse. ``extraArgs`` come after the typed flags, so
an ``extraArgs`` flag overrides the typed field. Values the chart renders on its own (``--no-enable-
prefix-caching`` when ``enablePrefixCaching`` is unset, Ray's executor backend) have source
``chart-default``.
"""

from __future__ import annotations

from sched_reader.readers.argv import parse_args
from sched_reader.readers.chart_facts import chart_facts, go_string
from sched_reader.readers.images import downloaded_model, release_from_image
from sched_reader.readers.kubernetes import _l, _m, gpu_type_from_terms
from sched_reader.readers.raw import Hint, Origin, RawEngine, Setting
from sched_reader.readers.shell import Tok
from sched_reader.readers.yaml_tree import YMap


def read_production_stack(root: YMap, file: str) -> list[RawEngine]:
    """Every enabled modelSpec of ``servingEngineSpec``."""
    ses = _m(root.get("servingEngineSpec"))
    engines: list[RawEngine] = []
    if ses.get("enableEngine") is False:
        return engines
    specs = _l(ses.get("modelSpec"))
    for i, spec in enumerate(specs):
        if not isinstance(spec, YMap):
            continue
        if spec.get("enabled") is False:
            continue
        engines.append(_model_spec(spec, specs.iline(i), file))
    return engines


def _origin(file: str, m: YMap, key: str, path: str, source: str = "helm-field") -> Origin:
    return Origin(file=file, line=m.kline(key), source=source, key=path)


def _model_spec(spec: YMap, line: int | None, file: str) -> RawEngine:
    name = str(spec.get("name", f"modelSpec@{line}"))
    ray = _m(spec.get("raySpec"))
    use_ray = "raySpec" in spec and bool(ray.get("enabled"))
    facts = chart_facts()["production_stack"]["ray" if use_ray else "deployment"]
    e = RawEngine(name=name, file=file, line=line)
    e.notes.append(f"production-stack Helm chart, {'RayCluster' if use_ray else 'Deployment'} template "
                   f"({facts['source']})")
    if "raySpec" in spec and not use_ray:
        e.notes.append("raySpec is present but not enabled: recent chart versions then render neither the "
                       "Deployment nor the RayCluster for this modelSpec")
    if "modelURL" in spec:
        e.model = Setting(flag="--model", value=str(spec["modelURL"]),
                          origin=_origin(file, spec, "modelURL", "modelURL"))
        init = _m(spec.get("initContainer"))
        scripts = [str(x) for key in ("command", "args") for x in (_l(init.get(key)) or [init.get(key)]) if x]
        hf_id = downloaded_model(str(spec["modelURL"]), scripts) if scripts else None
        if hf_id is not None:
            e.model = Setting(flag="--model", value=hf_id, origin=Origin(
                file=file, line=spec.kline("modelURL"), source="inferred", key=f"modelURL {spec['modelURL']}"))
            e.notes.append(f"modelURL {spec['modelURL']} is filled by the initContainer's download of {hf_id}; "
                           f"analyzed as {hf_id}")
    for fixed in facts.get("fixed_flags", []):
        e.settings.append(Setting(flag=fixed["flag"], value=fixed["value"], origin=Origin(
            file=file, line=spec.kline("raySpec"), source="chart-default", key="raySpec (chart renders it)")))
    _render(e, spec, facts["model_spec_flags"], file, "")
    vc = spec.get("vllmConfig")
    if isinstance(vc, YMap) and vc:
        _render(e, vc, facts["vllm_config_flags"], file, "vllmConfig.", section_line=spec.kline("vllmConfig"))
        known = {r["key"] for r in facts["vllm_config_flags"]} | set(facts.get("other_keys", {}))
        for key in vc:
            if key not in known:
                e.notes.append(f"{file}:{vc.kline(key)}: vllmConfig.{key} is not rendered by this chart template "
                               "(no effect on vLLM)")
        _env_from_vllm_config(e, vc, spec, file, use_ray)
    _version(e, spec, file)
    _gpus(e, spec, ray, use_ray, file)
    _env(e, spec, file)
    if "replicaCount" in spec and not use_ray:
        e.replicas = Hint(value=spec["replicaCount"], origin=_origin(file, spec, "replicaCount", "replicaCount"))
    return e


def _render(e: RawEngine, m: YMap, rules: list[dict], file: str, prefix: str, section_line: int | None = None) -> None:
    for rule in rules:
        key, kind = rule["key"], rule["kind"]
        present = key in m
        value = m.get(key)
        where = _origin(file, m, key, prefix + key)
        if kind == "bare_if_true" and value:
            e.settings.append(Setting(flag=rule["flag"], value=None, origin=where))
        elif kind == "value_if_set" and value:
            e.settings.append(Setting(flag=rule["flag"], value=go_string(value), origin=where))
        elif kind == "value_if_present" and present:
            e.settings.append(Setting(flag=rule["flag"], value=go_string(value), origin=where))
        elif kind == "bool_if_present" and present:
            e.settings.append(Setting(flag=rule["flag"] if value else rule["negated"], value=None, origin=where))
        elif kind == "bool_always":
            if value:
                e.settings.append(Setting(flag=rule["flag"], value=None, origin=where))
            else:
                origin = where if present else Origin(file=file, line=section_line, source="chart-default",
                                                      key=f"{prefix}{key} (unset)")
                e.settings.append(Setting(flag=rule["negated"], value=None, origin=origin))
                if not present:
                    e.notes.append(f"{prefix}{key} is unset: the chart renders {rule['negated']} "
                                   "(prefix caching off, unlike vLLM's own default)")
        elif kind == "extra_args" and present:
            _extra_args(e, m, key, file, prefix)


def _extra_args(e: RawEngine, m: YMap, key: str, file: str, prefix: str) -> None:
    items = m.get(key)
    if isinstance(items, str):
        e.notes.append(f"{file}:{m.kline(key)}: {prefix}{key} is a string; the chart expects a list of arguments")
        items_toks = [Tok(w, m.vline(key)) for w in items.split()]
    else:
        seq = _l(items)
        items_toks = [Tok(go_string(v), seq.iline(i)) for i, v in enumerate(seq) if v is not None]
    parsed = parse_args(items_toks, kind="bare", file=file, source="helm-extra-args")
    e.settings.extend(parsed.settings)
    e.unresolved.extend(parsed.unresolved)
    e.notes.extend(parsed.notes)
    if parsed.model is not None:
        e.notes.append(f"{prefix}{key} sets --model {parsed.model.value}, but the chart already passes modelURL "
                       "as the positional model, which vllm serve uses")


def _env_from_vllm_config(e: RawEngine, vc: YMap, spec: YMap, file: str, use_ray: bool) -> None:
    if use_ray:
        value = go_string(vc["v1"]) if "v1" in vc else "0"
        where = _origin(file, vc, "v1", "vllmConfig.v1") if "v1" in vc else Origin(
            file=file, line=spec.kline("vllmConfig"), source="chart-default", key="vllmConfig.v1 (unset)")
        e.env["VLLM_USE_V1"] = Hint(value=value, origin=where)
    elif "v0" in vc and go_string(vc["v0"]) == "1":
        e.env["VLLM_USE_V1"] = Hint(value="0", origin=_origin(file, vc, "v0", "vllmConfig.v0", "chart-default"))


def _version(e: RawEngine, spec: YMap, file: str) -> None:
    repo, tag = spec.get("repository"), spec.get("tag")
    if repo is None:
        return
    image = f"{repo}:{tag}" if tag is not None else str(repo)
    release_from_image(e, image, Origin(file=file, line=spec.kline("tag" if tag is not None else "repository"),
                                        source="helm-field", key=image))


def _gpus(e: RawEngine, spec: YMap, ray: YMap, use_ray: bool, file: str) -> None:
    req = spec.get("requestGPU")
    if use_ray:
        head = _m(ray.get("headNode")).get("requestGPU", 0) or 0
        workers = spec.get("replicaCount", 1)
        if isinstance(req, int) and isinstance(head, int) and isinstance(workers, int):
            total = head + workers * req
            e.gpu_count = Hint(value=total, origin=Origin(
                file=file, line=spec.kline("requestGPU"), source="helm-field",
                key="raySpec.headNode.requestGPU + replicaCount x requestGPU"))
            e.notes.append(f"Ray cluster: head {head} GPU(s) + {workers} worker pod(s) x {req} GPU(s) = {total} GPUs "
                           "for one engine")
    elif req is not None:
        e.gpu_count = Hint(value=req, origin=_origin(file, spec, "requestGPU", "requestGPU"))
    gtype = spec.get("requestGPUType")
    if gtype is not None:
        e.notes.append(f"GPU resource type {gtype} (requestGPUType)")
    e.gpu_type = gpu_type_from_terms(_l(spec.get("nodeSelectorTerms")), file, key="nodeSelectorTerms")


def _env(e: RawEngine, spec: YMap, file: str) -> None:
    env = _l(spec.get("env"))
    for i, item in enumerate(env):
        item = _m(item)
        if "name" in item and "value" in item:
            e.env[str(item["name"])] = Hint(value=go_string(item["value"]), origin=Origin(
                file=file, line=env.iline(i), source="helm-field", key=f"env.{item['name']}"))
