"""EDC discrete PI region and SQM's Lyapunov condition."""

import control
import numpy as np
import pytest
from aqmlab import fluid
from aqmlab.design import (
    edc_design,
    edc_discrete_plant,
    edc_spatial_plant,
    edc_stable_region,
    sqm_lyapunov,
    sqm_sigma,
    sqm_system_matrix,
)
from scipy.linalg import expm


@pytest.mark.parametrize("pkt_bytes", [512, 1000, 1500])
@pytest.mark.parametrize("tp", [0.02, 0.2])
def test_edc_sanity_check_spectral_radius(pkt_bytes, tp):
    # docs/design/edc.md: n = 30, 1.5 Mb/s, N = 60, q0 = 200, packets 512-1500 B,
    # Tp 20-200 ms, K_P = 0.03, K_I = 0.01 -> spectral radius ~0.99 (stable, slow).
    # Tolerance: "~0.99" read as [0.985, 0.995] and strictly < 1.
    C = 1.5e6 / 8 / pkt_bytes
    d = edc_design(60, C, 200.0, tp, n_event=30, kp=0.03, ki=0.01)
    assert d.stable and 0.985 < d.spectral_radius < 0.995


def test_edc_zoh_discretisation():
    # Ad = expm(A n) exactly; its eigenvalues are exp(lambda n) of the per-packet poles
    # -2N/(R0 C)^2 and -1/(R0 C) (EDC eqs. 7-9).
    N, C, q0, tp, n = 60, 187.5, 200.0, 0.1, 30
    A, B, _ = edc_spatial_plant(N, C, q0, tp)
    P = edc_discrete_plant(N, C, q0, tp, n)
    np.testing.assert_allclose(P.A, expm(A * n), rtol=1e-12)
    RC = (q0 / C + tp) * C
    lam = np.sort([-2 * N / RC**2, -1 / RC])
    np.testing.assert_allclose(np.sort(np.log(np.linalg.eigvals(P.A).real)) / n, lam, rtol=1e-9)


def test_edc_region_and_poles_agree():
    # Two computations of the same poles: control.feedback (edc_design) and the
    # characteristic polynomial (edc_stable_region); then the region edge is a true edge.
    args = (60, 187.5, 200.0, 0.1, 30)
    kp = np.logspace(-3, 0, 61)
    reg = edc_stable_region(*args, kp=kp, ki=[0.01])
    for j in (0, 30, 60):
        rho = edc_design(*args, kp=kp[j], ki=0.01).spectral_radius
        assert reg.spectral_radius[0, j] == pytest.approx(rho, rel=1e-8)
    kmax = reg.kp_max()[0]
    assert edc_design(*args, kp=kmax, ki=0.01).stable
    assert not edc_design(*args, kp=kmax * 1.13, ki=0.01).stable  # next grid point
    assert 0.03 < kmax  # the paper's K_P = 0.03 is inside


def test_edc_root_locus_passes_through_design_poles():
    d = edc_design(60, 187.5, 200.0, 0.1)
    rl = control.root_locus_map(d.loop / d.alpha, [d.alpha])
    np.testing.assert_allclose(np.sort_complex(rl.loci[0]), np.sort_complex(d.poles), atol=1e-9)


def test_edc_linear_verdict_matches_fluid_simulation():
    # Nonlinear spatial-domain fluid model with the event-driven PI: 30 % inside the computed
    # K_P boundary the queue settles (last-quarter swing < 0.1 packet); 40 % outside it a
    # limit cycle remains (queue swing > 2 packets, p swinging by > 0.1 between saturations).
    args = (60, 187.5, 200.0, 0.1, 30)
    kmax = edc_stable_region(*args, kp=np.logspace(-3, 0, 121), ki=[0.01]).kp_max()[0]
    m = fluid.EDC(60, 187.5, 0.1, qref=200.0, kp=np.array([0.7 * kmax, 1.4 * kmax]), ki=0.01)
    r = m.simulate(60_000)
    q, p = np.asarray(r["q"]), np.asarray(r["p"])
    k = 3 * len(q) // 4
    swing_q = q[k:].max(axis=0) - q[k:].min(axis=0)
    swing_p = p[k:].max(axis=0) - p[k:].min(axis=0)
    assert swing_q[0] < 0.1 and abs(q[-1, 0] - 200.0) < 0.1
    assert swing_q[1] > 2.0 and swing_p[1] > 0.1


def test_sqm_worked_example():
    # docs/design/sqm_sigma.md: 10 flows, RTTs 0.100..0.150 (linear), x* = 120 (1-5) and
    # 80 (6-10), alpha = 2, k = 1/D^2, rho = 1.01: J = 3.03, ||A|| = 0.459, rhs = 0.356;
    # k x^2 from 2.8e5 to 1.4e6; equal split needs sigma ~0.8e7-4e7 (margin 0).
    x = [120.0] * 5 + [80.0] * 5
    D = np.linspace(0.1, 0.15, 10)
    r = sqm_sigma(x, D, rho=1.01, margin=0.0)
    assert f"{r.J:.2f}" == "3.03"
    assert f"{r.norm_A:.3f}" == "0.459"
    assert f"{r.rhs:.3f}" == "0.356"
    assert f"{r.gains.min():.2g}" == "2.8e+05" and f"{r.gains.max():.2g}" == "1.4e+06"
    assert 0.75e7 < r.sigma.min() < 0.9e7 and 3.5e7 < r.sigma.max() < 4.5e7
    # with margin 0 the equal split sits exactly on the bound
    assert r.lhs == pytest.approx(r.rhs, rel=1e-12)
    r2 = sqm_sigma(x, D)  # 10 % margin -> strictly inside
    assert r2.satisfied and r2.lhs == pytest.approx(0.9 * r2.rhs, rel=1e-12)


def test_sqm_lyapunov_solution():
    F = sqm_system_matrix([120.0, 80.0, 50.0], [0.1, 0.12, 0.2])
    A = sqm_lyapunov(F)
    np.testing.assert_allclose(F.T @ A + A @ F, -np.eye(6), atol=1e-10)
    assert np.all(np.linalg.eigvalsh(A) > 0)
    # F is Hurwitz with eigenvalues -alpha k_i/x_i and -1/D_i (SQM Lemma 2)
    ev = np.sort(np.linalg.eigvals(F).real)
    D = np.array([0.1, 0.12, 0.2])
    expect = np.sort(np.concatenate([-2 / D**2 / np.array([120.0, 80.0, 50.0]), -1 / D]))
    np.testing.assert_allclose(ev, expect, rtol=1e-10)


def test_sqm_bad_inputs():
    with pytest.raises(ValueError, match="rho"):
        sqm_sigma([1.0], [0.1], rho=1.0)
    with pytest.raises(ValueError, match="positive"):
        sqm_sigma([-1.0], [0.1])
