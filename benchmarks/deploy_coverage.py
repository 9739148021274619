"""How well the real public deploy files in tests/data/deploy/ are read (issue 10).

Usage: python benchmarks/deploy_coverage.py
Prints (1) files read fully right / total, against the hand-read expectations in
tests/readers/test_readers_real_deploy.py (engines, model, role, TP/PP, GPU count and type, release, flags);
(2) exit codes of `config`, `diagnose` and `lint` on every file of the tree (2 = the file was refused).
"""

from __future__ import annotations

import importlib.util
import sys
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def _cases():
    spec = importlib.util.spec_from_file_location("real_deploy", ROOT / "tests" / "readers" / "test_readers_real_deploy.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _right(mod, rel: str) -> tuple[bool, str]:
    try:
        mod.test_real_file_is_read_as_it_states(rel)
        return True, ""
    except AssertionError as exc:
        return False, str(exc).splitlines()[0][:100]


def main() -> int:
    from typer.testing import CliRunner

    from sched_reader.cli.app import app

    mod = _cases()
    right = [(rel, *_right(mod, rel)) for rel in sorted(mod.CASES)]
    ok = sum(1 for _, r, _ in right if r)
    print(f"files read fully right: {ok} / {len(right)} (engines: {sum(len(v) for v in mod.CASES.values())})")
    for rel, r, why in right:
        if not r:
            print(f"  wrong: {rel}: {why}")
    files = mod._all_files()
    runner = CliRunner()
    codes: dict[str, Counter] = {c: Counter() for c in ("config", "diagnose", "lint")}
    refused = []
    for f in files:
        for cmd in codes:
            r = runner.invoke(app, [cmd, str(f)])
            codes[cmd][r.exit_code] += 1
            if r.exit_code == 2:
                refused.append(f"{cmd} {f.relative_to(ROOT)}: {(r.stderr if hasattr(r, 'stderr') else r.output)[:120]}")
    print(f"{len(files)} files; exit codes: " + "; ".join(
        f"{c} " + ", ".join(f"{k}: {v}" for k, v in sorted(n.items())) for c, n in codes.items()))
    for line in refused:
        print("  refused:", line)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
