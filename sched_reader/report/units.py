"""Number formatting shared by the text reports: durations in a readable unit, rates, integers.

Text output only: JSON keeps raw numbers under unit-suffixed keys (``mean_ttft_ms``, ``output_throughput``).
Every function returns ``"n/a"`` for ``None`` or NaN, so callers need no guard of their own.

* :func:`fmt_duration_ms` picks the unit from the magnitude: under 1 s ``"236.9 ms"``, from 1 s ``"2.37 s"``,
  from 10 min ``"13.5 min"``. The unit is chosen after rounding, so 999.96 ms reads ``"1.00 s"``, never
  ``"1,000.0 ms"``.
* :func:`fmt_rate` gives ``"3,224 tok/s"``, ``"15.4 req/s"``, ``"0.93 req/s"``: about three significant
  figures unless ``digits`` is given.
* :func:`fmt_int` gives ``"1,234,567"``.
"""

from __future__ import annotations

import math

NA = "n/a"

_MS_PER_S = 1000.0
_MS_PER_MIN = 60_000.0
_MIN_SECONDS = 600.0  # 10 minutes: from here on, minutes


def _missing(x: object) -> bool:
    return x is None or (isinstance(x, float) and math.isnan(x))


def fmt_duration_ms(ms: float | None, ms_digits: int = 1) -> str:
    """A duration given in milliseconds, in ms (< 1 s), s with two decimals (< 10 min) or min.

    ``ms_digits``: decimals in the millisecond range (1 by default; 2 suits per-token latencies).
    """
    if _missing(ms):
        return NA
    ms = float(ms)  # type: ignore[arg-type]
    if math.isinf(ms):
        return "inf" if ms > 0 else "-inf"
    sign = "-" if ms < 0 else ""
    a = abs(ms)
    if round(a, ms_digits) < _MS_PER_S:
        return f"{sign}{a:,.{ms_digits}f} ms"
    seconds = a / _MS_PER_S
    if round(seconds, 2) < _MIN_SECONDS:
        return f"{sign}{seconds:,.2f} s"
    return f"{sign}{a / _MS_PER_MIN:,.1f} min"


def _auto_digits(x: float) -> int:
    a = abs(x)
    if round(a, 1) >= 100:
        return 0
    if round(a, 2) >= 10:
        return 1
    return 2


def fmt_rate(x: float | None, unit: str, digits: int | None = None) -> str:
    """A rate (or any measured quantity) with thousands separators and ``unit`` after a space.

    ``digits`` None: 0 decimals from 100, 1 from 10, else 2 (about three significant figures).
    An empty ``unit`` gives the number alone.
    """
    if _missing(x):
        return NA
    x = float(x)  # type: ignore[arg-type]
    if math.isinf(x):
        text = "inf" if x > 0 else "-inf"
    else:
        d = _auto_digits(x) if digits is None else digits
        text = f"{x:,.{d}f}"
    return f"{text} {unit}" if unit else text


def fmt_int(n: int | float | None) -> str:
    """An integer with thousands separators (a float is rounded to the nearest, halves away from zero)."""
    if _missing(n):
        return NA
    if isinstance(n, float):
        if math.isinf(n):
            return "inf" if n > 0 else "-inf"
        n = math.copysign(math.floor(abs(n) + 0.5), n)  # half away from zero, not to even
    return f"{int(n):,}"  # type: ignore[arg-type]
