"""The one registry of every rule id sched-reader emits: id, name, default severity, descriptions, fix.

API (what ``lint --select``, the formatters, ``sched-reader rules`` and ``docs/rules.md`` use)::

    all_rules() -> list[Rule]            # every rule family, sorted by id (SARIF tool.driver.rules order)
    get_rule("SR101" | "unknown-flag" | "SR106.batched-tokens-below-max-num-seqs") -> Rule | None
    severity_of(rule_id) -> Severity     # the registry's default severity: where checks take theirs
    family(rule_id) -> str               # "SR106.x" -> "SR106"
    startup_rules() -> list[Rule]        # the addressable vLLM start-up rules, SR106.<id>, one per data entry
    normalize_selector(text) -> str      # ALL, SR1, SR106, SR106.<id>, or a rule name -> a selector
    matches(rule_id, selector) -> bool   # SR106 selects the whole family; SR106.<id> exactly that one

Adding a rule: one module in ``analyzers/checks/`` (registered below from its ``ID``/``NAME``/
``SEVERITY``/docstring), or one entry in ``compat/data/rules/startup_rules.json`` for a vLLM start-up
check (it becomes ``SR106.<id>``); plus its positive and negative cases in
``tests/analyzers/rule_cases.yaml``; then ``python tools/gen_rules_doc.py``.

Formatters read it (SARIF ``tool.driver.rules``, GitHub annotation titles, JUnit), ``lint --select`` /
``--ignore`` resolve selectors against it, and ``docs/rules.md`` is generated from it by
``tools/gen_rules_doc.py`` (a test keeps the page up to date). Ids are stable: a rule never changes
meaning and an id is never reused.

Where each family comes from:

* ``SR0xx`` -- ``sched-reader lint`` itself (input that cannot be analyzed);
* ``SR101``-``SR110`` -- version checks, ``sched_reader/compat`` (details in ``compat/RULES.md``);
* ``SR111``-``SR114`` -- ``sched_reader/models/spec_builder.py`` (flag normalization, hardware);
* ``SR115`` -- ``sched-reader lint`` (capacity checks skipped for an unresolved model);
* ``SR116`` -- ``sched_reader/analyzers/diagnosis.py`` (a CPU deployment: no capacity figures);
* ``SR2xx`` -- capacity, ``sched_reader/analyzers/diagnosis.py``.

The ``default_severity`` is the severity of the rule's usual (or worst) form; a finding carries its own
severity, which some rules vary (``severities`` lists every one a rule can emit).
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass, field
from typing import Iterable

from sched_reader.analyzers.checks import CHECKS
from sched_reader.compat import rules as startup_data
from sched_reader.findings import Severity


@dataclass(frozen=True)
class Rule:
    """Metadata of one rule id."""

    id: str
    name: str  # kebab-case, unique
    default_severity: Severity
    short: str  # one line, no trailing period
    full: str  # a paragraph: what is checked and why it matters
    fix: str  # the usual remedy (findings carry a specific one)
    tags: tuple[str, ...] = ()
    severities: tuple[Severity, ...] = field(default=())
    source: str = ""  # module that emits it

    def all_severities(self) -> tuple[Severity, ...]:
        return self.severities or (self.default_severity,)


def _r(id: str, name: str, sev: Severity, short: str, full: str, fix: str, tags: Iterable[str], source: str,
       severities: Iterable[Severity] = ()) -> Rule:
    return Rule(id=id, name=name, default_severity=sev, short=short, full=" ".join(full.split()), fix=fix,
                tags=tuple(tags), severities=tuple(severities), source=source)


_COMPAT = "sched_reader.compat.checks"
_BUILDER = "sched_reader.models.spec_builder"
_LINT = "sched_reader.cli.cmd_lint"
_DIAG = "sched_reader.analyzers.diagnosis"

RULES: tuple[Rule, ...] = (
    _r("SR001", "invalid-deploy-file", "error",
       "The deploy file cannot be analyzed",
       """The file could not be read as a vLLM deploy config: a YAML syntax error, text that is not UTF-8,
       a binary or oversized file, or a flag value vLLM's argument parser would reject (text for a number,
       a value outside the flag's choices, NaN). `sched-reader lint` reports it as a finding so that one
       broken file does not hide the findings of the others; the analysis commands exit 2 instead.""",
       "Fix the syntax or the value named in the message.",
       ("input",), _LINT),
    _r("SR002", "unused-suppression", "warning",
       "A suppression directive suppresses nothing",
       """A `# sched-reader: ignore[...]` or `ignore-file[...]` directive that no finding matched (the problem
       was fixed, the line moved, or the rule id is mistyped), or that names no rule at all. A stale directive
       would silently hide the next real finding on that line; ruff's RUF100 and sqlfluff's
       `--warn-unused-ignores` report the same.""",
       "Remove the directive, or correct the rule id it names.",
       ("input", "suppression"), _LINT),
    _r("SR101", "unknown-flag", "error",
       "Flag not registered by the target vLLM release",
       """A flag that the target release's `vllm serve` does not register; vLLM stops at start-up with
       "unrecognized arguments". The message says in which release the flag was added or removed (flag
       history over all known releases).""",
       "Use the suggested flag (did-you-mean, or the flag that replaced it), upgrade vLLM, or remove it.",
       ("compat", "flags"), f"{_BUILDER}, {_COMPAT}"),
    _r("SR102", "bad-choice", "error",
       "Value outside the flag's choices in the target release",
       """A value outside the flag's `choices` (or outside `--quantization`'s valid methods) in the target
       release; vLLM's argument parser rejects it.""",
       "Use one of the valid choices; the closest one is suggested.",
       ("compat", "flags"), _COMPAT),
    _r("SR103", "bad-value", "error",
       "Value of the wrong type or impossible for the flag",
       """A value of the wrong type (text for a number, a non-boolean for a switch, malformed JSON), NaN or
       infinity, a negative size or count, or a missing value.""",
       "Give a value of the type the flag expects.",
       ("compat", "flags"), _COMPAT),
    _r("SR104", "deprecated-flag", "warning",
       "Flag deprecated in the target release",
       """The target release marks the flag deprecated (help text or `deprecated=True`); a later release
       removes it, and the deploy breaks on upgrade.""",
       "Stop using the flag; the release that removes it is named when known.",
       ("compat", "flags"), _COMPAT),
    _r("SR105", "incompatible-features", "warning",
       "Features marked incompatible in vLLM's compatibility matrix",
       """Two features the engine turns on are marked incompatible (warning) or partially compatible (info)
       in vLLM's feature compatibility matrix for the release, or a feature is unsupported on the GPU's
       hardware column; also documented incompatibilities outside the matrix.""",
       "Turn one of the features off.",
       ("compat", "features"), _COMPAT, ("warning", "info")),
    _r("SR106", "startup-rule", "error",
       "vLLM would refuse to start with this configuration",
       """A `raise` or `assert` that vLLM executes at engine start-up would fail for this configuration. The
       message quotes vLLM's own error, the exception, the `Class.method` that raises and the releases
       that have the check.""",
       "Change the setting named in the message; see the rule's fix.",
       ("compat", "startup"), _COMPAT),
    _r("SR107", "default-changed", "info",
       "A scheduling default differs between the written-for and the target release",
       """The config names one release (image tag) but is checked against another (`--vllm`), and a
       scheduling default it does not set differs between the two, so the same file behaves differently
       after the upgrade.""",
       "Set the flag explicitly to the value you rely on.",
       ("compat", "defaults"), _COMPAT),
    _r("SR108", "abbreviated-flag", "error",
       "Abbreviated flag name (argparse prefix matching)",
       """argparse accepts a unique prefix of a long option. An ambiguous prefix stops vLLM (error); a unique
       one works only until a new release adds a flag with the same prefix (warning).""",
       "Write the full flag name.",
       ("compat", "flags"), f"{_BUILDER}, {_COMPAT}", ("error", "warning")),
    _r("SR109", "unknown-spec-method", "error",
       "Unknown speculative decoding method",
       """The `method` of `--speculative-config` is not a `SpeculativeConfig.method` value of the target
       release.""",
       "Use a known method (did-you-mean, or the release that added it).",
       ("compat", "speculative"), _COMPAT),
    _r("SR110", "approximate-version", "info",
       "The vLLM version was resolved approximately",
       """The target release was resolved approximately: `latest`, a release candidate or dev build, a
       version between known releases, or no version at all (the newest known release is used). The
       compatibility findings may not match what is deployed.""",
       "Pin an exact release in the image tag (vllm/vllm-openai:vX.Y.Z) or pass --vllm X.Y.Z.",
       ("compat", "version"), f"{_BUILDER}, sched_reader.compat.command", ("info", "warning")),
    _r("SR111", "config-false-dropped", "warning",
       "`key: false` in a vLLM --config file is silently dropped",
       """In vLLM 0.6.4 to 0.27.1 a boolean `false` in a `--config` YAML file does not become a flag (only
       true booleans do), so the option keeps its default, which is often `true`.""",
       "Write the negated key (`no-<flag>: true`) where the release has one, or remove the key.",
       ("flags", "config-file"), _BUILDER),
    _r("SR112", "gpus-below-world-size", "error",
       "Fewer GPUs requested than tensor x pipeline parallel size",
       """The deployment requests fewer GPUs (Kubernetes resource limit, compose device count, Helm value)
       than TP x PP workers per replica; vLLM fails to start its workers.""",
       "Request TP x PP GPUs, or lower --tensor-parallel-size / --pipeline-parallel-size.",
       ("hardware", "parallelism"), _BUILDER),
    _r("SR113", "shared-gpu-memory", "error",
       "Engines sharing a GPU over-commit its memory",
       """Several engines run on the same physical GPU(s). Their --gpu-memory-utilization fractions add up;
       above 1.0 the later engine cannot allocate its KV cache and does not start (error). At or below 1.0
       the sharing is reported for information.""",
       "Keep the sum of --gpu-memory-utilization of co-located engines below 1.0.",
       ("capacity", "memory", "hardware"), _BUILDER, ("error", "info")),
    _r("SR114", "unresolved-variable", "warning",
       "A flag's value is a variable the file does not define",
       """A flag is set from a shell or template variable (`$TP`, `${MAX_LEN}`) that is not assigned in the
       file; the analysis uses vLLM's default for it, which may not be what runs.""",
       "Define the variable in the file, or pass the value on the command line after `--`.",
       ("input", "flags"), _BUILDER),
    _r("SR115", "model-not-resolved", "info",
       "Model not in the catalog: capacity checks skipped",
       """The engine's model is not in sched-reader's bundled model catalog (or is not given, or is an
       unresolved variable), so the KV-cache budget, capacity and bottleneck checks (SR2xx) are skipped for
       it. Flag and version checks still run.""",
       "Pass --model-config PATH to the model's config.json (or its directory).",
       ("capacity", "model"), _LINT),
    _r("SR116", "cpu-deployment", "info",
       "No GPU requested: GPU memory, KV and speed figures are not computed",
       """The deployment requests no GPU (a zero GPU resource or device count), so it runs vLLM's CPU
       backend; sched-reader's GPU memory, KV-cache and speed model does not apply and the capacity
       findings are not computed for it.""",
       "Request GPUs (nvidia.com/gpu), or pass --gpu to analyze it as a GPU deployment.",
       ("capacity", "hardware"), _DIAG),
    _r("SR201", "kv-budget-below-max-model-len", "error",
       "KV-cache budget cannot hold one max-model-len sequence: vLLM will not start",
       """The KV-cache blocks left after weights, activations and headroom under --gpu-memory-utilization
       are fewer than one sequence of --max-model-len tokens needs (or nothing is left at all); vLLM
       refuses to start with a "max seq len is larger than the maximum number of tokens" error.""",
       "Lower --max-model-len, raise --gpu-memory-utilization, use --kv-cache-dtype fp8, or increase TP.",
       ("capacity", "kv-cache"), _DIAG),
    _r("SR202", "kv-cache-bound", "warning",
       "The KV-cache block budget binds before --max-num-seqs",
       """PagedAttention's KV budget holds fewer sequences of the workload's length than --max-num-seqs
       allows, so extra requests wait in the queue or running ones are preempted and recomputed.""",
       "Free KV memory (fp8 KV cache, higher --gpu-memory-utilization, more TP) or lower --max-num-seqs.",
       ("capacity", "kv-cache", "scheduler"), _DIAG),
    _r("SR203", "max-num-seqs-bound", "info",
       "--max-num-seqs caps the batch below what the KV cache holds",
       """Continuous batching's cap binds first: the KV cache could hold more running sequences than
       --max-num-seqs lets the scheduler batch, so decode throughput is left on the table.""",
       "Raise --max-num-seqs towards the KV capacity given in the message.",
       ("capacity", "scheduler"), _DIAG),
    _r("SR204", "token-budget-bound", "info",
       "--max-num-batched-tokens splits typical prompts into many prefill steps",
       """Chunked prefill's token budget binds: a typical prompt needs several iterations of
       --max-num-batched-tokens to prefill, which lengthens time to first token.""",
       "Raise --max-num-batched-tokens (larger chunks raise the inter-token latency of running decodes).",
       ("capacity", "scheduler"), _DIAG),
    _r("SR205", "chunked-prefill-off", "info",
       "Chunked prefill is off with a large token budget",
       """With chunked prefill off, a prompt up to --max-num-batched-tokens runs in one step, and every
       running decode stalls for that step (inter-token latency spikes).""",
       "Enable chunked prefill (--enable-chunked-prefill).",
       ("scheduler", "latency"), _DIAG),
)


def _from_module(mod) -> Rule:
    """The registry entry of a check module (``analyzers/checks``): id, name, severity, docstring."""
    short, _, full = (mod.__doc__ or "").strip().partition("\n")
    return _r(mod.ID, mod.NAME, mod.SEVERITY, short.strip(), full, mod.FIX[:1].upper() + mod.FIX[1:] + ".",
              mod.TAGS, mod.__name__)


RULES = RULES + tuple(_from_module(m) for m in CHECKS)

STARTUP_FAMILY = "SR106"

_BY_ID: dict[str, Rule] = {r.id: r for r in RULES}
_BY_NAME: dict[str, Rule] = {r.name: r for r in RULES}

_SELECTOR_RE = re.compile(r"^SR\d{0,3}$")


def _startup_rule(entry: dict) -> Rule:
    v = entry["variants"][0]
    versions = ", ".join(r for var in entry["variants"] for r in var["versions"])
    full = (f"vLLM raises {v.get('exception') or 'an error'} in {v['where']} at start-up: \"{v['message']}\" "
            f"(releases {versions}; {v.get('source_url') or 'vLLM source'}).")
    fam = _BY_ID[STARTUP_FAMILY]
    return Rule(id=f"{STARTUP_FAMILY}.{entry['id']}", name=entry["id"], default_severity=fam.default_severity,
                short=f"vLLM refuses to start: {entry['id'].replace('-', ' ')}", full=" ".join(full.split()),
                fix=entry["fix"][:1].upper() + entry["fix"][1:] + ".", tags=fam.tags, source=fam.source)


@functools.lru_cache(maxsize=1)
def _startup() -> dict[str, Rule]:
    """``sr106.<id>`` -> Rule, built on first use (the start-up rule data is read once)."""
    return {r.id.lower(): r for r in (_startup_rule(e) for e in startup_data.rules())}


def startup_rules() -> list[Rule]:
    """The vLLM start-up rules, each addressable as ``SR106.<id>`` (``SR106`` selects them all)."""
    return sorted(_startup().values(), key=lambda r: r.id)


def family(rule_id: str) -> str:
    """The family id of a rule id: ``SR106.batched-tokens-below-max-num-seqs`` -> ``SR106``."""
    return rule_id.split(".", 1)[0].upper()


def get_rule(rule_id: str) -> Rule | None:
    """The rule with this id (``SR101``, ``SR106.<id>``) or name (``unknown-flag``), or None."""
    return _BY_ID.get(rule_id.upper()) or _startup().get(rule_id.lower()) or _BY_NAME.get(rule_id.lower())


def severity_of(rule_id: str) -> Severity:
    """The default severity the registry gives ``rule_id`` (a finding may state another one its rule lists)."""
    rule = get_rule(rule_id) or _BY_ID[family(rule_id)]
    return rule.default_severity


def all_rules() -> list[Rule]:
    """Every rule, sorted by id (the order of SARIF ``tool.driver.rules``)."""
    return sorted(RULES, key=lambda r: r.id)


def rule_index(rule_id: str) -> int | None:
    """Position of ``rule_id`` in :func:`all_rules` (SARIF ``ruleIndex``)."""
    for i, r in enumerate(all_rules()):
        if r.id == rule_id:
            return i
    return None


def normalize_selector(selector: str) -> str:
    """``sr10`` -> ``SR10``, ``Unknown-Flag`` -> ``SR101``, ``all`` -> ``ALL``.

    Raises ``ValueError`` for anything that is neither ``ALL``, an id or id prefix (``SR``, ``SR1``,
    ``SR10``, ``SR101``) nor a rule name.
    """
    s = selector.strip()
    if s.upper() == "ALL":
        return "ALL"
    if s.lower() in _startup():
        return _startup()[s.lower()].id
    if _SELECTOR_RE.match(s.upper()):
        return s.upper()
    rule = _BY_NAME.get(s.lower())
    if rule is not None:
        return rule.id
    raise ValueError(f"unknown rule selector {selector!r} (use ALL, a rule id or prefix such as SR1, or a rule name)")


def matches(rule_id: str, selector: str) -> bool:
    """Whether ``rule_id`` is selected by an already normalized ``selector``: an id prefix (``SR1``,
    ``SR106`` selects every ``SR106.<id>``) or one addressable start-up rule (``SR106.<id>``) exactly."""
    if selector == "ALL":
        return True
    if "." in selector:
        return rule_id.lower() == selector.lower()
    return rule_id.upper().startswith(selector)


def render_markdown() -> str:
    """``docs/rules.md``: the rule index, then one section per rule."""
    lines = [
        "# sched-reader rules",
        "",
        "<!-- Generated from sched_reader/analyzers/rule_catalog.py by tools/gen_rules_doc.py; do not edit. -->",
        "",
        "Every finding carries a stable rule id, a severity (`error`, `warning`, `info`), the file and",
        "1-based line it points at, the key or flag as written, and a specific fix. `sched-reader lint`",
        "exits 1 when a finding at or above `--fail-on` (default `error`) remains after `--select`,",
        "`--ignore` and inline directives (`# sched-reader: ignore SR101` on the line or the comment line",
        "above; `# sched-reader: ignore-file` anywhere in the file).",
        "",
        "| id | name | default severity | summary |",
        "|---|---|---|---|",
    ]
    for r in all_rules():
        sev = " / ".join(r.all_severities())
        lines.append(f"| [{r.id}](#{r.id.lower()}) | `{r.name}` | {sev} | {r.short} |")
    for r in all_rules():
        lines += [
            "",
            f"## {r.id}",
            "",
            f"**{r.name}** ({' / '.join(r.all_severities())}): {r.short}.",
            "",
            r.full,
            "",
            f"*Fix:* {r.fix}",
            "",
            f"*Tags:* {', '.join(r.tags)}. *Emitted by:* `{r.source}`.",
        ]
        if r.id == STARTUP_FAMILY:
            lines += ["", "Each start-up rule has its own id (select or ignore one, or `SR106` for all):", "",
                      "| id | vLLM raises | fix |", "|---|---|---|"]
            lines += [f"| `{s.id}` | {s.full.split(' at start-up: ')[0].removeprefix('vLLM raises ')} | {s.fix} |"
                      for s in startup_rules()]
    return "\n".join(lines) + "\n"
