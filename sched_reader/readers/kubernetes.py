"""Kubernetes manifests (multi-document) -> one engine per vLLM container / role.

Objects: Deployment, StatefulSet, DaemonSet, ReplicaSet, Job, CronJob, Pod, LeaderWorkerSet, KServe
InferenceService / ServingRuntime / ClusterServingRuntime, KubeAI Model, AIBrix StormService (roles), and
``kind: List``. Containers whose command/args start no vLLM server (sidecars, routers) are skipped and
noted. GPU count comes from ``nvidia.com/gpu`` / ``amd.com/gpu`` limits (else requests) per pod; GPU type
from ``nodeSelector`` / required node affinity on product labels; the vLLM release from the image tag.
Kubernetes ``$(VAR)`` references in command/args are expanded from the container's ``env`` as the kubelet
does; ``sh -c`` / ``bash -c`` scripts are parsed as shell.
"""

from __future__ import annotations

import re

from sched_reader.readers.argv import find_invocation, vllm_signature
from sched_reader.readers.cmdline import Context, engine_from_tokens, read_script
from sched_reader.readers.images import (
    GPU_PRODUCT_LABELS, GPU_RESOURCES, accelerator_family, gpu_quantity, is_vllm_image, vllm_version_from_image)
from sched_reader.readers.raw import Hint, Origin, RawEngine, Setting, Unresolved
from sched_reader.readers.shell import Tok, Var
from sched_reader.readers.yaml_tree import YamlDoc, YList, YMap
from sched_reader.errors import SchedReaderError
from sched_reader.readers import k8s_crds
from sched_reader.readers.images import downloaded_model

_WORKLOADS = {"Deployment", "StatefulSet", "DaemonSet", "ReplicaSet", "Job"}
_SHELLS = {"sh", "bash", "/bin/sh", "/bin/bash", "/usr/bin/bash", "/usr/bin/sh", "dash", "zsh", "/bin/zsh",
           "/usr/bin/env bash", "/bin/dash"}
_K8S_VAR = re.compile(r"\$\(([A-Za-z_][A-Za-z0-9_]*)\)")
_ROLE = re.compile(r"(?:^|[-_./])(prefill|decode)(?:$|[-_./])")
# KServe huggingface server options (kserve/python/huggingfaceserver __main__.py), not vLLM engine args.
KSERVE_SERVER_ARGS = {"--model_name", "--model_id", "--model_dir", "--backend", "--model_revision",
                      "--tokenizer_revision"}


def _m(value: object) -> YMap:
    """``value`` if it is a mapping, else an empty one (absent/null sections)."""
    if isinstance(value, YMap):
        return value
    empty = YMap()
    empty.line, empty.key_lines, empty.value_lines, empty.styles = None, {}, {}, {}
    return empty


def _l(value: object) -> YList:
    if isinstance(value, YList):
        return value
    empty = YList()
    empty.line, empty.item_lines, empty.styles = None, [], []
    return empty


def read_manifests(docs: list[YamlDoc], file: str) -> list[RawEngine]:
    """Every vLLM engine in a multi-document manifest file."""
    engines: list[RawEngine] = []
    for doc in docs:
        root = doc.root
        if not isinstance(root, YMap):
            continue
        objs = [o for o in _l(root.get("items")) if isinstance(o, YMap)] if root.get("kind") == "List" else [root]
        for obj in objs:
            engines.extend(_isolated(obj, file))
    return engines


def _isolated(obj: YMap, file: str) -> list[RawEngine]:
    """Engines of one object; an object sched-reader cannot read becomes a note on the others' engines
    (or one engine that says so), never an error that hides the rest of the file."""

    try:
        return read_object(obj, file)
    except (SchedReaderError, ValueError, TypeError, KeyError, IndexError, AttributeError) as exc:
        kind = str(obj.get("kind", "object"))
        name = str(_m(obj.get("metadata")).get("name", kind))
        e = RawEngine(name=name, file=file, line=obj.line)
        e.unresolved.append(Unresolved(text=f"{kind} {name}", reason=f"cannot read this object: {exc}",
                                       origin=Origin(file=file, line=obj.line, source="kubernetes", key="kind")))
        return [e]


def read_object(obj: YMap, file: str) -> list[RawEngine]:
    """Engines of one Kubernetes object (empty for Services, ConfigMaps, ...)."""
    kind = str(obj.get("kind", ""))
    meta = _m(obj.get("metadata"))
    name = str(meta.get("name", kind or "object"))
    spec = _m(obj.get("spec"))
    if kind in _WORKLOADS or kind == "CronJob":
        if kind == "CronJob":
            spec = _m(_m(spec.get("jobTemplate")).get("spec"))
        template = _m(spec.get("template"))
        engines = _pod(_m(template.get("spec")), file, name, _role(meta, template))
        _replicas(engines, spec, file, "spec.replicas")
        return engines
    if kind == "Pod":
        return _pod(spec, file, name, _role(meta, None))
    if kind == "LeaderWorkerSet":
        return _lws(spec, file, name, meta)
    if kind == "InferenceService":
        return _inference_service(spec, file, name)
    if kind in ("ServingRuntime", "ClusterServingRuntime"):
        return _pod(spec, file, name, None)
    if kind == "Model" and "kubeai" in str(obj.get("apiVersion", "")):
        return _kubeai(spec, file, name)
    if kind == "StormService":
        return _storm(spec, file, name)

    reader = k8s_crds.READERS.get(kind)
    if reader is not None:
        return reader(obj, spec, file, name)
    return []


def _role(meta: YMap, template: YMap | None) -> str | None:
    for labels in (_m(meta.get("labels")), _m(_m(template.get("metadata") if template else None).get("labels"))):
        for key in ("llm-d.ai/role", "role", "app.kubernetes.io/component"):
            value = str(labels.get(key, ""))
            if value in ("prefill", "decode", "both"):
                return value
    m = _ROLE.search(str(meta.get("name", "")))
    return m.group(1) if m else None


def _replicas(engines: list[RawEngine], spec: YMap, file: str, key: str) -> None:
    if "replicas" in spec:
        for e in engines:
            e.replicas = Hint(value=spec["replicas"], origin=Origin(file=file, line=spec.kline("replicas"),
                                                                   source="kubernetes", key=key))


# ----------------------------------------------------------------------------------------------- pods
def _pod(podspec: YMap, file: str, name: str, role: str | None) -> list[RawEngine]:
    containers = [c for c in _l(podspec.get("containers")) if isinstance(c, YMap)]
    engines: list[RawEngine] = []
    skipped: list[str] = []
    for c in containers:
        found = _container(c, file, name)
        if found:
            engines.extend(found)
        else:
            skipped.append(str(c.get("name", "?")))
    if len(engines) > 1:
        for e in engines:
            e.name = f"{name}/{e.name}"
    else:
        for e in engines:
            e.name = name
    gpu_type = gpu_type_hint(podspec, file)
    _models_from_init_downloads(engines, podspec, file)
    for e in engines:
        e.role = e.role or role
        if e.gpu_type is None:
            e.gpu_type = gpu_type
        for s in skipped:
            e.notes.append(f"container {s!r} in the same pod starts no vLLM server (skipped)")
    return engines


def _models_from_init_downloads(engines: list[RawEngine], podspec: YMap, file: str) -> None:
    """A model given as a local path that an init container fills with ``hf download ORG/NAME --local-dir
    PATH`` is analyzed as ORG/NAME (the download names what the path holds)."""

    scripts = []
    for c in _l(podspec.get("initContainers")):
        c = _m(c)
        for key in ("command", "args"):
            v = c.get(key)
            scripts.extend(str(x) for x in (v if isinstance(v, list) else [v]) if x)
    if not scripts:
        return
    for e in engines:
        if e.model is not None and str(e.model.value).startswith(("/", "./")):
            hf_id = downloaded_model(str(e.model.value), [" ".join(scripts)] + scripts)
            if hf_id is not None:
                e.notes.append(f"model path {e.model.value} is filled by an init container's download of {hf_id}; "
                               f"analyzed as {hf_id}")
                e.model = Setting(flag="--model", value=hf_id, origin=Origin(
                    file=file, line=e.model.origin.line, source="inferred", key=f"model path {e.model.value}"))


def container_env(c: YMap, file: str) -> dict[str, Var]:
    """A container's ``env`` list as shell variables (``valueFrom`` entries are known only at run time)."""
    out: dict[str, Var] = {}
    env = c.get("env")
    items = env.items() if isinstance(env, dict) else []
    if isinstance(env, YList):
        for i, item in enumerate(env):
            if isinstance(item, YMap) and "name" in item:
                line = env.iline(i)
                if "value" in item:
                    out[str(item["name"])] = Var(str(item["value"]), line, exported=True, source="env")
                else:
                    out[str(item["name"])] = Var(None, line, exported=True, source="env",
                                                 reason=f"{item['name']} comes from valueFrom (set at run time)")
    for k, v in items:  # KubeAI-style env mapping
        out[str(k)] = Var(None if v is None else str(v), env.kline(k), exported=True, source="env")
    return out


def _words(c: YMap, key: str, env: dict[str, Var]) -> list[Tok]:
    seq = c.get(key)
    if isinstance(seq, str):
        return [Tok(seq, c.vline(key))]
    out = []
    for i, item in enumerate(_l(seq)):
        text = "" if item is None else str(item)
        text = _K8S_VAR.sub(lambda m: env[m.group(1)].value if m.group(1) in env and env[m.group(1)].value is not None
                            else m.group(0), text)
        if "{{" in text:  # a Helm/Go template value: known only when the chart is rendered
            out.append(Tok(text, seq.iline(i), (text,), (f"{text}: a template value, known only when rendered",)))
            continue
        unset = _K8S_VAR.findall(text)
        if unset and text.startswith("$("):  # $(VAR) not in the container env: the kubelet leaves it as written
            out.append(Tok(text, seq.iline(i), (text,), (f"{text}: not set in the container's env",)))
            continue
        out.append(Tok(text, seq.iline(i)))
    return out


def _container(c: YMap, file: str, pod_name: str) -> list[RawEngine]:
    cname = str(c.get("name", pod_name))
    env = container_env(c, file)
    words = _words(c, "command", env) + _words(c, "args", env)
    image = str(c.get("image", "")) if c.get("image") is not None else ""
    engines: list[RawEngine] = []
    if len(words) >= 3 and words[0].text in _SHELLS and words[1].text in ("-c", "-lc", "-ec", "-xc", "-cx", "-ce"):
        script = words[3] if words[2].text == "--" and len(words) > 3 else words[2]
        engines = read_script(script.text, file, name=cname, base_line=script.line or 1, env=env)
    else:
        default = "image" if "command" not in c and is_vllm_image(image) else None
        inv = find_invocation(words)
        signal = None
        if inv is None and default is None and "command" not in c and words and words[0].text.startswith("-"):
            signal = vllm_signature([w.text for w in words])
            default = "image" if signal else None
        if inv is not None or default is not None:
            e = engine_from_tokens(words, Context(file=file), name=cname, line=c.line, env=env,
                                   invocation=inv, default_kind=default)
            engines = [e] if e is not None else []
            if signal and e is not None:
                e.detected_by = signal
                e.notes.append(f"image {image or '?'} is not named vllm; read as a vLLM server by its arguments: "
                               f"{signal}")
    for e in engines:
        e.line = e.line or c.line
        _container_hints(e, c, file, image, env)
    return engines


def _container_hints(e: RawEngine, c: YMap, file: str, image: str, env: dict[str, Var]) -> None:
    for k, v in env.items():
        if v.value is not None and k not in e.env:
            e.env[k] = Hint(value=v.value, origin=Origin(file=file, line=v.line, source="kubernetes", key=f"env.{k}"))
    if image and "{{" in image and e.vllm_version is None:
        e.notes.append(f"image {image}: the tag is a template value; the vLLM release is unknown until rendered")
    elif image and e.vllm_version is None:
        version = vllm_version_from_image(image)
        if version is not None:
            e.vllm_version = Hint(value=version, origin=Origin(file=file, line=c.kline("image"), source="kubernetes",
                                                               key=image))
        else:
            e.notes.append(f"image {image} does not name a vLLM release")
    gpus = gpu_count_hint(_m(c.get("resources")), file)
    if gpus is not None:
        e.gpu_count = gpus
        family = accelerator_family(gpus.origin.key or "")
        if family is not None and e.accelerator is None:
            e.accelerator = Hint(value=family, origin=gpus.origin)
    elif "resources" in c and e.gpu_count is None:
        e.gpu_count = Hint(value=0, origin=Origin(file=file, line=c.kline("resources"), source="kubernetes",
                                                 key="resources"))
        e.notes.append("no accelerator resource (nvidia.com/gpu, amd.com/gpu, google.com/tpu, habana.ai/gaudi) is "
                       "requested: the pod gets no GPU")


def gpu_count_hint(resources: YMap, file: str, key_prefix: str = "resources") -> Hint | None:
    """GPUs per pod from ``resources.limits`` (else ``requests``)."""
    for part in ("limits", "requests"):
        sect = _m(resources.get(part))
        for res in GPU_RESOURCES:
            if res in sect:
                return Hint(value=gpu_quantity(sect[res]), origin=Origin(
                    file=file, line=sect.kline(res), source="kubernetes", key=f"{key_prefix}.{part}.{res}"))
    return None


def gpu_type_hint(podspec: YMap, file: str) -> Hint | None:
    """GPU product from ``nodeSelector`` or required node affinity (``In`` expressions)."""
    sel = _m(podspec.get("nodeSelector"))
    for label in GPU_PRODUCT_LABELS:
        if label in sel:
            return Hint(value=sel[label], origin=Origin(file=file, line=sel.kline(label), source="kubernetes",
                                                        key=f"nodeSelector.{label}"))
    terms = _m(_m(_m(podspec.get("affinity")).get("nodeAffinity")).get(
        "requiredDuringSchedulingIgnoredDuringExecution")).get("nodeSelectorTerms")
    return gpu_type_from_terms(_l(terms), file)


def gpu_type_from_terms(terms: YList, file: str, key: str = "affinity") -> Hint | None:
    for term in terms:
        exprs = _l(_m(term).get("matchExpressions"))
        for i, ex in enumerate(exprs):
            ex = _m(ex)
            if ex.get("key") in GPU_PRODUCT_LABELS and ex.get("operator") == "In":
                values = list(_l(ex.get("values")))
                if values:
                    return Hint(value=values[0] if len(values) == 1 else values, origin=Origin(
                        file=file, line=exprs.iline(i), source="kubernetes", key=f"{key}: {ex['key']} In"))
    return None


# ------------------------------------------------------------------------------------------ CRD kinds
def _lws(spec: YMap, file: str, name: str, meta: YMap) -> list[RawEngine]:
    lwt = _m(spec.get("leaderWorkerTemplate"))
    size = lwt.get("size", 1)
    leader = _m(_m(lwt.get("leaderTemplate")).get("spec"))
    worker = _m(_m(lwt.get("workerTemplate")).get("spec"))
    engines = _pod(leader, file, name, _role(meta, None)) if leader else []
    if not engines:
        engines = _pod(worker, file, name, _role(meta, None))
    if not engines:
        return []
    worker_gpus = None
    for c in _l(worker.get("containers")):
        worker_gpus = worker_gpus or gpu_count_hint(_m(_m(c).get("resources")), file)
    for e in engines:
        per_pod = e.gpu_count.value if e.gpu_count is not None else (worker_gpus.value if worker_gpus else None)
        if isinstance(size, int) and isinstance(per_pod, int):
            e.gpu_count = Hint(value=per_pod * size, origin=Origin(
                file=file, line=lwt.kline("size"), source="kubernetes", key="leaderWorkerTemplate.size x nvidia.com/gpu"))
            e.notes.append(f"LeaderWorkerSet: {size} pods x {per_pod} GPUs = {per_pod * size} GPUs for one engine")
    _replicas(engines, spec, file, "spec.replicas")
    return engines


def _storm(spec: YMap, file: str, name: str) -> list[RawEngine]:
    """AIBrix StormService: one engine per role (``spec.template.spec.roles[]``)."""
    roles = _l(_m(_m(spec.get("template")).get("spec")).get("roles"))
    engines: list[RawEngine] = []
    for role in roles:
        role = _m(role)
        rname = str(role.get("name", "role"))
        found = _pod(_m(_m(role.get("template")).get("spec")), file, f"{name}/{rname}", rname)
        for e in found:
            e.role = rname if rname in ("prefill", "decode") else e.role or rname
        _replicas(found, role, file, f"roles[{rname}].replicas")
        engines.extend(found)
    return engines


def _kubeai(spec: YMap, file: str, name: str) -> list[RawEngine]:
    """KubeAI ``Model``: ``spec.url`` (``hf://org/model``), ``spec.args``, ``resourceProfile: name:count``."""
    engine_kind = str(spec.get("engine", ""))
    if engine_kind.upper() != "VLLM":
        return []
    env = container_env(spec, file)
    words = _words(spec, "args", env)
    e = engine_from_tokens(words, Context(file=file), name=name, line=spec.line, env=env, default_kind="bare")
    assert e is not None
    e.notes = [n for n in e.notes if not n.startswith("started by")] + ["KubeAI Model (engine: VLLM)"]
    url = spec.get("url")
    if url is not None and e.model is None:
        e.model = Setting(flag="--model", value=_strip_scheme(str(url)), origin=Origin(
            file=file, line=spec.kline("url"), source="kubernetes", key="spec.url"))
    profile = spec.get("resourceProfile")
    if isinstance(profile, str):
        pname, _, count = profile.partition(":")
        where = Origin(file=file, line=spec.kline("resourceProfile"), source="kubernetes", key="spec.resourceProfile")
        e.gpu_type = Hint(value=pname, origin=where)
        if count.strip().isdigit():
            e.gpu_count = Hint(value=int(count), origin=where)
    for key in ("minReplicas", "maxReplicas", "replicas"):
        if key in spec:
            e.notes.append(f"KubeAI {key}: {spec[key]}")
    return [e]


def _strip_scheme(url: str) -> str:
    """``hf://org/model`` -> ``org/model``; other schemes (``pvc://``, ``s3://``) are kept as written."""
    return url[len("hf://"):] if url.startswith("hf://") else url


def _inference_service(spec: YMap, file: str, name: str) -> list[RawEngine]:
    pred = _m(spec.get("predictor"))
    engines = _pod(pred, file, name, None) if "containers" in pred else []
    model = _m(pred.get("model"))
    if model:
        fmt = str(_m(model.get("modelFormat")).get("name", ""))
        runtime = str(model.get("runtime", ""))
        if fmt.lower() in ("huggingface", "vllm") or "vllm" in runtime or "huggingface" in runtime:
            engines.append(_kserve_model(model, pred, file, name, fmt, runtime))
    return engines


def _kserve_model(model: YMap, pred: YMap, file: str, name: str, fmt: str, runtime: str) -> RawEngine:
    env = container_env(model, file)
    words = _words(model, "command", env) + _words(model, "args", env)
    kept, server_args = [], []
    for t in words:
        (server_args if t.text.split("=", 1)[0] in KSERVE_SERVER_ARGS else kept).append(t)
    e = engine_from_tokens(kept, Context(file=file), name=name, line=model.line, env=env, default_kind="bare")
    assert e is not None
    e.notes = [n for n in e.notes if not n.startswith("started by")]
    e.notes.insert(0, f"KServe InferenceService, model format {fmt or '?'}" + (f", runtime {runtime}" if runtime else "")
                   + " (the Hugging Face runtime serves with vLLM)")
    for t in server_args:
        flag, _, value = t.text.partition("=")
        e.notes.append(f"line {t.line}: {t.text} is a KServe server argument, not a vLLM flag")
        if flag == "--model_id" and value and e.model is None:
            e.model = Setting(flag="--model", value=value, origin=Origin(file=file, line=t.line, source="kubernetes",
                                                                        key="--model_id"))
    uri = model.get("storageUri")
    if uri is not None and e.model is None:
        e.model = Setting(flag="--model", value=_strip_scheme(str(uri)), origin=Origin(
            file=file, line=model.kline("storageUri"), source="kubernetes", key="storageUri"))
    _container_hints(e, model, file, str(model.get("image", "") or ""), env)
    e.gpu_type = gpu_type_hint(pred, file)
    ws = _m(pred.get("workerSpec"))
    if ws:
        sizes = {}
        for key, flag in (("tensorParallelSize", "--tensor-parallel-size"),
                          ("pipelineParallelSize", "--pipeline-parallel-size")):
            if key in ws:
                sizes[key] = ws[key]
                e.settings.append(Setting(flag=flag, value=str(ws[key]), origin=Origin(
                    file=file, line=ws.kline(key), source="kubernetes", key=f"workerSpec.{key}")))
        tp, pp = sizes.get("tensorParallelSize", 1), sizes.get("pipelineParallelSize", 1)
        if (e.gpu_count is None or e.gpu_count.value == 0) and isinstance(tp, int) and isinstance(pp, int):
            e.gpu_count = Hint(value=tp * pp, origin=Origin(file=file, line=ws.line, source="kubernetes",
                                                            key="workerSpec (tensorParallelSize x pipelineParallelSize)"))
            e.notes = [n for n in e.notes if not n.startswith("no accelerator resource")]
            e.notes.append(f"KServe multi-node: total GPUs = tensorParallelSize x pipelineParallelSize = {tp * pp} "
                           "(kserve.github.io multi-node guide)")
    return e
