"""Kim-Tang-Low PD-LQ design: KTL constants, gain table, Riccati/Propositions, memory law."""

import numpy as np
import pytest
from aqmlab.design import (
    is_closed_loop_stable,
    ktl_constants,
    lq_gains,
    memory_transform,
    pd_lq_design,
    predictor_kernel,
    predictor_weights,
    prop1_h1,
    prop2_weights,
    prop3_weights,
)
from scipy.integrate import quad_vec
from scipy.linalg import expm


@pytest.mark.parametrize(
    "c,N,d,b", [(4000.0, 100, 0.15, 200.0), (4000.0, 100, 0.35, 200.0), (1000.0, 7, 0.05, 30.0)]
)
def test_ktl_constants_match_closed_forms(c, N, d, b):
    # docs/design/pd_lq.md, KTL eq. 2, written here in the c, N, tau form (independent of the
    # p*, w* form used by aqmlab.fluid). Tolerance: round-off only.
    k = ktl_constants(c, N, d, b)
    tau = d + b / c
    s = 2 * N**2 + c**2 * tau**2
    assert k.tau == pytest.approx(tau, rel=1e-12)
    assert k.A1 == pytest.approx(-2 * c * N / (tau * s), rel=1e-12)
    assert k.A2 == pytest.approx(-(2 * c * N * tau + s) / (tau * s), rel=1e-12)
    assert k.B1 == pytest.approx(-s / (2 * tau**2 * N), rel=1e-12)
    assert k.p_star == pytest.approx(2 * N**2 / s, rel=1e-12)


@pytest.mark.parametrize(
    "prop,memory,expected",
    [
        (0.15, False, ("5.657e-04", "3.626e-04", "4.894e-05")),
        (0.35, False, ("6.445e-04", "4.788e-04", "9.228e-05")),
        (0.35, True, ("6.093e-04", "5.672e-04", "1.308e-04")),
    ],
)
def test_gain_table(prop, memory, expected):
    # docs/design/pd_lq.md gain table (lambda = -3.75, c = 4000, N = 100, b* = 200, P1 = 1).
    d = pd_lq_design(4000.0, 100, prop, 200.0, p1=1.0, lam=-3.75, memory=memory)
    assert tuple(f"{h:.3e}" for h in d.H) == expected
    assert d.lq_admissible
    np.testing.assert_allclose(d.H, d.H_acker, rtol=1e-8)  # Ackermann agrees


def test_p_star_values():
    assert f"{pd_lq_design(4000.0, 100, 0.15, 200.0).p_star:.4f}" == "0.0303"
    assert f"{pd_lq_design(4000.0, 100, 0.35, 200.0).p_star:.5f}" == "0.00775"


def test_equal_eigenvalue_design_places_triple_eigenvalue():
    d = pd_lq_design(4000.0, 100, 0.15, 200.0, lam=-3.75)
    Acl = d.A + d.B @ d.H[None, :]
    # characteristic polynomial (s + 3.75)^3; polynomial coefficients are well conditioned
    np.testing.assert_allclose(np.poly(Acl), np.poly([-3.75] * 3), rtol=1e-9)


def test_riccati_proposition_1_and_inverse_maps():
    # Prop. 3 weights for the triple eigenvalue -> CARE -> the equal-eigenvalue gains;
    # Prop. 2 maps those gains back to the same weights; Prop. 1's H1* matches the CARE.
    d = pd_lq_design(4000.0, 100, 0.15, 200.0, lam=-3.75)
    Q = prop3_weights(d.A, d.Bh1, [-3.75] * 3)
    H = lq_gains(d.A, d.B, Q)
    np.testing.assert_allclose(H, d.H, rtol=1e-6)
    np.testing.assert_allclose(prop2_weights(d.A, d.Bh1, H), Q, rtol=1e-6)
    assert prop1_h1(d.A, d.Bh1, Q[0]) == pytest.approx(H[0], rel=1e-8)


def test_random_weights_roundtrip_through_prop2():
    d = pd_lq_design(4000.0, 100, 0.15, 200.0)
    Q = np.array([3e-7, 5e-8, 4e-9])
    H = lq_gains(d.A, d.B, Q)
    np.testing.assert_allclose(prop2_weights(d.A, d.Bh1, H), Q, rtol=1e-5)


def test_fast_filter_is_not_lq_admissible():
    # P1 = 8 (RED's w_q = 0.002 per packet at 4000 packets/s) with lambda = -3.75 gives
    # H2, H3 < 0 and Q < 0 (docs/design/pd_lq.md, "Known disagreement").
    d = pd_lq_design(4000.0, 100, 0.15, 200.0, p1=8.0)
    assert d.H[1] < 0 and d.H[2] < 0 and not d.lq_admissible


@pytest.mark.parametrize("T2", [1.0, -0.3, 25.0])
def test_memory_transform_properties(T2):
    # KTL Appendix: T A T^-1 = A and T B~ = [0, 0, Bh1]; the gain on h is independent of T2.
    d = pd_lq_design(4000.0, 100, 0.35, 200.0, memory=True, T2=T2)
    T, Bh1 = memory_transform(d.A, d.B_tilde, T2)
    np.testing.assert_allclose(T @ d.A @ np.linalg.inv(T), d.A, atol=1e-9 * np.abs(d.A).max())
    TB = (T @ d.B_tilde).ravel()
    assert abs(TB[0]) < 1e-9 * abs(Bh1) and abs(TB[1]) < 1e-9 * abs(Bh1)
    assert TB[2] == pytest.approx(Bh1, rel=1e-9)
    ref = pd_lq_design(4000.0, 100, 0.35, 200.0, memory=True, T2=1.0)
    np.testing.assert_allclose(d.H, ref.H, rtol=1e-8)


def test_predictor_kernel_and_weights():
    d = pd_lq_design(4000.0, 100, 0.35, 200.0, memory=True)
    tau = d.ktl.tau
    # kernel at sigma = -tau is B; at sigma = 0 it is B~
    K = predictor_kernel(d.A, d.B, tau, [-tau, 0.0])
    np.testing.assert_allclose(K[0], d.B.ravel())
    np.testing.assert_allclose(K[1], d.B_tilde.ravel())
    # ZOH weights sum to the whole integral int_{-tau}^0 e^{-A(s+tau)} B ds
    W = predictor_weights(d.A, d.B, tau, 0.002)
    assert W.shape == (200, 3)
    whole = quad_vec(lambda s: (expm(-d.A * (s + tau)) @ d.B).ravel(), -tau, 0.0)[0]
    np.testing.assert_allclose(W.sum(axis=0), whole, rtol=1e-7)


def test_memoryless_delay_sensitivity():
    # KTL §III: the memoryless law degrades at large delays. In the delayed linear model it is
    # stable at tau = 0.2 for P1 in [0.5, 6] and unstable at tau = 0.4 for small P1; we find
    # the tau = 0.4 boundary at P1 = 4.58 (stable at 5, confirmed with a Pade(12) model), so
    # the test stops at 4.5.
    for p1 in (0.5, 1.0, 3.0, 6.0):
        assert is_closed_loop_stable(*pd_lq_design(4000.0, 100, 0.15, 200.0, p1=p1).loop())
    for p1 in (0.5, 1.0, 3.0, 4.5):
        assert not is_closed_loop_stable(*pd_lq_design(4000.0, 100, 0.35, 200.0, p1=p1).loop())
