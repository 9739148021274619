"""Files that wrap a shell script around ``vllm serve``: SkyPilot task YAML, GitHub Actions / GitLab CI
workflows, Makefiles and Slurm batch scripts. Each script is read by :mod:`cmdline` as shell, with the
variables the wrapper defines.

* SkyPilot (https://docs.skypilot.co/en/latest/reference/yaml-spec.html): ``run:`` is the script; ``envs:``
  are its variables (a null value is set at launch: unresolved); ``resources.accelerators`` is ``H100:8``,
  a list or a ``{L4:1, A10G:1}`` set of alternatives; ``num_nodes``; ``service.replicas``;
  ``resources.image_id: docker:IMAGE``. SkyPilot sets ``SKYPILOT_NUM_GPUS_PER_NODE`` /
  ``SKYPILOT_NUM_NODES`` / ``SKYPILOT_NODE_RANK`` for the script (the first node, rank 0, is read).
  A ``pip install vllm==X`` in ``setup:`` names the release. Never read as a vLLM ``--config`` mapping.
* GitHub Actions (``jobs.<id>.steps[].run`` with ``env:`` at workflow, job and step level) and GitLab CI
  (``<job>.script`` / ``before_script`` lists, ``variables:``).
* Makefiles: ``VAR ?= x`` / ``VAR := x`` / ``VAR = x`` and ``$(VAR)`` / ``${VAR}`` are make variables,
  expanded before the recipe runs (``$$`` is a literal ``$`` for the shell); each recipe is one script.
* Slurm: ``#SBATCH --gpus[-per-node]=[type:]N``, ``-G``, ``--gres=gpu[:type]:N``, ``--nodes`` give the GPU
  count and type of the engines the script starts (``srun ... apptainer exec ... vllm serve`` included).
"""

from __future__ import annotations

import re
from pathlib import Path

from sched_reader.readers.images import vllm_version_from_image
from sched_reader.readers.raw import Hint, Origin, RawEngine
from sched_reader.readers.shell import Var
from sched_reader.readers.yaml_tree import YList, YMap
from sched_reader.readers.kubernetes import _l, _m
from sched_reader.readers.cmdline import read_script
from sched_reader.readers.argv import parse_args
from sched_reader.readers.kubernetes import gpu_count_hint
from sched_reader.readers.shell import Tok
from sched_reader.readers.raw import Setting
from sched_reader.readers.task_forms import MAKE_ASSIGN, MAKE_TARGET


# --------------------------------------------------------------------------------------------- SkyPilot
def _accelerators(res: YMap, file: str) -> tuple[Hint | None, Hint | None, list[str]]:
    """(GPU type, GPUs per node, notes) of ``resources.accelerators``."""
    acc = res.get("accelerators")
    line = res.kline("accelerators")
    where = Origin(file=file, line=line, source="inferred", key="resources.accelerators")
    if acc is None:
        return None, None, []
    options: list[tuple[str, int | None]] = []
    items = acc.items() if isinstance(acc, dict) else [(a, None) for a in acc] if isinstance(acc, list) else [(acc, None)]
    for name, count in items:
        text = str(name)
        if count is None and ":" in text:
            text, _, c = text.partition(":")
            count = c
        try:
            n = int(float(count)) if count is not None else 1
        except (TypeError, ValueError):
            n = None
        options.append((text.strip(), n))
    if not options:
        return None, None, []
    notes = []
    names = [o[0] for o in options]
    gpu_type = Hint(value=names[0] if len(names) == 1 else names, origin=where)
    counts = {o[1] for o in options}
    count = Hint(value=options[0][1], origin=where) if options[0][1] is not None else None
    if len(options) > 1:
        notes.append("SkyPilot accelerators are alternatives (" + ", ".join(f"{n}:{c}" for n, c in options)
                     + f"); SkyPilot picks one at launch; read as {options[0][0]}:{options[0][1]}")
    if len(counts) > 1:
        notes.append("the alternatives have different GPU counts: $SKYPILOT_NUM_GPUS_PER_NODE is read as "
                     f"{options[0][1]} (the first)")
    return gpu_type, count, notes


_PIP_VLLM = re.compile(r"\bvllm==(\d+\.\d+(?:\.\d+)*(?:\.?post\d+)?)")


def read_skypilot(root: YMap, file: str, name: str) -> list[RawEngine]:

    res = _m(root.get("resources"))
    gpu_type, per_node, notes = _accelerators(res, file)
    nodes = root.get("num_nodes", 1)
    env: dict[str, Var] = {}
    for key, value in _m(root.get("envs")).items():
        line = _m(root.get("envs")).kline(key)
        if value is None:
            env[str(key)] = Var(None, line, exported=True, source="env",
                                reason=f"envs.{key} is null: given at launch (--env {key}=...)")
        else:
            env[str(key)] = Var(str(value), line, exported=True, source="env")
    if per_node is not None:
        env["SKYPILOT_NUM_GPUS_PER_NODE"] = Var(str(per_node.value), per_node.origin.line, exported=True, source="env")
    if isinstance(nodes, int):
        env["SKYPILOT_NUM_NODES"] = Var(str(nodes), root.kline("num_nodes"), exported=True, source="env")
    env["SKYPILOT_NODE_RANK"] = Var("0", None, exported=True, source="env")
    run = root["run"]
    engines = read_script(str(run), file, name=name, base_line=root.vline("run") or 1, env=env)
    version = _setup_version(root, file) or _image_version(res, file)
    for e in engines:
        e.detected_by = "SkyPilot run: script"
        e.notes.append("SkyPilot task: the run: script is read as shell with envs: and SKYPILOT_* variables "
                       "(node rank 0)")
        e.notes.extend(notes)
        if gpu_type is not None and e.gpu_type is None:
            e.gpu_type = gpu_type
        if per_node is not None and isinstance(per_node.value, int):
            total = per_node.value * (nodes if isinstance(nodes, int) else 1)
            e.gpu_count = Hint(value=total, origin=per_node.origin)
            if isinstance(nodes, int) and nodes > 1:
                e.notes.append(f"{nodes} nodes x {per_node.value} GPUs = {total} GPUs for one engine")
        if version is not None and e.vllm_version is None:
            e.vllm_version = version
        svc = _m(root.get("service"))
        if "replicas" in svc:
            e.replicas = Hint(value=svc["replicas"], origin=Origin(file=file, line=svc.kline("replicas"),
                                                                 source="inferred", key="service.replicas"))
        for k in ("HF_TOKEN", "SKYPILOT_NODE_RANK"):
            e.env.pop(k, None)
    return engines


def _setup_version(root: YMap, file: str) -> Hint | None:
    setup = root.get("setup")
    if not isinstance(setup, str):
        return None
    m = _PIP_VLLM.search(setup)
    if not m:
        return None
    line = (root.vline("setup") or 1) + setup[: m.start()].count("\n")
    return Hint(value=m.group(1), origin=Origin(file=file, line=line, source="inferred", key=f"setup: {m.group(0)}"))


def _image_version(res: YMap, file: str) -> Hint | None:
    image = res.get("image_id")
    if not isinstance(image, str) or not image.startswith("docker:"):
        return None
    version = vllm_version_from_image(image[len("docker:"):])
    if version is None:
        return None
    return Hint(value=version, origin=Origin(file=file, line=res.kline("image_id"), source="inferred", key=image))


# ------------------------------------------------------------------------------------------------- CI
def _env_vars(section: object, file: str, key: str = "env") -> dict[str, Var]:
    out: dict[str, Var] = {}
    m = _m(section)
    for k, v in m.items():
        text = "" if v is None else str(v)
        if "${{" in text:
            out[str(k)] = Var(None, m.kline(k), exported=True, source="env", reason=f"{key}.{k} is an expression "
                              "evaluated by the CI runner")
        else:
            out[str(k)] = Var(text, m.kline(k), exported=True, source="env")
    return out


def read_ci(root: YMap, file: str, flavour: str) -> list[RawEngine]:

    engines: list[RawEngine] = []
    if flavour == "github":
        top = _env_vars(root.get("env"), file)
        for job_id, job in _m(root.get("jobs")).items():
            job = _m(job)
            job_env = {**top, **_env_vars(job.get("env"), file)}
            steps = _l(job.get("steps"))
            for i, step in enumerate(steps):
                step = _m(step)
                run = step.get("run")
                if not isinstance(run, str) or "vllm" not in run:
                    continue
                env = {**job_env, **_env_vars(step.get("env"), file)}
                sname = str(step.get("name", f"step {i + 1}"))
                found = read_script(run, file, name=f"{job_id}/{sname}", base_line=step.vline("run") or 1, env=env)
                for e in found:
                    e.detected_by = "GitHub Actions run: step"
                engines.extend(found)
    else:
        top = _env_vars(root.get("variables"), file, "variables")
        for job_id, job in root.items():
            job = _m(job)
            if not job:
                continue
            env = {**top, **_env_vars(job.get("variables"), file, "variables")}
            for key in ("before_script", "script"):
                script = job.get(key)
                lines = [(str(x), script.iline(i)) for i, x in enumerate(script)] if isinstance(script, YList) else (
                    [(script, job.vline(key))] if isinstance(script, str) else [])
                for text, line in lines:
                    if "vllm" not in text:
                        continue
                    found = read_script(text, file, name=f"{job_id}", base_line=line or 1, env=env)
                    for e in found:
                        e.detected_by = "GitLab CI script: line"
                    engines.extend(found)
    return engines


# ------------------------------------------------------------------------------------------- Makefiles
_MAKE_REF = re.compile(r"\$\(([A-Za-z_][A-Za-z0-9_.-]*)\)|\$\{([A-Za-z_][A-Za-z0-9_.-]*)\}")


def _strip_make_comment(value: str) -> str:
    """A make variable value ends at an unescaped ``#`` (quotes do not protect it in make)."""
    out = re.split(r"(?<!\\)#", value, maxsplit=1)[0]
    return out.strip()


def read_makefile(text: str, file: str, name: str, base_dir: Path | None) -> list[RawEngine]:

    lines = text.split("\n")
    variables: dict[str, tuple[str, int]] = {}
    recipes: list[tuple[str, list[tuple[int, str]]]] = []
    current: list[tuple[int, str]] | None = None
    cont = False
    for n, raw in enumerate(lines, 1):
        if raw.startswith("\t") and current is not None:
            current.append((n, raw[1:]))
            cont = raw.rstrip().endswith("\\")
            continue
        if cont and current is not None:  # continuation of a recipe line
            current.append((n, raw))
            cont = raw.rstrip().endswith("\\")
            continue
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        m = MAKE_ASSIGN.match(line)
        if m:
            var, op, value = m.group(1), m.group(2), _strip_make_comment(m.group(3))
            if op == "?=" and var in variables:
                continue
            if op == "+=" and var in variables:
                value = variables[var][0] + " " + value
            variables[var] = (value, n)
            current = None
            continue
        t = MAKE_TARGET.match(line)
        if t and not line.startswith((".", "-include", "include")):
            current = []
            recipes.append((t.group(1).strip(), current))
            rest = t.group(2)
            if ";" in rest:
                current.append((n, rest.split(";", 1)[1]))
            continue
        if line.startswith("."):
            current = None

    def expand(s: str, depth: int = 0) -> str:
        if depth > 10:
            return s

        def repl(mm: re.Match) -> str:
            var = mm.group(1) or mm.group(2)
            if var in variables:
                return expand(variables[var][0], depth + 1)
            return mm.group(0)  # an environment variable or unknown: left for the shell

        return _MAKE_REF.sub(repl, s)

    engines: list[RawEngine] = []
    for target, body in recipes:
        if not any("vllm" in b for _, b in body):
            continue
        script_lines = [""] * len(lines)
        continued = False
        for n, b in body:
            b = b.lstrip()
            while not continued and b[:1] in ("@", "-", "+"):  # recipe prefixes, first line of a command only
                b = b[1:]
            continued = b.rstrip().endswith("\\")
            script_lines[n - 1] = expand(b).replace("$$", "$")
        script = "\n".join(script_lines)
        found = read_script(script, file, name=f"{name}:{target}", base_line=1, base_dir=base_dir)
        for e in found:
            e.detected_by = "Makefile recipe"
            e.notes.append(f"Makefile target {target!r}: make variables ($(VAR)) expanded from the file's "
                           "assignments (a `make VAR=...` override on the command line is not seen)")
        engines.extend(found)
    return engines


# ----------------------------------------------------------------------------------------------- Slurm
_SBATCH = re.compile(r"^#SBATCH\s+(.*)$")


def slurm_resources(text: str, file: str) -> tuple[Hint | None, Hint | None]:
    """(GPU count, GPU type) requested by ``#SBATCH`` lines (None when the script asks for none)."""
    opts: dict[str, tuple[str, int]] = {}
    for n, line in enumerate(text.split("\n"), 1):
        m = _SBATCH.match(line.strip())
        if not m:
            continue
        body = m.group(1).split("#", 1)[0].strip()
        parts = body.split(None, 1) if "=" not in body.split(None, 1)[0] else body.split("=", 1)
        key = parts[0].strip()
        value = parts[1].strip() if len(parts) > 1 else ""
        opts[key] = (value, n)
    count = gtype = None
    nodes = 1
    if "--nodes" in opts or "-N" in opts:
        v, _ = opts.get("--nodes") or opts["-N"]
        nodes = int(v) if v.isdigit() else 1
    for key in ("--gpus", "-G", "--gpus-per-node", "--gres", "--gpus-per-task"):
        if key not in opts:
            continue
        value, line = opts[key]
        spec = value
        if key == "--gres":
            gres = [g for g in value.split(",") if g.startswith("gpu")]
            if not gres:
                continue
            spec = gres[0][len("gpu"):].lstrip(":")
        pieces = spec.split(":")
        num = pieces[-1] if pieces and pieces[-1].isdigit() else None
        name = pieces[0] if len(pieces) > 1 else (None if num else pieces[0] or None)
        where = Origin(file=file, line=line, source="inferred", key=f"#SBATCH {key}")
        if num is not None:
            n = int(num) * (nodes if key in ("--gpus-per-node", "--gres") else 1)
            count = Hint(value=n, origin=where)
        if name:
            gtype = Hint(value=name, origin=where)
        break
    return count, gtype


# ------------------------------------------------------------------------------------- llm-d-deployer
def read_llmd_deployer(root: YMap, file: str) -> list[RawEngine]:
    """llm-d-deployer chart values: ``sampleApplication`` renders a ModelService with decode and prefill
    roles (charts/llm-d/templates/sample-application/modelservice.yaml); args are ``--served-model-name``
    plus each role's ``extraArgs``; resources are shared by both roles."""

    app = _m(root.get("sampleApplication"))
    if app.get("enabled") is False:
        return []
    model = _m(app.get("model"))
    uri, mname = model.get("modelArtifactURI"), model.get("modelName")
    model_setting = None

    if isinstance(uri, str) and uri.startswith("hf://"):
        model_setting = Setting(flag="--model", value=uri[5:], origin=Origin(
            file=file, line=model.kline("modelArtifactURI"), source="helm-field", key="modelArtifactURI"))
    elif isinstance(uri, str) and uri.startswith("pvc://") and uri.count("/") >= 4:
        model_setting = Setting(flag="--model", value="/".join(uri.split("/")[-2:]), origin=Origin(
            file=file, line=model.kline("modelArtifactURI"), source="inferred", key="modelArtifactURI (pvc path)"))
    elif mname is not None:
        model_setting = Setting(flag="--model", value=str(mname), origin=Origin(
            file=file, line=model.kline("modelName"), source="helm-field", key="modelName"))
    engines: list[RawEngine] = []
    gpus = gpu_count_hint(_m(app.get("resources")), file, key_prefix="sampleApplication.resources")
    for role in ("prefill", "decode"):
        section = _m(app.get(role))
        e = RawEngine(name=f"sampleApplication/{role}", file=file, line=app.kline(role), role=role, model=model_setting)
        e.detected_by = "llm-d-deployer sampleApplication"
        e.notes.append("llm-d-deployer chart: sampleApplication renders an llm-d ModelService (vllm serve); the "
                       "image comes from the chart's modelservice.vllm.image")
        if isinstance(uri, str) and uri.startswith("pvc://"):
            e.notes.append(f"model read from the PVC path {uri} (served as {mname})")
        extra = _l(section.get("extraArgs"))
        toks = [Tok(str(v), extra.iline(i)) for i, v in enumerate(extra) if v is not None]
        parsed = parse_args(toks, kind="bare", file=file, source="helm-extra-args", key_prefix=f"{role}.extraArgs ")
        e.settings.extend(parsed.settings)
        e.unresolved.extend(parsed.unresolved)
        e.gpu_count = gpus
        if "replicas" in section:
            e.replicas = Hint(value=section["replicas"], origin=Origin(file=file, line=section.kline("replicas"),
                                                                     source="helm-field", key=f"{role}.replicas"))
        elif role not in app:
            e.notes.append(f"sampleApplication.{role} is not set: the chart default (1 replica, no extra args) "
                           "is rendered")
        engines.append(e)
    return engines
