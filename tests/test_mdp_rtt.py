"""PAQMAN single flow with RTT (docs/paqman.md): generators, Prop. V.2 via SciPy expm,
the banded uniformization used by default, and a Monte Carlo check of the interval kernel."""

import numpy as np
import pytest
from aqmlab.mdp import interval_kernel, rtt_model, served_pmf
from aqmlab.mdp.rtt import birth_death_generator, pure_death_generator, uniformized_windows
from scipy.linalg import expm


def test_generators_rows_sum_to_zero_and_shape():
    q = birth_death_generator(3.0, 5.0, 6)
    assert np.allclose(q.sum(axis=1), 0)
    assert q[0, 1] == 3.0 and q[6, 5] == 5.0 and q[6, 6] == -5.0  # births blocked at B
    q0 = pure_death_generator(5.0, 6)
    assert q0[0, 0] == 0 and q0[3, 2] == 5.0 and q0[3, 3] == -5.0


def test_prop_v2_literal_formula_matches_interval_kernel():
    lam, mu, r, b = 60.0, 80.0, 0.02, 15
    qm, q0 = birth_death_generator(lam, mu, b), pure_death_generator(mu, b)
    literal = expm(qm * r) @ (lam * np.linalg.inv(lam * np.eye(b + 1) - q0))
    p, occ = interval_kernel(lam, mu, r, b)
    assert np.abs(p - literal).max() < 1e-12
    assert np.allclose(p.sum(axis=1), 1, atol=1e-12)
    assert np.allclose(occ, r, atol=1e-12)  # integrand 1: the window lasts R from every state


def test_uniformization_agrees_with_expm():
    lams = np.array([10.0, 50.0, 120.0])
    mu, r, b = 80.0, 0.03, 25
    f = np.vstack([np.linspace(-1, 1, b + 1)] * 3)
    win, occ = uniformized_windows(lams, mu, r, b, f)
    for i, la in enumerate(lams):
        q = birth_death_generator(la, mu, b)
        assert np.abs(win[i] - expm(q * r)).max() < 1e-12
        big = np.zeros((b + 2, b + 2))
        big[: b + 1, : b + 1], big[: b + 1, b + 1] = q * r, f[i] * r
        assert np.abs(occ[i] - expm(big)[: b + 1, b + 1]).max() < 1e-12
    a = rtt_model(100.0, 0.03, 0.02, buffer=20, grid=4, method="expm")
    u = rtt_model(100.0, 0.03, 0.02, buffer=20, grid=4)
    assert np.abs(a.kernel - u.kernel).max() < 1e-10
    assert np.abs(a.reward - u.reward).max() < 1e-8


def test_zero_rtt_kernel_is_negative_binomial_with_shape_one():
    lam, mu, b = 40.0, 100.0, 12
    p, _ = interval_kernel(lam, mu, 0.0, b)
    pmf = served_pmf(1.0, lam, mu, b)
    q = 7
    assert np.allclose(p[q, 1 : q + 1][::-1], pmf[:q], atol=1e-14)
    assert p[q, 0] == pytest.approx(1 - pmf[:q].sum(), abs=1e-13)


def test_interval_kernel_against_monte_carlo():
    # Simulate the birth-death queue for R, then pure deaths for Y ~ Exp(lambda).
    # 40k paths: each probability has SE <= 0.0025; 4.5 SE tolerance.
    lam, mu, r, b, q_start = 90.0, 100.0, 0.03, 10, 3
    p, _ = interval_kernel(lam, mu, r, b)
    rng = np.random.default_rng(5)
    n = 40_000
    counts = np.zeros(b + 1)
    for _ in range(n):
        q, t = q_start, 0.0
        while True:
            rate = (lam if q < b else 0.0) + (mu if q > 0 else 0.0)
            t += rng.exponential(1 / rate)
            if t > r:
                break
            q += 1 if rng.random() * rate < (lam if q < b else 0.0) else -1
        y = rng.exponential(1 / lam)
        served = rng.poisson(mu * y) if q > 0 else 0  # deaths while non-empty
        counts[max(q - served, 0)] += 1
    emp = counts / n
    se = np.sqrt(p[q_start] * (1 - p[q_start]) / n)
    assert np.all(np.abs(emp - p[q_start]) < 4.5 * se + 1e-3)


def test_rtt_model_transitions_and_tau():
    m = rtt_model(100.0, 0.03, 0.02, buffer=15, grid=5)
    for pa in m.to_sparse():
        assert np.abs(np.asarray(pa.sum(axis=1)).ravel() - 1).max() < 1e-12
    lam = m.grid.rates_pps
    assert np.allclose(m.tau[0, :, 0], 0.02 + 1 / lam)  # eq. (8)
    # default reward: admitting in an empty system earns the packet plus window admissions
    assert np.all(m.reward[0, :, 0] > 1.0)
