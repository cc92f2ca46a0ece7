"""aqmlab.stats: mean, standard deviation and Student-t confidence intervals across seeds,
against closed forms and scipy's one-sample t-test interval."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from aqmlab.stats import across_seeds, mean_ci, metric_columns, override_columns
from scipy import stats as st


def test_two_values_closed_form():
    # n = 2: t_{0.975, 1} = 12.7062047361747; s = |a - b| / sqrt(2); half = t s / sqrt(2)
    r = mean_ci([1.0, 3.0])
    assert r.mean == 2.0 and r.n == 2
    assert r.std == pytest.approx(math.sqrt(2.0), rel=1e-15)
    assert r.half_width == pytest.approx(12.7062047361747, rel=1e-12)
    assert (r.ci_low, r.ci_high) == pytest.approx((2.0 - 12.7062047361747, 2.0 + 12.7062047361747))


@pytest.mark.parametrize("n", [3, 8, 30])
@pytest.mark.parametrize("confidence", [0.9, 0.95, 0.99])
def test_interval_matches_scipy_ttest(n, confidence):
    x = np.random.default_rng(n).normal(5.0, 2.0, n)
    r = mean_ci(x, confidence)
    ci = st.ttest_1samp(x, 0.0).confidence_interval(confidence)
    assert r.mean == pytest.approx(x.mean(), rel=1e-13)
    assert r.std == pytest.approx(x.std(ddof=1), rel=1e-13)
    assert (r.ci_low, r.ci_high) == pytest.approx((ci.low, ci.high), rel=1e-12)


def test_degenerate_samples():
    one = mean_ci([4.0, float("nan"), None])
    assert (one.n, one.mean) == (1, 4.0) and math.isnan(one.std) and math.isnan(one.ci_low)
    none = mean_ci([])
    assert none.n == 0 and math.isnan(none.mean)
    same = mean_ci([2.0, 2.0, 2.0])
    assert (same.std, same.ci_low, same.ci_high) == (0.0, 2.0, 2.0)
    with pytest.raises(ValueError, match="confidence = 1.5"):
        mean_ci([1.0, 2.0], 1.5)


def _table():
    # a results table as aqmlab.sweep writes it: run_key, overrides, seed, error, wall_s, metrics
    return pd.DataFrame(
        {
            "run_key": list("abcdefg"),
            "aqm.type": ["codel", "codel", "codel", "pie", "pie", "pie", "pie"],
            "dumbbell.buffer": [100] * 7,
            "seed": [1, 2, 3, 1, 2, 3, 4],
            "error": [None, None, None, None, None, None, "boom"],
            "wall_s": [0.1] * 7,
            "links.bottleneck.utilization": [0.9, 0.8, 0.7, 0.95, 0.97, 0.99, np.nan],
            "fairness.jain": [1.0, 0.5, 0.75, 1.0, 1.0, 1.0, np.nan],
        }
    )


def test_columns_of_a_results_table():
    df = _table()
    assert override_columns(df) == ["aqm.type", "dumbbell.buffer"]
    assert metric_columns(df) == ["links.bottleneck.utilization", "fairness.jain"]


def test_across_seeds_groups_by_the_overrides_and_leaves_out_failed_runs():
    s = across_seeds(_table())
    assert list(s.columns) == [
        "aqm.type", "dumbbell.buffer", "metric", "n", "mean", "std", "ci_low", "ci_high",
    ]  # fmt: skip
    assert len(s) == 4
    row = s[(s["aqm.type"] == "codel") & (s["metric"] == "links.bottleneck.utilization")].iloc[0]
    ref = mean_ci([0.9, 0.8, 0.7])
    assert row["n"] == 3 and row["mean"] == pytest.approx(0.8)
    assert (row["ci_low"], row["ci_high"]) == pytest.approx((ref.ci_low, ref.ci_high))
    pie = s[(s["aqm.type"] == "pie") & (s["metric"] == "fairness.jain")].iloc[0]
    assert pie["n"] == 3, "the failed run is left out"
    whole = across_seeds(_table(), ["fairness.jain"], by=[])
    assert len(whole) == 1 and whole["n"][0] == 6
    with pytest.raises(ValueError, match="column = 'nope'"):
        across_seeds(_table(), ["nope"])
