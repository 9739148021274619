"""llm-d modelservice Helm values (``modelArtifacts`` + ``decode`` / ``prefill``) -> one engine per role.

The chart (rules and source in ``data/chart_rendering.yaml``) builds the container argv from
``modelCommand``: ``vllmServe`` -> ``vllm serve <model> --port P [--tensor-parallel-size T]
[--data-parallel-size D] [--data-parallel-size-local L] --served-model-name N <container args>``;
``imageDefault`` -> the same with ``--model``; ``custom`` -> the container's own command/args. GPUs per pod
= dataLocal x tensor unless the container sets the accelerator resource itself.
"""

from __future__ import annotations

from sched_reader.readers.argv import parse_args
from sched_reader.readers.chart_facts import chart_facts
from sched_reader.readers.cmdline import Context, engine_from_tokens
from sched_reader.readers.images import release_from_image
from sched_reader.readers.kubernetes import _l, _m, _words, container_env, gpu_count_hint
from sched_reader.readers.raw import Hint, Origin, RawEngine, Setting
from sched_reader.readers.yaml_tree import YMap


def read_llmd_values(root: YMap, file: str) -> list[RawEngine]:
    """Engines of the ``decode`` and ``prefill`` sections that are created."""
    engines: list[RawEngine] = []
    skipped: list[str] = []
    for role in ("prefill", "decode"):
        section = root.get(role)
        if not isinstance(section, YMap):
            continue
        if section.get("create") is False:
            skipped.append(f"{role} (create: false, line {section.kline('create')})")
            continue
        engines.extend(_role(root, section, role, file))
    for e in engines:
        e.notes.extend(f"{s} is not deployed" for s in skipped)
    return engines


def _model(root: YMap, file: str) -> Setting | None:
    art = _m(root.get("modelArtifacts"))
    uri = art.get("uri")
    name = art.get("name")
    if name is not None and (uri is None or "{{" in str(uri) or not str(uri).startswith(("hf://", "pvc+hf://"))):
        # the served model name, when the uri is a template or a storage path (llm-d guides write
        # uri: "hf://{{ .Values.modelArtifacts.name }}" or pvc://...)
        return Setting(flag="--model", value=str(name), origin=Origin(file=file, line=art.kline("name"),
                                                                     source="helm-field", key="modelArtifacts.name"))
    if uri is None:
        return None
    uri = str(uri)
    proto, _, rest = uri.partition("://")
    if proto == "hf":
        value = rest
    elif proto == "pvc+hf":
        parts = rest.split("/")
        value = "/".join(parts[-2:])
    elif proto == "pvc":
        value = f"{art.get('mountPath', '/model-cache')}/{rest.split('/', 1)[1] if '/' in rest else ''}"
    else:
        value = uri
    return Setting(flag="--model", value=value, origin=Origin(file=file, line=art.kline("uri"), source="helm-field",
                                                             key="modelArtifacts.uri"))


def _role(root: YMap, section: YMap, role: str, file: str) -> list[RawEngine]:
    facts = chart_facts()["llm_d_modelservice"]
    par = _m(section.get("parallelism"))
    sizes = {r["key"]: par.get(r["key"], r["default"]) for r in facts["parallelism_flags"]}
    if "dataLocal" not in par:
        workers = par.get("workers")
        sizes["dataLocal"] = (sizes["data"] // workers if isinstance(workers, int) and workers and
                              isinstance(sizes["data"], int) else sizes["data"])
    engines: list[RawEngine] = []
    for c in _l(section.get("containers")):
        c = _m(c)
        mode = str(c.get("modelCommand", "custom"))
        env = container_env(c, file)
        name = f"{role}/{c.get('name', 'vllm')}"
        if mode in ("vllmServe", "imageDefault"):
            e = RawEngine(name=name, file=file, line=c.line, role=role, model=_model(root, file))
            e.notes.append(f"llm-d modelservice chart, modelCommand {mode} ({facts['source']})")
            for rule in facts["parallelism_flags"]:
                value = sizes[rule["key"]]
                if isinstance(value, int) and value > 1:
                    key = rule["key"]
                    line = par.kline(key) if key in par else par.line
                    source = "helm-field" if key in par else "chart-default"
                    e.settings.append(Setting(flag=rule["flag"], value=str(value), origin=Origin(
                        file=file, line=line, source=source, key=f"{role}.parallelism.{key}")))
            args = _words(c, "args", env)
            parsed = parse_args(args, kind="bare", file=file, source="helm-extra-args")
            e.settings.extend(parsed.settings)
            e.unresolved.extend(parsed.unresolved)
            e.notes.extend(parsed.notes)
        else:
            words = _words(c, "command", env) + _words(c, "args", env)
            e = engine_from_tokens(words, Context(file=file), name=name, line=c.line, env=env)
            if e is None:
                continue
            e.role = role
        for k, v in env.items():
            if v.value is not None:
                e.env.setdefault(k, Hint(value=v.value, origin=Origin(file=file, line=v.line, source="helm-field",
                                                                     key=f"env.{k}")))
        image = c.get("image")
        if image is not None:
            release_from_image(e, str(image), Origin(file=file, line=c.kline("image"), source="helm-field",
                                                     key=str(image)), " (llm-d images carry their own version)")
        _gpus(e, root, c, sizes, par, role, file)
        if "replicas" in section:
            e.replicas = Hint(value=section["replicas"], origin=Origin(
                file=file, line=section.kline("replicas"), source="helm-field", key=f"{role}.replicas"))
        engines.append(e)
    return engines


def _gpus(e: RawEngine, root: YMap, c: YMap, sizes: dict, par: YMap, role: str, file: str) -> None:
    explicit = gpu_count_hint(_m(c.get("resources")), file)
    accel = _m(root.get("accelerator"))
    atype = str(accel.get("type", "nvidia"))
    family = {"intel-gaudi": "gaudi", "gaudi": "gaudi", "hpu": "gaudi", "google": "tpu", "tpu": "tpu",
              "amd": "amd", "rocm": "amd", "intel-i915": "intel-gpu", "intel-xe": "intel-gpu"}.get(atype.lower())
    if family is not None:
        e.accelerator = Hint(value=family, origin=Origin(file=file, line=accel.kline("type"), source="helm-field",
                                                         key="accelerator.type"))
    if explicit is not None:
        e.gpu_count = explicit
    elif atype == "cpu":
        e.gpu_count = Hint(value=0, origin=Origin(file=file, line=accel.kline("type"), source="helm-field",
                                                  key="accelerator.type"))
    elif isinstance(sizes["tensor"], int) and isinstance(sizes["dataLocal"], int):
        n = sizes["tensor"] * sizes["dataLocal"]
        e.gpu_count = Hint(value=n, origin=Origin(file=file, line=par.line or c.line, source="chart-default",
                                                  key=f"{role}.parallelism (dataLocal x tensor)"))
        e.notes.append(f"GPUs per pod {n} = dataLocal {sizes['dataLocal']} x tensor {sizes['tensor']} (the chart "
                       "fills the accelerator resource from parallelism)")
    types = _m(_m(root.get(role)).get("acceleratorTypes"))
    values = types.get("labelValues")
    if types.get("labelKey") and values:
        values = list(values)
        e.gpu_type = Hint(value=values[0] if len(values) == 1 else values, origin=Origin(
            file=file, line=types.kline("labelValues"), source="helm-field", key=f"{role}.acceleratorTypes"))
    elif "type" in accel:
        e.notes.append(f"accelerator vendor {atype} (accelerator.type); no GPU product is named")
