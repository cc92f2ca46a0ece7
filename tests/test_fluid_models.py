"""Fluid models: equilibria against papers' numbers and long-run simulations, linearisations
against finite-difference Jacobians of the model code, SQM convergence."""

import numpy as np
import pytest
from aqmlab.fluid import EDC, KTL, PDLQ, PI, RED, SFC, SQM, GaoHou, Kelly, Misra


class _ConstLag:
    """Lag stub returning a fixed delayed state (for Jacobians)."""

    def __init__(self, yd):
        self.yd = yd

    def rows(self, delay):
        return self.yd.copy()

    def __call__(self, delay, comps):
        return self.yd[:, comps]

    def constant(self, key, delay, comps):
        return self.yd[:, comps]


def _fd_jacobians(model, y0, n_cols=None):
    """Central differences of model.rhs w.r.t. current and delayed state at y0 (B = 1)."""
    n = y0.shape[1]
    n_cols = n_cols or n
    J = np.zeros((n, n_cols))
    Jd = np.zeros((n, n_cols))
    for j in range(n_cols):
        h = 1e-6 * max(1.0, abs(y0[0, j]))
        e = np.zeros_like(y0)
        e[0, j] = h
        J[:, j] = (model.rhs(0, y0 + e, _ConstLag(y0)) - model.rhs(0, y0 - e, _ConstLag(y0)))[0] / (
            2 * h
        )
        Jd[:, j] = (model.rhs(0, y0, _ConstLag(y0 + e)) - model.rhs(0, y0, _ConstLag(y0 - e)))[
            0
        ] / (2 * h)
    return J, Jd


def test_sqm_matlab_example_converges_to_weight_shares():
    rtt = np.linspace(0.100, 0.150, 10)  # SQM §V-A gives the range only: linear spacing (ours)
    m = SQM(capacity=1000, rtt=rtt, weights=[1500] * 5 + [1000] * 5)
    r = m.simulate(50)
    x = r["x"][-1, 0]
    # paper: 120 (flows 1-5) and 80 (flows 6-10) packets/s; required within 1 % at t = 50 s
    np.testing.assert_allclose(x, [120] * 5 + [80] * 5, rtol=0.01)


@pytest.mark.parametrize(
    "law,dur",
    [
        (PI(qref=200), 100.0),  # Hollot's published gains, stable at N=60, C=3750, Tp=0.2
        (RED(min_th=50, max_th=500, max_p=0.02, w_q=0.0002), 150.0),  # small L_red: stable
    ],
)
def test_misra_equilibrium_matches_long_run_simulation(law, dur):
    n = 60 if law.name == "pi" else 100
    m = Misra(n_flows=n, capacity=3750, rtt=0.2, law=law)
    eq = m.equilibrium()
    r = m.simulate(dur)
    # stable gains: the nonlinear trajectory settles on the computed point; 0.1 % relative
    # covers the residual transient at the horizon (measured < 1e-6)
    np.testing.assert_allclose(r["q"][-1, 0], eq["q"][0], rtol=1e-3)
    np.testing.assert_allclose(r["W"][-1, 0], eq["W"][0], rtol=1e-3)
    # and the equilibrium itself is the Misra/Hollot closed form p0 = 2N^2/(R0 C)^2
    R0 = eq["q"][0] / 3750 + 0.2
    np.testing.assert_allclose(eq["p"][0], 2 * n**2 / (R0 * 3750) ** 2, rtol=1e-12)


def test_gao_hou_sfc_worked_example():
    # docs/design/sfc.md, SFC Example 1/2: C = 1250, N = 300, tau = 0.6, b = 2 -> alpha = 2.5,
    # p0 = 0.143, equilibrium meaningful for N < 750 (numbers given to 3 digits)
    m = GaoHou(n_flows=300, capacity=1250, rtt=0.6, b=2, law=SFC(k1=0.0005, k2=0.2, qref=50))
    eq = m.equilibrium()
    assert eq["W"][0] == pytest.approx(2.5, abs=1e-12)
    assert eq["p"][0] == pytest.approx(0.143, abs=5e-4)
    assert m.max_n_flows()[()] == pytest.approx(750, rel=1e-12)
    # no offset (SFC Fig. 5): the queue settles where k1 (q - 50) = p0, q = 50 + p0/k1
    assert eq["q"][0] == pytest.approx(50 + eq["p"][0] / 0.0005, rel=1e-9)
    r = m.simulate(100)
    np.testing.assert_allclose(r["q"][-1, 0], eq["q"][0], rtol=1e-3)  # paper's gains are stable


@pytest.mark.parametrize("d,p_star", [(0.15, 0.0303), (0.35, 0.00775)])
def test_ktl_equilibrium_worked_numbers(d, p_star):
    # docs/design/pd_lq.md: c = 4000, N = 100, b* = 200 -> tau = d + 0.05; p* = 0.0303 / 0.00775
    m = KTL(n_flows=100, capacity=4000, rtt=d, law=PDLQ(qref=200, p_offset=p_star))
    eq = m.equilibrium()
    assert eq["p"][0] == pytest.approx(p_star, rel=2e-3)  # paper numbers have 3 digits
    assert eq["R"][0] == pytest.approx(d + 0.05, rel=2e-3)
    lin = m.linearize()
    # KTL eq. 2 coefficients equal the characteristic polynomial of the identified plant
    Ai = lin.A_identified[0]
    assert np.trace(Ai) == pytest.approx(lin.extra["A2"][0], rel=1e-9)
    assert -np.linalg.det(Ai) == pytest.approx(lin.extra["A1"][0], rel=1e-9)
    assert Ai[1, 0] * lin.B[0, 0, 0] == pytest.approx(lin.extra["B1"][0], rel=1e-9)


def _check_window_linearization(model):
    lin = model.linearize()
    eq = lin.extra["equilibrium"]
    # open-loop plant: p enters as an input. Swap in a PI law, whose p is its own state, so the
    # Jacobian w.r.t. the delayed W and q does not pick up the law's feedback.
    model.law = PI(qref=eq["q"][0])
    y0 = np.array([[eq["W"][0], eq["q"][0], eq["p"][0]]])
    # the equilibrium is a rest point of the actual right-hand side
    assert np.max(np.abs(model.rhs(0, y0, _ConstLag(y0))[0, :2])) < 1e-9
    J, Jd = _fd_jacobians(model, y0, n_cols=2)
    # central differences with relative step 1e-6: truncation ~1e-12, rounding ~1e-9 relative
    np.testing.assert_allclose(lin.A[0], J[:2, :2], rtol=1e-5, atol=1e-9)
    np.testing.assert_allclose(lin.Ad[0], Jd[:2, :2], rtol=1e-5, atol=1e-9)
    # input column: derivative w.r.t. the delayed probability via window_rhs
    W0, q0, p0 = eq["W"][0], eq["q"][0], eq["p"][0]
    R = model.rtt(np.array([q0]))
    h = 1e-7 * p0
    dp = (
        model.window_rhs(np.array([W0]), np.array([W0]), np.array([p0 + h]), R, R)
        - model.window_rhs(np.array([W0]), np.array([W0]), np.array([p0 - h]), R, R)
    ) / (2 * h)
    assert lin.B[0, 0, 0] == pytest.approx(dp[0], rel=1e-5)
    return lin


def test_misra_linearization_matches_fd_and_hollot():
    m = Misra(n_flows=60, capacity=3750, rtt=0.2, law=PI(qref=200))
    lin = _check_window_linearization(m)
    R0, N, C = lin.delay[0], 60, 3750
    # Hollot et al. 2001's printed form
    np.testing.assert_allclose(
        lin.A_identified[0], [[-2 * N / (R0**2 * C), 0], [N / R0, -1 / R0]], rtol=1e-12, atol=1e-15
    )
    assert lin.B[0, 0, 0] == pytest.approx(-R0 * C**2 / (2 * N**2), rel=1e-12)


def test_gao_hou_linearization_matches_fd_and_sfc_eq14():
    m = GaoHou(n_flows=300, capacity=1250, rtt=0.6, b=2, law=SFC())
    lin = _check_window_linearization(m)
    w0, p0, tau, b = 2.5, lin.extra["equilibrium"]["p"][0], 0.6, 2
    np.testing.assert_allclose(
        lin.A_identified[0],
        [[-p0 * (1 + 2 * b * w0) / (2 * b * tau), 0], [300 / tau, 0]],
        rtol=1e-12,
        atol=1e-15,
    )  # SFC eq. 14 with states ordered [w, q]
    assert lin.B[0, 0, 0] == pytest.approx(-1 / (b * tau * p0), rel=1e-12)


def test_ktl_linearization_matches_fd():
    _check_window_linearization(KTL(n_flows=100, capacity=4000, rtt=0.15, law=PDLQ(p_offset=0.03)))


def test_sqm_linearization_matches_fd():
    m = SQM(capacity=1000, rtt=np.linspace(0.1, 0.15, 4), weights=[3, 1, 1, 1], beta=5.0)
    lin = m.linearize()
    y0 = lin.extra["equilibrium"].state
    assert np.max(np.abs(m.rhs(0, y0, _ConstLag(y0)))) < 1e-9  # rest point
    J, Jd = _fd_jacobians(m, y0)
    np.testing.assert_allclose(lin.A[0], J, rtol=1e-5, atol=1e-8)
    np.testing.assert_allclose(lin.Ad[0], Jd, rtol=1e-5, atol=1e-8)


def test_kelly_single_link_closed_form_and_fd():
    # one link: y = C + sum w, x_r = w_r y/(y - C) (from w_r = x_r (y - C)/y)
    w = np.array([1.0, 3.0, 2.0])
    m = Kelly(capacity=100.0, rtt=[0.1, 0.2, 0.15], weights=w, gain=5.0)
    eq = m.equilibrium()
    y = 100 + w.sum()
    np.testing.assert_allclose(eq["x"][0], w * y / (y - 100), rtol=1e-6)
    r = m.simulate(40)
    np.testing.assert_allclose(r["x"][-1, 0], eq["x"][0], rtol=1e-3)  # stable: settles
    lin = m.linearize()
    y0 = eq.state
    J, Jd = _fd_jacobians(m, y0)
    np.testing.assert_allclose(lin.A[0], J, rtol=1e-5, atol=1e-8)
    np.testing.assert_allclose(lin.Ad[0], Jd, rtol=1e-5, atol=1e-8)


def test_kelly_two_links_equilibrium_is_a_rest_point():
    m = Kelly(
        capacity=[100.0, 80.0],
        rtt=[0.1, 0.2, 0.15],
        weights=[1.0, 3.0, 2.0],
        routing=[[0, 1], [0], [1]],
    )
    y0 = m.equilibrium().state
    assert np.max(np.abs(m.rhs(0, y0, _ConstLag(y0)))) < 1e-6


def test_edc_equilibrium_simulation_and_linearization():
    m = EDC(n_flows=60, capacity=187.5, rtt=0.1)
    eq = m.equilibrium()
    r = m.simulate(187.5 * 200)  # ~200 s of arrivals
    assert r["q"][-1, 0] == pytest.approx(200, rel=1e-3)  # event-driven PI removes the offset
    assert r["p"][-1, 0] == pytest.approx(eq["p"][0], rel=1e-3)
    lin = m.linearize()
    y0 = eq.state
    J, _ = _fd_jacobians(m, y0, n_cols=4)
    np.testing.assert_allclose(lin.A[0], J[:2, :2], rtol=1e-5, atol=1e-12)
    np.testing.assert_allclose(lin.B[0, :, 0], J[:2, 3], rtol=1e-5, atol=1e-12)  # p column


def test_result_to_pandas_and_plot():
    import matplotlib

    matplotlib.use("Agg")
    r = Misra(n_flows=[50, 60], capacity=3750, rtt=0.2, law=PI()).simulate(2.0)
    df = r.to_pandas()
    assert list(df.columns) == ["batch", "t", "W", "q", "p"]
    assert len(df) == 2 * len(r.t)
    fig = r.plot()
    assert len(fig.axes) == 3
