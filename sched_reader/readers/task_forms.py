"""What the wrapper files that ``task_files`` reads look like (SkyPilot task YAML, GitHub Actions / GitLab
CI workflows, Makefiles): the predicates ``detect`` runs on every file, kept apart from the readers so that
detection does not import them (``detect.READERS`` imports a reader when its form is found).
"""

from __future__ import annotations

import re
from pathlib import Path

SKY_KEYS = {"name", "workdir", "resources", "envs", "secrets", "file_mounts", "setup", "run", "num_nodes",
            "service", "config", "experimental", "volumes", "event_callback", "docker"}
MAKE_ASSIGN = re.compile(r"^(?:override\s+|export\s+)?([A-Za-z_][A-Za-z0-9_.-]*)\s*(\?=|:=|::=|\+=|=)\s*(.*)$")
MAKE_TARGET = re.compile(r"^([^\s:#=][^:=]*?)\s*::?(?!=)(.*)$")


def looks_like_skypilot(root: object) -> bool:
    """A SkyPilot task: ``run`` is a script and the other keys are SkyPilot's."""
    if not isinstance(root, dict) or not isinstance(root.get("run"), str):
        return False
    keys = {str(k) for k in root}
    # a vLLM --config mapping has no `run` script; SkyPilot adds keys over releases, so unknown ones are allowed
    return bool(keys & {"resources", "envs", "setup", "service", "num_nodes", "workdir", "file_mounts"}) and (
        len(keys - SKY_KEYS) <= len(keys & SKY_KEYS))


def looks_like_ci(root: object) -> str | None:
    """``"github"`` for a GitHub Actions workflow, ``"gitlab"`` for GitLab CI, else None."""
    if not isinstance(root, dict):
        return None
    jobs = root.get("jobs")
    if isinstance(jobs, dict) and any(isinstance(j, dict) and ("steps" in j or "runs-on" in j) for j in jobs.values()):
        return "github"
    if any(isinstance(v, dict) and isinstance(v.get("script"), (list, str)) for v in root.values()):
        return "gitlab"
    return None


def looks_like_makefile(text: str, path: Path | None) -> bool:
    """A Makefile: named like one, or targets with tab-indented recipes and a ``.PHONY`` or a variable."""
    if path is not None and (path.name in ("Makefile", "makefile", "GNUmakefile") or path.suffix == ".mk"):
        return True
    lines = text.split("\n")
    has_target = any(MAKE_TARGET.match(ln) and not ln.startswith(("#", "\t")) and "=" not in ln.split(":")[0]
                     and not ln.lstrip().startswith(("if", "for", "while", "case", "export"))
                     for ln in lines)
    has_recipe = any(ln.startswith("\t") for ln in lines)
    return has_target and has_recipe and any(ln.startswith(".PHONY") or MAKE_ASSIGN.match(ln) for ln in lines)
