"""CPU time of the per-request chat-template work vLLM's OpenAI server does, per release family.

Not part of the package (needs jinja2, which sched-reader does not depend on). It reproduces, with jinja2's
public API, the template work a /v1/chat/completions request pays in each release family (read in the
release wheels' vllm/entrypoints/chat_utils.py, ``pip download vllm==X --no-deps``):

  render       every release: the compiled template (cached per template) rendered for one conversation
  detect       0.6.5-0.9.1: ``_detect_content_format`` without a cache: ``Environment.parse`` of the
               template, then ``find_all(For)`` over the tree twice (message loops, then content loops;
               none found in a plain-text template, so both walks run to the end)
  kwargs       exactly 0.11.0: ``resolve_chat_template_kwargs`` builds a sandboxed Environment, parses the
               template and runs ``jinja2.meta.find_undeclared_variables`` (a code-generation pass over the
               tree) on every request; 0.11.1 caches it
  (0.6.4 and older, 0.9.2-0.10.2 and 0.11.1+ pay only the render: the detection is lru-cached there)

Figures are CPU time (``time.process_time``); detect and kwargs are timed in alternation, round by
round, and their ratio is the median over rounds, so that load on a shared machine cancels.
models/cost/frontend.py uses only the RATIO kwargs / detect: the absolute time of the detect work comes
from a measured vLLM server (see frontend.py), since this machine's CPU is not a serving host's.

Run:  python3 tools/measure_chat_template_cost.py TEMPLATE.jinja [...]
"""

from __future__ import annotations

import sys
import time


def _cpu_ms(fn, n: int) -> float:
    """Mean CPU milliseconds per call of ``fn`` over ``n`` calls."""
    t0 = time.process_time()
    for _ in range(n):
        fn()
    return 1e3 * (time.process_time() - t0) / n


def measure(text: str, rounds: int = 21, n: int = 10) -> dict[str, float]:
    """Milliseconds per request of each piece of template work for one chat template ``text``: the best
    round of each, and the median over rounds of the kwargs / detect ratio measured in the SAME round (the
    two are interleaved, so a busy machine slows both alike)."""
    import jinja2
    import jinja2.ext
    import jinja2.meta
    import jinja2.nodes
    import jinja2.sandbox

    def env():
        return jinja2.sandbox.ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True,
                                                            extensions=[jinja2.ext.loopcontrols])

    e = env()
    tmpl = e.from_string(text)
    msgs = [{"role": "user", "content": "Explain the difference between a list and a tuple in Python. " * 10}]

    def detect():       # 0.6.5-0.9.1: parse, then two walks of the tree
        tree = e.parse(text)
        list(tree.find_all(jinja2.nodes.For))
        list(tree.find_all(jinja2.nodes.For))

    def kwargs():       # 0.11.0: a fresh sandboxed environment, parse, undeclared variables
        jinja2.meta.find_undeclared_variables(env().parse(text))

    def render():       # every release
        tmpl.render(messages=msgs, add_generation_prompt=True, bos_token="", tools=None)

    d, k, r, ratio = [], [], [], []
    for _ in range(rounds):
        d.append(_cpu_ms(detect, n))
        k.append(_cpu_ms(kwargs, n))
        r.append(_cpu_ms(render, 20 * n))
        ratio.append(k[-1] / d[-1])
    ratio.sort()
    return {"chars": float(len(text)), "detect": min(d), "kwargs": min(k), "render": min(r),
            "kwargs_over_detect": ratio[len(ratio) // 2], "ratio_lo": ratio[len(ratio) // 4],
            "ratio_hi": ratio[(3 * len(ratio)) // 4]}


def main(argv: list[str]) -> int:
    if not argv:
        print(__doc__.strip().splitlines()[-1])
        return 2
    import jinja2

    print(f"jinja2 {jinja2.__version__}, python {sys.version.split()[0]}; CPU ms per request (best round of 21)")
    print(f"{'template':24s} {'chars':>6s} {'render':>7s} {'detect':>7s} {'kwargs':>7s}  kwargs/detect (median, IQR)")
    for path in argv:
        m = measure(open(path, encoding="utf-8").read())
        name = path.rsplit("/", 1)[-1]
        print(f"{name:24s} {int(m['chars']):6d} {m['render']:7.3f} {m['detect']:7.2f} {m['kwargs']:7.2f}"
              f"  {m['kwargs_over_detect']:5.2f} ({m['ratio_lo']:.2f}-{m['ratio_hi']:.2f})")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
