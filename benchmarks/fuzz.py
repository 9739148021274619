"""Fuzz sched-reader's commands in-process, as an attacker or a careless user would (issue 16).

Run: python benchmarks/fuzz.py [--cases N] [--seed S] [--budget-s 10] [--budget-mb 1024] [--json]

Cases, all seeded (the same seed gives the same cases):

* mutations of every file in tests/data/deploy/ (hostile values spliced into lines: 5,000-digit
  integers, NaN/inf, deep nesting, ``!!python/object`` tags, non-UTF-8 bytes, 100 KB words, negative
  and huge parallel sizes; lines duplicated, dropped, truncated), run through config, diagnose, lint
  and simulate;
* hypothesis strategies for the command line: flags of vLLM and of sched-reader with integers, floats,
  text and digit strings at and past every bound, random releases and GPU names (config, diagnose,
  lint, compat, simulate);
* hostile files: alias bombs, 10k-deep nesting, a 50 MB file, 100k services, ``!!python/object`` tags,
  non-UTF-8 bytes, /dev/zero, FIFOs, symlink loops, shell scripts with ``$(...)`` and backticks that
  would create a canary file if anything ran them.

Each case runs ``sched_reader.cli.app.main`` in this process under a wall-clock alarm (``--budget-s``)
and an address-space limit (``--budget-mb`` over the process's size before the case). Reported: cases,
exit codes, masked exceptions (the catch-all guard's "internal error" or a reader's "cannot read this
file: <Python error>"), escaped exceptions, cases over the time budget or out of memory, slow cases,
the slowest case and the peak RSS of the process.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import random
import re
import resource
import signal
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DEPLOY = ROOT / "tests" / "data" / "deploy"
MODEL = "meta-llama/Llama-3.1-8B-Instruct"
MASKED = re.compile(r"internal error:|cannot read this file: \w+Error")
SLOW_S = 2.0  # a case using more CPU seconds than this is listed as slow

# ------------------------------------------------------------------------------------------------
# Running one case
# ------------------------------------------------------------------------------------------------


class OverBudget(BaseException):
    """Raised by the alarm: not an ``Exception``, so no guard in sched-reader can swallow it."""


@dataclass
class Result:
    argv: list[str]
    code: int | None
    seconds: float  # wall clock
    err: str
    outcome: str  # ok | masked | escaped | timeout | memory
    cpu: float = 0.0  # CPU seconds of this process (robust to a machine shared with other jobs)


@dataclass
class Report:
    cases: int = 0
    codes: Counter = field(default_factory=Counter)
    by_command: Counter = field(default_factory=Counter)
    problems: list[Result] = field(default_factory=list)
    slow: list[Result] = field(default_factory=list)
    slowest: Result | None = None
    canary_created: bool = False

    def add(self, r: Result) -> None:
        self.cases += 1
        self.codes[r.code if r.outcome == "ok" else r.outcome] += 1
        self.by_command[r.argv[0] if r.argv else "-"] += 1
        if r.outcome != "ok":
            self.problems.append(r)
        if r.cpu > SLOW_S:
            self.slow.append(r)
        if self.slowest is None or r.cpu > self.slowest.cpu:
            self.slowest = r

    def count(self, outcome: str) -> int:
        return sum(1 for p in self.problems if p.outcome == outcome)

    def summary(self) -> dict:
        return {
            "cases": self.cases,
            "exit_codes": {str(k): v for k, v in sorted(self.codes.items(), key=str)},
            "by_command": dict(sorted(self.by_command.items())),
            "masked_exceptions": self.count("masked"),
            "escaped_exceptions": self.count("escaped"),
            "over_time_budget": self.count("timeout"),
            "out_of_memory": self.count("memory"),
            "slow_cases": len(self.slow),
            "slowest_cpu_s": round(self.slowest.cpu, 2) if self.slowest else 0.0,
            "slowest_wall_s": round(self.slowest.seconds, 2) if self.slowest else 0.0,
            "max_wall_s": round(max((p.seconds for p in self.slow + ([self.slowest] if self.slowest else []))), 2)
            if self.slowest else 0.0,
            "slowest_argv": _short(self.slowest.argv) if self.slowest else [],
            "peak_rss_mib": round(peak_rss_mib(), 1),
            "hostile_failures": sum(1 for p in self.problems if p.outcome.startswith("hostile")),
            "canary_created": self.canary_created,
            "problems": [{"outcome": p.outcome, "argv": _short(p.argv), "err": p.err[-300:]}
                         for p in self.problems[:20]],
        }


def _short(argv: list[str]) -> list[str]:
    return [a if len(a) <= 80 else a[:60] + f"...({len(a):,} chars)" for a in argv]


def peak_rss_mib() -> float:
    """Peak resident set of this process so far (Linux reports KiB)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _vsz() -> int:
    with open("/proc/self/statm") as fh:
        return int(fh.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")


def run_case(argv: list[str], budget_s: float, budget_mb: int) -> Result:
    """One in-process run of the CLI under a time alarm and an address-space limit."""
    from sched_reader.cli.app import main
    from sched_reader.cli.common import COMMAND_LINE

    def alarm(*_):
        raise OverBudget()

    out, err = io.StringIO(), io.StringIO()
    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    limit = _vsz() + budget_mb * (1 << 20)
    old = signal.signal(signal.SIGALRM, alarm)
    token = COMMAND_LINE.set(None)
    code: int | None = None
    outcome = "ok"
    t0 = time.perf_counter()
    c0 = time.process_time()
    try:
        resource.setrlimit(resource.RLIMIT_AS, (limit if hard == resource.RLIM_INFINITY else min(limit, hard), hard))
        signal.setitimer(signal.ITIMER_REAL, budget_s)
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            main(list(argv))
        code = 0
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    except OverBudget:
        outcome = "timeout"
    except MemoryError:
        outcome = "memory"
    except Exception as exc:  # noqa: BLE001 - an exception past the guard is a finding of the fuzzer
        outcome = "escaped"
        err.write(f"{type(exc).__name__}: {exc}")
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)
        resource.setrlimit(resource.RLIMIT_AS, (soft, hard))
        COMMAND_LINE.reset(token)
    seconds = time.perf_counter() - t0
    cpu = time.process_time() - c0
    text = err.getvalue()
    if outcome == "ok" and MASKED.search(text):
        outcome = "memory" if "MemoryError" in text else "masked"
    return Result(list(argv), code, seconds, text, outcome, cpu)


# ------------------------------------------------------------------------------------------------
# Case generators
# ------------------------------------------------------------------------------------------------

HUGE = "9" * 5000
VALUES = [
    "0", "-1", "1", "2", "7", "4096", "4097", "65536", "99999999999999999999", HUGE, "1e308", "1e-300",
    "-1e-9", "nan", "NaN", "inf", "-inf", "Infinity", "0x10", "1_000", "", " ", "true", "None", "auto",
    "32k", "1.5", "-0", "[" * 500 + "]" * 500, "{" * 200 + "}" * 200, '{"a": NaN}', "\u00e9\u4e2d",
    "a" * 100_000, "$(touch CANARY)", "`touch CANARY`", "${HOME}", "!!python/object:os.system",
]
VLLM_FLAGS = [
    "--max-num-seqs", "--max-num-batched-tokens", "--max-model-len", "--tensor-parallel-size",
    "--pipeline-parallel-size", "--data-parallel-size", "--gpu-memory-utilization", "--block-size",
    "--kv-cache-dtype", "--dtype", "--quantization", "--speculative-config", "--eplb-config",
    "--compilation-config", "--swap-space", "--cpu-offload-gb", "--seed", "--num-gpu-blocks-override",
    "--max-num-partial-prefills", "--long-prefill-token-threshold", "--enable-chunked-prefill",
    "--no-enable-prefix-caching", "--served-model-name", "--config", "--bogus-flag",
]
OWN_FLAGS = {
    "diagnose": ["--random-input-len", "--random-output-len", "--num-prompts", "--request-rate",
                 "--max-concurrency", "--gpu", "--vllm", "--model-config", "--dataset-name"],
    "simulate": ["--random-input-len", "--random-output-len", "--num-prompts", "--request-rate",
                 "--max-concurrency", "--seed", "--chunk-size", "--slo-ttft-ms", "--policy", "--compare",
                 "--gpu", "--vllm", "--workload"],
    "config": ["--gpu", "--vllm", "--model-config"],
    "lint": ["--gpu", "--vllm", "--format", "--select", "--ignore", "--fail-on"],
    "compat": ["--vllm", "--gpu"],
}
RELEASES = ["0.6.0", "0.10.1.1", "v0.19.0", "0.33.0", "0.99.0", "latest", "0." + HUGE, "vllm==0.9.2", "x"]
GPUS = ["H100", "A100-40GB", "L40S", "NVIDIA H100 80GB HBM3", "B200", "H1000", "", "\u00e9" * 300]
SPLICE = [
    f": {HUGE}", ": .nan", ": -.inf", ": 1e308", ": -1", ": 99999999999999999999", ": !!python/object:os.system x",
    ": !!int x", ": " + "[" * 2000 + "]" * 2000, ": &a [*a]", ": " + "a" * 100_000, ": $(touch CANARY)",
    ": `touch CANARY`", " --pipeline-parallel-size 50000", " --tensor-parallel-size -3",
    " --max-num-seqs " + HUGE, " --speculative-config '" + "{" * 300 + "}" * 300 + "'", "\t\x00",
    ": \"\\ud800\"", "  count: 9223372036854775807", "\n  - " * 50,
]


def deploy_files() -> list[Path]:
    return sorted(p for p in DEPLOY.rglob("*") if p.is_file() and p.name != "README.md")


def mutate(data: bytes, rng: random.Random) -> bytes:
    """A few random edits of a deploy file: hostile values spliced in, lines dropped/duplicated, bytes."""
    lines = data.split(b"\n")
    for _ in range(rng.randint(1, 4)):
        op = rng.random()
        i = rng.randrange(len(lines)) if lines else 0
        if not lines:
            lines = [b""]
        if op < 0.45:
            line = lines[i]
            cut = line.find(b":")
            cut = cut if cut > 0 and rng.random() < 0.7 else len(line)
            lines[i] = line[:cut] + rng.choice(SPLICE).encode("utf-8", "surrogatepass")
        elif op < 0.6:
            lines.insert(i, lines[i])
        elif op < 0.7:
            del lines[i]
        elif op < 0.8:
            lines = lines[: i + 1]
        elif op < 0.9:
            b = bytearray(lines[i] or b" ")
            b[rng.randrange(len(b))] = rng.choice([0xFF, 0xE9, 0x80, 0x00, 0x22, 0x27, 0x5B, 0x7B])
            lines[i] = bytes(b)
        else:
            lines[i] = lines[i] + b" " + rng.choice(VLLM_FLAGS).encode() + b" " + rng.choice(VALUES[:20]).encode()
    return b"\n".join(lines)


def mutation_cases(rng: random.Random, n: int, tmp: Path) -> list[list[str]]:
    files = deploy_files()
    out = []
    for k in range(n):
        src = files[k % len(files)]
        dst = tmp / f"m{k}{src.suffix}"
        dst.write_bytes(mutate(src.read_bytes(), rng))
        cmd = rng.choice(["config", "config", "lint", "lint", "diagnose", "simulate"])
        argv = [cmd, str(dst)]
        if cmd in ("diagnose", "simulate"):
            argv += ["--num-prompts", str(rng.choice([5, 20, 50]))]
        out.append(argv)
    return out


def flag_cases(seed: int, n: int) -> list[list[str]]:
    """Command lines drawn by hypothesis strategies (derandomized: the same seed, the same cases)."""
    from hypothesis import HealthCheck, given, settings, strategies as st

    numbers = st.one_of(
        st.integers(min_value=-(2**70), max_value=2**70).map(str),
        st.floats(allow_nan=True, allow_infinity=True).map(repr),
        st.sampled_from(VALUES),
        st.text(min_size=0, max_size=30),
        st.integers(min_value=1, max_value=6000).map(lambda d: "9" * d),
    )
    vflag = st.tuples(st.sampled_from(VLLM_FLAGS), numbers)
    command = st.sampled_from(["config", "diagnose", "lint", "compat", "simulate"])
    drawn: list[list[str]] = []

    @settings(max_examples=n, derandomize=True, database=None, deadline=None,
              suppress_health_check=list(HealthCheck))
    @given(cmd=command, own=st.lists(st.tuples(st.integers(0, 20), numbers), max_size=3),
           vflags=st.lists(vflag, max_size=4), release=st.sampled_from(RELEASES), gpu=st.sampled_from(GPUS),
           salt=st.integers(0, seed))
    def draw(cmd, own, vflags, release, gpu, salt):
        argv = [cmd]
        names = OWN_FLAGS[cmd]
        for i, v in own:
            argv += [names[i % len(names)], v]
        if cmd == "compat":
            argv += ["--vllm", release]
            if vflags:
                argv += ["--flag", vflags[0][0]]
            drawn.append(argv)
            return
        if cmd in ("diagnose", "simulate") and "--num-prompts" not in argv:
            argv += ["--num-prompts", "20"]
        argv += ["--vllm", release, "--gpu", gpu] if salt % 3 == 0 else []
        argv += ["--", "vllm", "serve", MODEL]
        for f, v in vflags:
            argv += [f, v]
        drawn.append(argv)

    draw()
    return drawn[:n]


def hostile_files(tmp: Path) -> list[tuple[str, Path]]:
    """The adversarial files of issue 16, written under ``tmp`` (the 50 MB file is sparse)."""
    files: list[tuple[str, Path]] = []

    def put(name: str, data: bytes | str) -> Path:
        p = tmp / name
        p.write_bytes(data if isinstance(data, bytes) else data.encode())
        return p

    bomb = "a: &a [x, x, x, x, x, x, x, x, x]\n" + "".join(
        f"{chr(98 + i)}: &{chr(98 + i)} [*{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}, "
        f"*{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}]\n" for i in range(8))
    files.append(("alias bomb", put("bomb.yaml", f"model: {MODEL}\n" + bomb)))
    files.append(("10k-deep nesting", put("deep.yaml", "model: m\nx: " + "[" * 10000 + "]" * 10000 + "\n")))
    files.append(("10k-deep block nesting", put("deep2.yaml", "x:\n" + "".join(" " * i + "- \n" for i in range(1, 10000)))))
    big = tmp / "big.yaml"
    with open(big, "wb") as fh:
        fh.write(b"model: m\n")
        fh.truncate(50 * 1024 * 1024)
    files.append(("50 MB file", big))
    files.append(("100k services", put("docker-compose.yml", "services:\n" + "".join(
        f"  s{i}:\n    image: vllm/vllm-openai:v0.10.0\n    command: --model {MODEL}\n" for i in range(100_000)))))
    files.append(("100k engines (k8s documents)", put("many.yaml", "".join(
        f"---\napiVersion: v1\nkind: Pod\nmetadata: {{name: p{i}}}\nspec:\n  containers:\n"
        f"    - image: vllm/vllm-openai:v0.10.0\n      args: [--model, {MODEL}]\n" for i in range(20_000)))))
    files.append(("!!python/object tag", put("tag.yaml", "model: !!python/object/apply:os.system [\"touch CANARY\"]\n")))
    files.append(("non-UTF-8 bytes", put("latin1.yaml", b"model: caf\xe9\nmax-num-seqs: 8\n")))
    canary = tmp / "CANARY"
    files.append(("shell $(...) and backticks", put("serve.sh",
                  f"#!/bin/sh\nM=$(touch {canary})\nT=`touch {canary}`\nvllm serve {MODEL} --served-model-name \"$(touch {canary})\" "
                  f"--max-num-seqs `touch {canary}`\n")))
    if os.path.exists("/dev/zero"):
        files.append(("/dev/zero", Path("/dev/zero")))
        link = tmp / "zero.yaml"
        link.symlink_to("/dev/zero")
        files.append(("symlink to /dev/zero", link))
    fifo = tmp / "fifo.yaml"
    os.mkfifo(fifo)
    files.append(("FIFO", fifo))
    (tmp / "loop_a.yaml").symlink_to(tmp / "loop_b.yaml")
    (tmp / "loop_b.yaml").symlink_to(tmp / "loop_a.yaml")
    files.append(("symlink loop", tmp / "loop_a.yaml"))
    unreadable = put("unreadable.yaml", f"model: {MODEL}\n")
    unreadable.chmod(0)
    files.append(("unreadable file", unreadable))
    return files


def hostile_cases(tmp: Path) -> list[tuple[str, list[str]]]:
    """Every hostile file through config, lint and diagnose, and as a workload, trace and model config."""
    out = []
    for label, path in hostile_files(tmp):
        for cmd in ("config", "lint", "diagnose"):
            out.append((label, [cmd, str(path)]))
        out.append((label, ["diagnose", "--model-config", str(path), "--", "vllm", "serve", "x/y"]))
        out.append((label, ["simulate", "--workload", str(path), "--", "vllm", "serve", MODEL]))
        trace = tmp / f"trace_{abs(hash(label)) % 10**8}.yaml"
        trace.write_text(f"trace: {path}\n")
        out.append((label, ["simulate", "--workload", str(trace), "--", "vllm", "serve", MODEL]))
    return out


# ------------------------------------------------------------------------------------------------
# Driver
# ------------------------------------------------------------------------------------------------


def run(cases: int = 300, seed: int = 0, budget_s: float = 10.0, budget_mb: int = 1024,
        hostile: bool = True, progress: bool = False) -> Report:
    """Run ``cases`` seeded cases (half mutations, half hypothesis command lines) plus the hostile files."""
    rng = random.Random(seed)
    report = Report()
    with tempfile.TemporaryDirectory(prefix="sr-fuzz-") as d:
        tmp = Path(d)
        cwd = os.getcwd()
        os.chdir(tmp)  # a relative `touch CANARY` would land here
        try:
            n_mut = cases // 2
            argvs = mutation_cases(rng, n_mut, tmp) + flag_cases(seed, cases - n_mut)
            labelled = [("", a) for a in argvs] + (hostile_cases(tmp) if hostile else [])
            for k, (label, argv) in enumerate(labelled):
                r = run_case(argv, budget_s, budget_mb)
                one_line = r.code != 2 or len(r.err.strip().splitlines()) == 1
                if label and r.outcome == "ok" and (r.code not in (0, 1, 2) or not one_line or r.cpu > 2.0):
                    r.outcome = f"hostile:{label}"  # must be refused (exit 2, one line) or read, within 2 s
                report.add(r)
                if progress and k % 100 == 0:
                    print(f"  {k}/{len(labelled)} cases, {report.count('masked')} masked, "
                          f"peak RSS {peak_rss_mib():.0f} MiB", file=sys.stderr)
            report.canary_created = any(p.name == "CANARY" for p in tmp.rglob("CANARY")) or Path("CANARY").exists()
        finally:
            os.chdir(cwd)
    return report


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cases", type=int, default=1000, help="mutation + command-line cases (hostile files added)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--budget-s", type=float, default=10.0, help="wall-clock budget per case (s)")
    ap.add_argument("--budget-mb", type=int, default=1024, help="address space per case over the baseline (MiB)")
    ap.add_argument("--json", action="store_true", help="print the report as JSON")
    ap.add_argument("--no-hostile", action="store_true", help="skip the hostile files (run them once per seed set)")
    args = ap.parse_args()
    t0 = time.perf_counter()
    report = run(args.cases, args.seed, args.budget_s, args.budget_mb, hostile=not args.no_hostile, progress=True)
    s = report.summary()
    s["wall_s"] = round(time.perf_counter() - t0, 1)
    if args.json:
        print(json.dumps(s, indent=1))
        return
    for k, v in s.items():
        if k != "problems":
            print(f"{k:20} {v}")
    for p in s["problems"]:
        print(f"  {p['outcome']}: {' '.join(p['argv'])[:200]}\n      {p['err'][:300]}")


if __name__ == "__main__":
    main()
