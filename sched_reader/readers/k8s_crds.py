"""Kubernetes custom resources that run vLLM without a plain Deployment: KubeRay, KServe's
``LLMInferenceService``, production-stack's ``VLLMRuntime``.

* KubeRay ``RayCluster`` / ``RayService`` / ``RayJob`` and AIBrix ``RayClusterFleet`` (its
  ``spec.template.spec`` is a RayCluster spec): a container command such as ``ray start --head ...;
  vllm serve ...`` is read as shell; a vLLM engine that spans the Ray cluster gets the GPUs of the head
  plus every worker group (``replicas`` x ``numOfHosts`` x accelerators per pod). A ``RayService``'s
  ``serveConfigV2`` is read too: Ray Serve LLM ``llm_configs`` (``model_loading_config``,
  ``engine_kwargs``, ``accelerator_type``, ``deployment_config`` autoscaling) and custom applications that
  take the model and vLLM settings from ``runtime_env.env_vars`` (``MODEL_ID``, ``MAX_MODEL_LEN``,
  ``TENSOR_PARALLELISM``, ...). Sources: ray-project/kuberay ``ray-operator/config/samples``;
  https://docs.ray.io/en/latest/serve/llm/ (``LLMConfig``).
* KServe ``LLMInferenceService`` (serving.kserve.io v1alpha1/v1alpha2): ``spec.model.uri`` / ``name``,
  ``spec.parallelism`` (tensor, pipeline, data, dataLocal, expert), the ``template`` pod (container
  ``main``: args, ``VLLM_ADDITIONAL_ARGS``, resources), ``worker`` pods for multi-node, and a ``prefill``
  section for prefill/decode disaggregation. Source: kserve/kserve ``docs/samples/llmisvc``.
* production-stack ``VLLMRuntime`` (production-stack.vllm.ai): rendered as its operator does
  (``operator/internal/controller/vllmruntime_controller.go``: modelURL positional, then
  ``--enable-lora``, ``--(no-)enable-chunked-prefill``, ``--(no-)enable-prefix-caching``,
  ``--max-model-len``, ``--dtype``, ``--tensor-parallel-size``, ``--max-num-seqs``,
  ``--gpu_memory_utilization``, ``--max_loras``, then ``extraArgs``).
"""

from __future__ import annotations

from typing import Callable

from sched_reader.readers.argv import parse_args
from sched_reader.readers.images import accelerator_family, gpu_quantity, release_from_image, vllm_version_from_image
from sched_reader.readers.raw import Hint, Origin, RawEngine, Setting, Unresolved
from sched_reader.readers.shell import Tok, parse_script
from sched_reader.readers.yaml_tree import YList, YMap, load_documents
from sched_reader.readers import kubernetes
from sched_reader.readers.cmdline import read_script

# ------------------------------------------------------------------------------------------------ Ray


def _k():

    return kubernetes


def _pod_accelerators(podspec: YMap, file: str) -> Hint | None:
    """Accelerators one pod requests (first container that requests any)."""
    k = _k()
    for c in k._l(podspec.get("containers")):
        hint = k.gpu_count_hint(k._m(k._m(c).get("resources")), file)
        if hint is not None:
            return hint
    return None


def _ray_cluster_gpus(cluster: YMap, file: str) -> tuple[int | None, Hint | None, list[str], Hint | None]:
    """(total accelerators in the cluster, a hint naming the resource, per-group notes, node GPU type)."""
    k = _k()
    head = k._m(k._m(k._m(cluster.get("headGroupSpec")).get("template")).get("spec"))
    total = 0
    unknown = False
    parts: list[str] = []
    first: Hint | None = None
    gpu_type = k.gpu_type_hint(head, file)
    head_gpus = _pod_accelerators(head, file)
    if head_gpus is not None:
        first = head_gpus
        if isinstance(head_gpus.value, int):
            total += head_gpus.value
            parts.append(f"head {head_gpus.value}")
        else:
            unknown = True
    for group in k._l(cluster.get("workerGroupSpecs")):
        group = k._m(group)
        podspec = k._m(k._m(group.get("template")).get("spec"))
        per_pod = _pod_accelerators(podspec, file)
        gpu_type = gpu_type or k.gpu_type_hint(podspec, file)
        if per_pod is None:
            continue
        first = first or per_pod
        replicas = group.get("replicas", group.get("minReplicas", 1))
        hosts = group.get("numOfHosts", 1)
        if isinstance(per_pod.value, int) and isinstance(replicas, int) and isinstance(hosts, int):
            total += per_pod.value * replicas * hosts
            parts.append(f"{group.get('groupName', 'workers')} {replicas} x {hosts} host(s) x {per_pod.value}")
        else:
            unknown = True
    return (None if unknown or first is None else total), first, parts, gpu_type


def _ray_cluster(cluster: YMap, file: str, name: str, serve_config: object = None,
                 serve_line: int | None = None) -> list[RawEngine]:
    """Engines of one Ray cluster spec: vLLM started by a container command, or Ray Serve apps."""
    k = _k()
    head = k._m(k._m(k._m(cluster.get("headGroupSpec")).get("template")).get("spec"))
    engines = k._pod(head, file, name, None) if head else []
    for group in k._l(cluster.get("workerGroupSpecs")):
        podspec = k._m(k._m(k._m(group).get("template")).get("spec"))
        for e in k._pod(podspec, file, f"{name}/{k._m(group).get('groupName', 'workers')}", None):
            if e.model is not None or e.settings:
                engines.append(e)
    total, first, parts, gpu_type = _ray_cluster_gpus(cluster, file)
    image = _first_image(head) or next((_first_image(k._m(k._m(k._m(g).get("template")).get("spec")))
                                        for g in k._l(cluster.get("workerGroupSpecs"))), None)
    if serve_config is not None:
        engines.extend(_serve_apps(serve_config, serve_line, file, name, image))
    for e in engines:
        if total is not None and first is not None and parts and (len(parts) > 1 or e.gpu_count is None):
            e.gpu_count = Hint(value=total, origin=Origin(file=file, line=first.origin.line, source="kubernetes",
                                                          key=f"Ray cluster {first.origin.key}"))
            e.notes.append(f"Ray cluster accelerators: {' + '.join(parts)} = {total} for one engine "
                           "(the engine's workers span the cluster)")
        if first is not None:
            family = accelerator_family(first.origin.key or "")
            if family is not None and e.accelerator is None:
                e.accelerator = Hint(value=family, origin=first.origin)
        if e.gpu_type is None and gpu_type is not None:
            e.gpu_type = gpu_type
        if e.vllm_version is None and image and not any("does not name a vLLM release" in n for n in e.notes):
            e.notes.append(f"image {image} does not name a vLLM release")
    return engines


def _first_image(podspec: YMap) -> str | None:
    k = _k()
    for c in k._l(podspec.get("containers")):
        image = k._m(c).get("image")
        if image:
            return str(image)
    return None


def _serve_apps(config: object, line: int | None, file: str, name: str, image: str | None) -> list[RawEngine]:
    """Ray Serve applications of a RayService ``serveConfigV2`` (a YAML string) that run vLLM."""
    if isinstance(config, str):
        docs = load_documents(config, file) if config.strip() else []
        root = docs[0].root if docs else None
        offset = (line or 1) - 1
    else:
        root, offset = config, 0
    if not isinstance(root, YMap):
        return []
    engines: list[RawEngine] = []
    k = _k()
    for app in k._l(root.get("applications")):
        app = k._m(app)
        aname = f"{name}/{app.get('name', 'app')}"
        args = k._m(app.get("args"))
        configs = args.get("llm_configs")
        if isinstance(configs, YList):
            for i, cfg in enumerate(configs):
                if isinstance(cfg, YMap):
                    engines.append(_llm_config(cfg, file, f"{aname}#{i + 1}" if len(configs) > 1 else aname,
                                               offset, image))
                else:
                    e = RawEngine(name=aname, file=file, line=_shift(configs.iline(i), offset))
                    e.unresolved.append(Unresolved(text=str(cfg), reason="the LLM config is a separate file",
                                                   origin=Origin(file=file, line=e.line, key="llm_configs")))
                    engines.append(e)
            continue
        env = k._m(k._m(app.get("runtime_env")).get("env_vars"))
        if env and (_ENV_MODEL.intersection(env) or "vllm" in str(app.get("import_path", "")).lower()):
            engines.append(_env_app(app, env, file, aname, offset))
    return engines


def _shift(line: int | None, offset: int) -> int | None:
    return None if line is None else line + offset


def _llm_config(cfg: YMap, file: str, name: str, offset: int, image: str | None) -> RawEngine:
    """One Ray Serve LLM ``LLMConfig``: model_loading_config + engine_kwargs (vLLM engine arguments)."""
    k = _k()
    e = RawEngine(name=name, file=file, line=_shift(cfg.line, offset))
    e.detected_by = "Ray Serve LLM llm_configs (vLLM engine_kwargs)"
    e.notes.append("Ray Serve LLM application: engine_kwargs are vLLM engine arguments")
    mlc = k._m(cfg.get("model_loading_config"))
    source = mlc.get("model_source", mlc.get("model_id"))
    key = "model_source" if "model_source" in mlc else "model_id"
    if source is not None:
        e.model = Setting(flag="--model", value=str(source), origin=Origin(
            file=file, line=_shift(mlc.kline(key), offset), source="kubernetes", key=f"model_loading_config.{key}"))
    kwargs = k._m(cfg.get("engine_kwargs"))
    for key2, value in kwargs.items():
        e.settings.append(Setting(flag="--" + str(key2), value=_plain(value), origin=Origin(
            file=file, line=_shift(kwargs.kline(key2), offset), source="config-file", key=f"engine_kwargs.{key2}")))
    if "accelerator_type" in cfg:
        e.gpu_type = Hint(value=str(cfg["accelerator_type"]), origin=Origin(
            file=file, line=_shift(cfg.kline("accelerator_type"), offset), source="kubernetes", key="accelerator_type"))
    auto = k._m(k._m(cfg.get("deployment_config")).get("autoscaling_config"))
    for rkey in ("min_replicas", "max_replicas"):
        if rkey in auto:
            e.notes.append(f"Ray Serve autoscaling {rkey}: {auto[rkey]}")
    if "min_replicas" in auto:
        e.replicas = Hint(value=auto["min_replicas"], origin=Origin(
            file=file, line=_shift(auto.kline("min_replicas"), offset), source="kubernetes",
            key="autoscaling_config.min_replicas"))
    tp = kwargs.get("tensor_parallel_size", 1)
    pp = kwargs.get("pipeline_parallel_size", 1)
    if isinstance(tp, int) and isinstance(pp, int):
        e.gpu_count = Hint(value=tp * pp, origin=Origin(file=file, line=e.line, source="inferred",
                                                        key="engine_kwargs (tensor x pipeline parallel)"))
        e.notes.append(f"one Serve replica uses TP x PP = {tp * pp} GPU(s) of the Ray cluster")
    if image:
        e.notes.append(f"image {image} names a Ray release, not a vLLM release")
    return e


def _plain(value: object) -> object:
    if isinstance(value, dict):
        return {kk: _plain(v) for kk, v in value.items()}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    return value


# Environment variables custom Ray Serve / container apps commonly read for vLLM settings (the app code maps
# them onto vLLM engine arguments; e.g. kuberay samples/vllm serve_tpu.py reads MODEL_ID, MAX_MODEL_LEN,
# DTYPE, TOKENIZER_MODE, TPU_CHIPS).
_ENV_MODEL = {"MODEL_ID", "MODEL_NAME", "MODEL", "HF_MODEL_ID", "MODEL_PATH"}
ENV_FLAGS = {
    "MAX_MODEL_LEN": "--max-model-len", "TENSOR_PARALLELISM": "--tensor-parallel-size",
    "TENSOR_PARALLEL_SIZE": "--tensor-parallel-size", "TP_SIZE": "--tensor-parallel-size",
    "PIPELINE_PARALLELISM": "--pipeline-parallel-size", "PIPELINE_PARALLEL_SIZE": "--pipeline-parallel-size",
    "DTYPE": "--dtype", "TOKENIZER_MODE": "--tokenizer-mode", "GPU_MEMORY_UTILIZATION": "--gpu-memory-utilization",
    "MAX_NUM_SEQS": "--max-num-seqs", "MAX_NUM_BATCHED_TOKENS": "--max-num-batched-tokens",
    "KV_CACHE_DTYPE": "--kv-cache-dtype", "QUANTIZATION": "--quantization",
}


def _env_app(app: YMap, env: YMap, file: str, name: str, offset: int) -> RawEngine:
    e = RawEngine(name=name, file=file, line=_shift(app.line, offset))
    e.detected_by = "Ray Serve application runtime_env.env_vars"
    e.notes.append(f"Ray Serve application {app.get('import_path', '?')}: the model and vLLM settings are read from "
                   "its runtime_env.env_vars (the application code maps them onto vLLM arguments)")
    for key, value in env.items():
        line = _shift(env.kline(key), offset)
        text = "" if value is None else str(value)
        origin = Origin(file=file, line=line, source="kubernetes", key=f"env_vars.{key}")
        unresolved = "$" in text or "{{" in text
        if key in _ENV_MODEL and e.model is None:
            if unresolved:
                e.unresolved.append(Unresolved(text=text, reason=f"env_vars.{key} is a placeholder to replace",
                                               origin=origin))
            else:
                e.model = Setting(flag="--model", value=text, origin=origin)
        elif key in ENV_FLAGS:
            if unresolved:
                e.unresolved.append(Unresolved(text=f"{ENV_FLAGS[key]} {text}", reason=f"env_vars.{key} is a "
                                               "placeholder to replace", origin=Origin(
                                                   file=file, line=line, source="kubernetes", key=ENV_FLAGS[key])))
            else:
                e.settings.append(Setting(flag=ENV_FLAGS[key], value=text, origin=origin))
        elif not unresolved:
            e.env[str(key)] = Hint(value=text, origin=origin)
    return e


def _ray_service(obj: YMap, spec: YMap, file: str, name: str) -> list[RawEngine]:
    k = _k()
    cluster = k._m(spec.get("rayClusterConfig"))
    return _ray_cluster(cluster, file, name, spec.get("serveConfigV2"), spec.vline("serveConfigV2"))


def _ray_cluster_kind(obj: YMap, spec: YMap, file: str, name: str) -> list[RawEngine]:
    return _ray_cluster(spec, file, name)


def _ray_job(obj: YMap, spec: YMap, file: str, name: str) -> list[RawEngine]:
    k = _k()
    engines = _ray_cluster(k._m(spec.get("rayClusterSpec")), file, name)
    entry = spec.get("entrypoint")
    if isinstance(entry, str) and "vllm" in entry:

        engines.extend(read_script(entry, file, name=f"{name}/entrypoint", base_line=spec.vline("entrypoint") or 1))
    return engines


def _fleet(obj: YMap, spec: YMap, file: str, name: str) -> list[RawEngine]:
    """AIBrix RayClusterFleet: ``spec.template.spec`` is a RayCluster spec; ``spec.replicas`` clusters."""
    k = _k()
    engines = _ray_cluster(k._m(k._m(spec.get("template")).get("spec")), file, name)
    k._replicas(engines, spec, file, "spec.replicas")
    return engines


# ----------------------------------------------------------------------------------- KServe LLMISVC

_PARALLELISM = (("tensor", "--tensor-parallel-size"), ("pipeline", "--pipeline-parallel-size"),
                ("data", "--data-parallel-size"), ("dataLocal", "--data-parallel-size-local"))


def _llmisvc(obj: YMap, spec: YMap, file: str, name: str) -> list[RawEngine]:
    """KServe LLMInferenceService: the main (decode) pool and, when present, the prefill pool."""
    k = _k()
    model = _llmisvc_model(k._m(spec.get("model")), file)
    prefill = k._m(spec.get("prefill"))
    engines = [_llmisvc_pool(spec, file, name, "decode" if prefill else None, model, spec)]
    if prefill:
        engines.append(_llmisvc_pool(prefill, file, f"{name}/prefill", "prefill", model, spec))
    return engines


def _llmisvc_model(m: YMap, file: str) -> Setting | None:
    uri, mname = m.get("uri"), m.get("name")
    if isinstance(uri, str) and uri.startswith("hf://"):
        return Setting(flag="--model", value=uri[len("hf://"):], origin=Origin(
            file=file, line=m.kline("uri"), source="kubernetes", key="model.uri"))
    if mname is not None and "/" in str(mname):
        return Setting(flag="--model", value=str(mname), origin=Origin(
            file=file, line=m.kline("name"), source="kubernetes", key="model.name"))
    if uri is not None:
        return Setting(flag="--model", value=str(uri), origin=Origin(
            file=file, line=m.kline("uri"), source="kubernetes", key="model.uri"))
    return None


def _llmisvc_pool(pool: YMap, file: str, name: str, role: str | None, model: Setting | None,
                  top: YMap) -> RawEngine:
    k = _k()
    e = RawEngine(name=name, file=file, line=pool.line, role=role, model=model)
    e.detected_by = "KServe LLMInferenceService (vLLM runtime)"
    e.notes.append("KServe LLMInferenceService: the llm-d/vLLM runtime serves spec.model with `vllm serve`")
    par = k._m(pool.get("parallelism"))
    for key, flag in _PARALLELISM:
        if key in par:
            e.settings.append(Setting(flag=flag, value=str(par[key]), origin=Origin(
                file=file, line=par.kline(key), source="kubernetes", key=f"parallelism.{key}")))
    if par.get("expert") is True:
        e.settings.append(Setting(flag="--enable-expert-parallel", value=None, origin=Origin(
            file=file, line=par.kline("expert"), source="kubernetes", key="parallelism.expert")))
    template = k._m(pool.get("template"))
    main = next((k._m(c) for c in k._l(template.get("containers")) if k._m(c).get("name") == "main"),
                next((k._m(c) for c in k._l(template.get("containers"))), k._m(None)))
    env = k.container_env(main, file)
    words = k._words(main, "args", env)
    if words:
        parsed = parse_args(words, kind="bare", file=file, source="kubernetes")
        e.settings.extend(parsed.settings)
        e.unresolved.extend(parsed.unresolved)
        if parsed.model is not None and e.model is None:
            e.model = parsed.model
    extra = env.get("VLLM_ADDITIONAL_ARGS")
    if extra is not None and extra.value:
        toks = [t for c in parse_script(extra.value, base_line=extra.line or 1).commands for t in c.tokens]
        parsed = parse_args(toks, kind="bare", file=file, source="kubernetes", key_prefix="VLLM_ADDITIONAL_ARGS ")
        e.settings.extend(parsed.settings)
        e.unresolved.extend(parsed.unresolved)
    for key, var in env.items():
        if var.value is not None:
            e.env[key] = Hint(value=var.value, origin=Origin(file=file, line=var.line, source="kubernetes",
                                                            key=f"env.{key}"))
    per_pod = k.gpu_count_hint(k._m(main.get("resources")), file)
    pods = 1
    worker = k._m(pool.get("worker")) or (k._m(top.get("worker")) if role != "prefill" else k._m(None))
    data, local = par.get("data"), par.get("dataLocal")
    if worker and isinstance(data, int) and isinstance(local, int) and local:
        pods = max(1, data // local)
    elif worker and isinstance(par.get("pipeline"), int):
        pods = par["pipeline"]
    if per_pod is not None:
        family = accelerator_family(per_pod.origin.key or "")
        if family:
            e.accelerator = Hint(value=family, origin=per_pod.origin)
        if isinstance(per_pod.value, int) and pods > 1:
            e.gpu_count = Hint(value=per_pod.value * pods, origin=per_pod.origin)
            e.notes.append(f"multi-node: {pods} pods (leader + workers) x {per_pod.value} = {per_pod.value * pods} "
                           "accelerators for one engine")
        else:
            e.gpu_count = per_pod
    elif "resources" in main:
        e.gpu_count = Hint(value=0, origin=Origin(file=file, line=main.kline("resources"), source="kubernetes",
                                                  key="resources"))
        e.notes.append("no accelerator resource is requested: a CPU deployment")
    image = main.get("image")
    if image:
        release_from_image(e, str(image), Origin(file=file, line=main.kline("image"), source="kubernetes",
                                                 key=str(image)))
    else:
        e.notes.append("no image given: the runtime image comes from the cluster's LLMInferenceServiceConfig")
    e.gpu_type = k.gpu_type_hint(template, file)
    if "replicas" in pool:
        e.replicas = Hint(value=pool["replicas"], origin=Origin(file=file, line=pool.kline("replicas"),
                                                                source="kubernetes", key="replicas"))
    return e


# ------------------------------------------------------------------------------ production-stack CR


def _vllm_runtime(obj: YMap, spec: YMap, file: str, name: str) -> list[RawEngine]:
    """production-stack VLLMRuntime, rendered in the operator's order (see module docstring)."""
    k = _k()
    model = k._m(spec.get("model"))
    vc = k._m(spec.get("vllmConfig")) or spec          # older CRD layout has the fields at spec level
    dc = k._m(spec.get("deploymentConfig")) or spec
    e = RawEngine(name=name, file=file, line=obj.line)
    e.detected_by = "production-stack VLLMRuntime"
    e.notes.append("production-stack VLLMRuntime: flags rendered as the operator does (vllmruntime_controller.go)")

    def where(m: YMap, key: str, path: str) -> Origin:
        return Origin(file=file, line=m.kline(key) or m.line, source="helm-field", key=path)

    if "modelURL" in model:
        e.model = Setting(flag="--model", value=str(model["modelURL"]), origin=where(model, "modelURL", "model.modelURL"))
    if model.get("enableLoRA"):
        e.settings.append(Setting(flag="--enable-lora", origin=where(model, "enableLoRA", "model.enableLoRA")))
    if model.get("enableTool"):
        e.settings.append(Setting(flag="--enable-auto-tool-choice", origin=where(model, "enableTool", "model.enableTool")))
    if model.get("toolCallParser"):
        e.settings.append(Setting(flag="--tool-call-parser", value=str(model["toolCallParser"]),
                                  origin=where(model, "toolCallParser", "model.toolCallParser")))
    for key, flag in (("enableChunkedPrefill", "--enable-chunked-prefill"),
                      ("enablePrefixCaching", "--enable-prefix-caching")):
        on = bool(vc.get(key))
        e.settings.append(Setting(flag=flag if on else "--no-" + flag[2:], origin=Origin(
            file=file, line=vc.kline(key) or vc.line, source="helm-field" if key in vc else "chart-default",
            key=f"vllmConfig.{key}" + ("" if key in vc else " (unset: the operator renders --no-...)"))))
    for m, key, flag, path in ((model, "maxModelLen", "--max-model-len", "model.maxModelLen"),
                               (model, "dtype", "--dtype", "model.dtype"),
                               (vc, "tensorParallelSize", "--tensor-parallel-size", "vllmConfig.tensorParallelSize"),
                               (model, "maxNumSeqs", "--max-num-seqs", "model.maxNumSeqs"),
                               (vc, "gpuMemoryUtilization", "--gpu_memory_utilization", "vllmConfig.gpuMemoryUtilization"),
                               (vc, "maxLoras", "--max_loras", "vllmConfig.maxLoras")):
        value = m.get(key)
        if value not in (None, "", 0):
            e.settings.append(Setting(flag=flag, value=str(value), origin=where(m, key, path)))
    extra = vc.get("extraArgs")
    if isinstance(extra, YList):
        toks = [Tok(str(v), extra.iline(i)) for i, v in enumerate(extra) if v is not None]
        parsed = parse_args(toks, kind="bare", file=file, source="helm-extra-args")
        e.settings.extend(parsed.settings)
        e.unresolved.extend(parsed.unresolved)
    env = k._l(vc.get("env"))
    for i, item in enumerate(env):
        item = k._m(item)
        if "name" in item and "value" in item:
            e.env[str(item["name"])] = Hint(value=str(item["value"]), origin=Origin(
                file=file, line=env.iline(i), source="helm-field", key=f"env.{item['name']}"))
    if "v1" in vc:
        e.env.setdefault("VLLM_USE_V1", Hint(value="1" if vc.get("v1") else "0", origin=where(vc, "v1", "vllmConfig.v1")))
    res = k._m(dc.get("resources"))
    if "gpu" in res:
        gtype = str(res.get("gpuType", "nvidia.com/gpu"))
        e.gpu_count = Hint(value=gpu_quantity(res["gpu"]), origin=Origin(
            file=file, line=res.kline("gpu"), source="helm-field", key=f"resources.gpu ({gtype})"))
        family = accelerator_family(gtype)
        if family:
            e.accelerator = Hint(value=family, origin=e.gpu_count.origin)
    img = k._m(dc.get("image"))
    if img.get("name"):
        image = str(img["name"])
        version = vllm_version_from_image(image)
        if version is not None:
            e.vllm_version = Hint(value=version, origin=Origin(file=file, line=img.kline("name"),
                                                               source="helm-field", key=image))
        else:
            e.notes.append(f"image {image} does not name a vLLM release")
    if "replicas" in dc:
        e.replicas = Hint(value=dc["replicas"], origin=where(dc, "replicas", "deploymentConfig.replicas"))
    return [e]


READERS: dict[str, Callable[[YMap, YMap, str, str], list[RawEngine]]] = {
    "RayService": _ray_service,
    "RayCluster": _ray_cluster_kind,
    "RayJob": _ray_job,
    "RayClusterFleet": _fleet,
    "LLMInferenceService": _llmisvc,
    "VLLMRuntime": _vllm_runtime,
}
