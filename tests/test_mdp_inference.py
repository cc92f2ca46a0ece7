"""PAQMAN inference (docs/paqman.md): likelihood, score equations, MLE with confidence
intervals, polynomial congestion-control variant and the online rate estimate."""

import numpy as np
import pytest
from aqmlab.mdp import RateGrid
from aqmlab.mdp.inference import (
    RateFilter,
    aimd_coefficients,
    fit_gamma_aimd,
    fit_polynomial_cc,
    loglik,
    propagate_rate,
    score,
    simulate_gamma_aimd,
)


def test_coefficients_reproduce_the_simulated_rates():
    x, act, rates = simulate_gamma_aimd(500, 2.0, 30.0, rng=np.random.default_rng(0))
    c, d = aimd_coefficients(act)
    assert np.allclose(c * 30.0 + d, rates, rtol=1e-12)
    assert propagate_rate(30.0, act[:-1]) == pytest.approx(rates[-1], rel=1e-12)


def test_score_is_the_gradient_of_the_loglik_and_vanishes_at_the_mle():
    x, act, _ = simulate_gamma_aimd(800, 1.5, 25.0, rng=np.random.default_rng(1))
    a0, r0 = 1.3, 22.0
    h = 1e-6
    num_a = (loglik(a0 + h, r0, x, act) - loglik(a0 - h, r0, x, act)) / (2 * h)
    num_r = (loglik(a0, r0 + h, x, act) - loglik(a0, r0 - h, x, act)) / (2 * h)
    sa, sr = score(a0, r0, x, act)
    assert sa == pytest.approx(num_a, rel=1e-5)
    assert sr == pytest.approx(num_r, rel=1e-5)
    fit = fit_gamma_aimd(x, act)
    sa, sr = score(fit.alpha, fit.r1, x, act)
    assert abs(sa) < 1e-6 * len(x) and abs(sr) < 1e-8 * len(x)
    # it is a maximum
    assert fit.loglik >= loglik(fit.alpha * 1.01, fit.r1, x, act)
    assert fit.loglik >= loglik(fit.alpha, fit.r1 * 1.01, x, act)


@pytest.mark.parametrize("alpha,r1", [(2.0, 40.0), (0.8, 15.0)])
def test_mle_recovers_parameters_within_stated_intervals(alpha, r1):
    # One long sequence: the truth must lie within 3.5 standard errors (a 0.05 % two-sided
    # chance of a false failure under asymptotic normality).
    x, act, rates = simulate_gamma_aimd(6000, alpha, r1, rng=np.random.default_rng(7))
    fit = fit_gamma_aimd(x, act)
    assert abs(fit.alpha - alpha) < 3.5 * fit.se_alpha
    assert abs(fit.r1 - r1) < 3.5 * fit.se_r1
    assert fit.se_alpha < 0.1 * alpha  # and the intervals are informative
    b = 0.5 if act[-1] == 1 else None
    expect = rates[-1] * b if b else rates[-1] + 1.0
    # the propagated current rate is as accurate as r1 (scaled by c_n <= 1)
    assert abs(fit.current_rate - expect) < 3.5 * fit.se_r1


def test_wald_interval_coverage():
    # 120 replications of the 95 % interval; coverage should be 0.95 (binomial SD 0.02).
    # Accept [0.87, 1.0]: 4 SD below, allowing small-sample bias of the Wald interval.
    hits = np.zeros(2)
    reps = 120
    for s in range(reps):
        x, act, _ = simulate_gamma_aimd(800, 2.0, 40.0, rng=np.random.default_rng(1000 + s))
        ci = fit_gamma_aimd(x, act).ci(0.95)
        hits += [ci["alpha"][0] <= 2.0 <= ci["alpha"][1], ci["r1"][0] <= 40.0 <= ci["r1"][1]]
    cov = hits / reps
    assert np.all(cov >= 0.87), cov


def test_polynomial_variant_recovers_aimd_coefficients():
    # F(r) = f0 + f1 r (truth 1 + r), G(r) = g1 r (truth r / 2); 3.5-SE tolerance.
    x, act, _ = simulate_gamma_aimd(2500, 2.0, 40.0, rng=np.random.default_rng(3))
    fit = fit_polynomial_cc(x, act, deg_f=1, deg_g=1)
    base = fit_gamma_aimd(x, act)
    assert fit.loglik >= base.loglik - 1e-6  # the AIMD model is nested
    for name, truth in (("f0", 1.0), ("f1", 1.0), ("g1", 0.5), ("alpha", 2.0)):
        est = {"f0": fit.f[0], "f1": fit.f[1], "g1": fit.g[0], "alpha": fit.alpha}[name]
        assert abs(est - truth) < 3.5 * fit.se[name], (name, est, fit.se[name])


def test_polynomial_variant_detects_a_different_increase():
    # Truth: admit r -> 1.02 r + 0.5 (a faster-than-Reno increase); the fit must see f1 > 1.
    rng = np.random.default_rng(4)
    x, act, _ = simulate_gamma_aimd(
        2500, 2.0, 30.0, rng=rng, admit_map=lambda r: 1.02 * r + 0.5, drop_map=lambda r: 0.6 * r
    )
    fit = fit_polynomial_cc(x, act, deg_f=1, deg_g=1)
    assert abs(fit.f[1] - 1.02) < 3.5 * fit.se["f1"]
    assert abs(fit.g[0] - 0.6) < 3.5 * fit.se["g1"]
    assert fit.f[1] - 1.0 > 3 * fit.se["f1"]


def test_rate_filter_tracks_the_current_rate():
    grid = RateGrid(unit_pps=2.0, size=60)
    x, act, rates = simulate_gamma_aimd(
        600, 2.0, 40.0, a=2.0, drop_above=90.0, rng=np.random.default_rng(9)
    )
    f = RateFilter(grid, alpha=2.0)
    errs = []
    for i in range(len(x)):
        est = f.update(x[i], int(act[i]))
        if i > 100:
            truth = rates[i + 1] if i + 1 < len(x) else None
            if truth is not None:
                errs.append(abs(est - truth) / truth)
    # after the transient the posterior mean is within 10 % on average (grid step 2 pkt/s
    # at rates 20-90 pkt/s; observation noise of gamma shape 2)
    assert np.mean(errs) < 0.10
