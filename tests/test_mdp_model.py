"""PAQMAN negligible-RTT SMDP (docs/paqman.md): Lemma III.1, Prop. III.2, transformation,
solver against the average-reward LP, reward variants and the policy's shape."""

import numpy as np
import pytest
from aqmlab.mdp import (
    ADMIT,
    DROP,
    negligible_rtt_model,
    policy_gain,
    rtt_model,
    served_pmf,
    solve,
    solve_lp,
    transform,
)
from aqmlab.mdp.model import RateGrid, lemma_iii1
from scipy import special

MU10 = 10e6 / 8 / 1500  # 10 Mbit/s of 1500-byte packets


@pytest.mark.parametrize(
    "k,alpha,lam,mu",
    [(1, 2.0, 3.0, 1.0), (3, 2.0, 4.0, 2.0), (5, 0.7, 1.0, 3.0), (2, 5.0, 10.0, 4.0)],
)
def test_lemma_iii1_against_monte_carlo(k, alpha, lam, mu):
    # P(S_k < X), S_k ~ Gamma(k, mu), X ~ Gamma(alpha, lam). 200k samples: binomial standard
    # error <= 0.0012; 4.5 SE keeps the false-failure rate below 1e-5 per case.
    rng = np.random.default_rng(11 + k)
    n = 200_000
    s = rng.gamma(k, 1 / mu, n)
    x = rng.gamma(alpha, 1 / lam, n)
    p_mc = np.mean(s < x)
    p = lemma_iii1(k, alpha, lam, mu)
    se = np.sqrt(p * (1 - p) / n)
    assert abs(p - p_mc) < 4.5 * se + 1e-12
    # and the closed form's first case
    assert lemma_iii1(1, alpha, lam, mu) == pytest.approx(
        1 - (lam / (lam + mu)) ** alpha, rel=1e-12
    )


def test_served_pmf_is_negative_binomial_and_matches_lemma():
    alpha, lam, mu = 2.0, 3.0, 2.0
    pmf = served_pmf(alpha, lam, mu, 60)
    pi = lam / (lam + mu)
    j = np.arange(61)
    manual = (
        np.exp(special.gammaln(alpha + j) - special.gammaln(alpha) - special.gammaln(j + 1))
        * pi**alpha
        * (1 - pi) ** j
    )
    assert np.allclose(pmf, manual, rtol=1e-12, atol=0)
    # NB(k) = P(S_k < X) - P(S_{k+1} < X)  (Prop. III.2)
    for k in range(6):
        assert pmf[k] == pytest.approx(
            lemma_iii1(k, alpha, lam, mu) - lemma_iii1(k + 1, alpha, lam, mu), abs=1e-13
        )


def test_transition_rows_and_prop_iii2_entries():
    m = negligible_rtt_model(100.0, 0.03, buffer=12, grid=4, alpha=1.5)
    assert np.all(m.kernel >= 0)
    assert np.abs(m.kernel.sum(axis=2) - 1).max() < 1e-12
    p_admit, p_drop = m.to_sparse()
    for p in (p_admit, p_drop):
        assert np.abs(np.asarray(p.sum(axis=1)).ravel() - 1).max() < 1e-12
    # state (q = 5, r = 6): admit -> q+ = 6, r' = 7, gamma rate alpha * 7 * unit
    nq = m.buffer + 1
    s = (6 - 1) * nq + 5
    lam = 1.5 * 7 * m.grid.unit_pps
    pmf = served_pmf(1.5, lam, 100.0, 10)
    row = p_admit[s].toarray().ravel().reshape(m.grid.size, nq)
    assert np.allclose(row[7 - 1, 1:7][::-1], pmf[:6], atol=1e-14)
    assert row[7 - 1, 0] == pytest.approx(1 - pmf[:6].sum(), abs=1e-13)
    assert row.sum() == pytest.approx(1.0)
    # drop: q+ = 5, r' = 3
    row = p_drop[s].toarray().ravel().reshape(m.grid.size, nq)
    assert row[3 - 1].sum() == pytest.approx(1.0)


def test_transformed_self_loops_in_unit_interval():
    m = negligible_rtt_model(100.0, 0.03, buffer=10, grid=5)
    rbar, w, tau_bar = transform(m)
    assert tau_bar < m.tau.min()  # strict: every state keeps a self-loop (aperiodic)
    p = m.to_sparse()
    for a in (ADMIT, DROP):
        loop = w[a].ravel() * p[a].diagonal() + 1 - w[a].ravel()
        assert np.all(loop >= 0) and np.all(loop <= 1)
        assert np.all(loop > 0)


@pytest.mark.parametrize("kind", ["negligible", "rtt"])
def test_value_iteration_matches_lp_on_tiny_instance(kind):
    if kind == "negligible":
        m = negligible_rtt_model(100.0, 0.035, buffer=7, grid=3, alpha=2.0)
    else:
        m = rtt_model(100.0, 0.035, 0.01, buffer=7, grid=3)
    res = solve(m, eps=1e-9)
    lp = solve_lp(m)
    # Tijms: m_n <= g* <= M_n, and the bounds are 1e-9-close, so agreement is to ~1e-8.
    assert res.lower - 1e-7 <= lp.gain <= res.upper + 1e-7
    assert res.gain == pytest.approx(lp.gain, rel=1e-8, abs=1e-8)
    # the returned policy achieves the optimum exactly (renewal-reward evaluation)
    assert policy_gain(m, res.policy) == pytest.approx(lp.gain, rel=1e-7, abs=1e-8)
    assert policy_gain(m, lp.policy) == pytest.approx(lp.gain, rel=1e-7, abs=1e-8)


def test_tijms_bounds_bracket_the_exact_gain_at_default_tolerance():
    m = negligible_rtt_model(MU10, 0.005, buffer=30, grid=10)
    res = solve(m)  # eps = 1e-4
    g = policy_gain(m, res.policy)
    assert res.lower - 1e-9 <= g <= res.upper + 1e-9
    assert (res.upper - res.lower) <= 1e-4 * abs(res.lower) + 1e-6


@pytest.mark.parametrize("penalty", [None, 1.0])
def test_default_reward_gives_non_trivial_threshold_policy(penalty):
    m = negligible_rtt_model(MU10, 0.005, buffer=60, grid=20, penalty=penalty)
    pol = solve(m)
    inner = pol.policy[:, : m.buffer]
    assert inner.any() and not inner.all()  # neither admit-all nor drop-all
    assert not pol.policy[:, 0].any()  # an empty queue never drops
    assert pol.is_threshold()
    assert pol.gain > 0.5 * MU10 * 0.5  # positive, a sizeable part of the service rate
    if penalty == 1.0:
        # a late packet earns nothing (P = 1), so above the service rate the threshold sits
        # at the delay target: (q + 1) / mu > d. With the default P = 0.5 a late packet still
        # earns half a packet and the threshold may lie beyond the target.
        top = pol.drop_threshold()[m.grid.rates_pps > MU10]
        assert np.all(top <= int(np.floor(0.005 * MU10)))


def test_literal_reward_telescopes_to_zero_gain():
    # phi(x') - phi(x) summed along a path telescopes; with the penalty avoidable the optimal
    # long-run reward per unit time is 0, so the criterion cannot tell throughput apart.
    m = negligible_rtt_model(MU10, 0.005, buffer=40, grid=10, reward="literal")
    pol = solve(m)
    scale = np.abs(m.reward[m.reward > -m.meta["penalty"] / 2]).max() / m.tau.min()
    assert abs(pol.gain) <= 1e-6 * scale
    d = negligible_rtt_model(MU10, 0.005, buffer=40, grid=10)
    # the default reward values throughput: its optimal policy earns far more than the
    # literal-optimal policy evaluated under the default reward
    assert policy_gain(d, pol.policy) < solve(d).gain


def test_drop_region_shrinks_with_service_rate():
    # PAQMAN Fig. 5: a lower service rate gives more aggressive drops. Same relative grid.
    # With P = 1 this holds at every rate; with the default P = 0.5 it holds at high rates but
    # not at the lowest ones (thresholds of 40+ packets that the queue hardly reaches).
    lo = solve(negligible_rtt_model(5e6 / 12000, 0.005, buffer=60, grid=20, penalty=1.0))
    hi = solve(negligible_rtt_model(10e6 / 12000, 0.005, buffer=60, grid=20, penalty=1.0))
    assert np.all(hi.drop_threshold() >= lo.drop_threshold())
    assert hi.policy.sum() < lo.policy.sum()


@pytest.mark.parametrize("penalty", [None, 1.0])
def test_larger_rtt_drops_earlier(penalty):
    # PAQMAN Fig. 6: the high-RTT policy starts dropping at smaller queues "especially in high
    # arrival regimes". At low rates the longer interval drains the queue, and the high-RTT
    # threshold may be larger there, so the comparison is over rates >= the service rate.
    low = solve(rtt_model(MU10, 0.005, 0.001, buffer=40, grid=15, penalty=penalty))
    high = solve(rtt_model(MU10, 0.005, 0.010, buffer=40, grid=15, penalty=penalty))
    fast = low.grid.rates_pps >= MU10 - 1e-9
    assert high.drop_threshold()[fast].sum() < low.drop_threshold()[fast].sum()
    assert high.policy[fast].sum() > low.policy[fast].sum()
    if penalty == 1.0:
        # rate by rate too; with the default P = 0.5 the crossing lies just above the service
        # rate (thresholds 8 vs 6 packets at rate = mu), so only the totals are compared
        assert np.all(high.drop_threshold()[fast] <= low.drop_threshold()[fast])


def test_bad_parameters_raise():
    with pytest.raises(ValueError, match="service_pps"):
        negligible_rtt_model(-1.0, 0.005)
    with pytest.raises(ValueError, match="reward"):
        negligible_rtt_model(100.0, 0.005, buffer=5, grid=2, reward="other")
    with pytest.raises(ValueError, match="rtt_s"):
        rtt_model(100.0, 0.005, -0.1)


def test_split_drop_projection_is_unbiased_and_floor_is_the_old_map():
    g = RateGrid(1.0, 100, 0.5, "split")
    r = g.index
    lo, hi, w = g.drop_split(r)
    assert np.allclose(((1 - w) * lo + w * hi)[r >= 2], r[r >= 2] / 2)  # E[index] = r / 2
    assert np.all(w[r % 2 == 0] == 0) and np.allclose(w[(r % 2 == 1) & (r > 1)], 0.5)
    f = RateGrid(1.0, 100, 0.5, "floor")
    flo, fhi, fw = f.drop_split(r)
    assert np.array_equal(flo, np.maximum(1, r // 2)) and np.array_equal(flo, fhi)
    assert not fw.any()
    with pytest.raises(ValueError, match="drop_projection 'ceil'"):
        RateGrid(1.0, 10, 0.5, "ceil")


@pytest.mark.parametrize("kind", ["negligible", "rtt"])
def test_split_projection_kernel_is_the_mixture_and_vi_matches_lp(kind):
    kw = dict(buffer=7, grid=3, drop_projection="split")
    if kind == "negligible":
        m = negligible_rtt_model(100.0, 0.035, alpha=2.0, **kw)
    else:
        m = rtt_model(100.0, 0.035, 0.01, **kw)
    p_admit, p_drop = m.to_sparse()
    for p in (p_admit, p_drop):
        assert np.abs(np.asarray(p.sum(axis=1)).ravel() - 1).max() < 1e-12
    nq = m.buffer + 1
    # drop at rate index 5 (odd): half the mass to index 2, half to index 3
    row = p_drop[(5 - 1) * nq + 4].toarray().ravel().reshape(m.grid.size, nq)
    assert row[2 - 1].sum() == pytest.approx(0.5) and row[3 - 1].sum() == pytest.approx(0.5)
    # expected_next agrees with the explicit matrices (feasible pairs)
    v = np.random.default_rng(1).normal(size=(m.grid.size, nq))
    e = m.expected_next(v)
    for a, p in ((ADMIT, p_admit), (DROP, p_drop)):
        ok = m.feasible[a].ravel()
        assert np.allclose(e[a].ravel()[ok], (p @ v.ravel())[ok])
    res = solve(m, eps=1e-9)
    assert res.gain == pytest.approx(solve_lp(m).gain, rel=1e-8, abs=1e-8)
    if kind == "negligible":  # expected sojourn: mean of 1 / x' over the two branches
        u = m.grid.unit_pps
        assert m.tau[DROP, 5 - 1, 0] == pytest.approx(0.5 / (2 * u) + 0.5 / (3 * u))
