"""Metric computation against independent references."""

import numpy as np

from sched_reader.analyzers.simulator.metrics import weighted_percentiles


def test_weighted_percentiles_equal_numpy_on_expanded_list():
    rng = np.random.default_rng(0)
    for _ in range(50):
        v = rng.integers(1, 1000, rng.integers(1, 20))
        w = rng.integers(0, 6, v.size)
        w[0] = max(w[0], 1)
        expanded = np.repeat(v, w)
        got = weighted_percentiles(v, w, (50, 90, 99))
        assert np.allclose(got, np.percentile(expanded, (50, 90, 99)), rtol=0, atol=1e-9)


def test_unweighted_percentiles_are_numpys_floats_bit_for_bit():
    """Without counts it replaces np.percentile on the simulator's and diagnose's paths: every float the same
    (integer token lengths and float ns/ms values, odd and even sizes, the --metric-percentiles kind of q)."""
    rng = np.random.default_rng(1)
    qs = (50, 90, 99, 99.9, 12.5, 0, 100, 33.3)
    for size in (1, 2, 3, 10, 501, 1000, 4097):
        for v in (rng.integers(1, 30_000, size), rng.lognormal(3.0, 1.5, size), rng.integers(1, 10**12, size)):
            got = weighted_percentiles(v, None, qs)
            want = [float(x) for x in np.percentile(v, qs)]
            assert got == want, (size, v.dtype)
