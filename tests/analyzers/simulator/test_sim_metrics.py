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
