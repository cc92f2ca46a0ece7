"""Margins and stability of delayed loops against closed forms."""

import control
import numpy as np
import pytest
from aqmlab.design import (
    delayed_margins,
    hollot_pi,
    is_closed_loop_stable,
    pade_loop,
    stability_map,
    unstable_closed_loop_roots,
)


@pytest.mark.parametrize(
    "K,T,L", [(2.0, 0.5, 0.2), (5.0, 1.0, 0.05), (1.5, 0.1, 0.3), (3.0, 0.2, 0.1)]
)
def test_first_order_plus_delay_closed_forms(K, T, L):
    # L(s) = K e^{-sL}/(Ts+1): |L| = 1 at w = sqrt(K^2-1)/T, PM = pi - atan(wT) - wL,
    # DM = (pi - atan(wT))/w - L; phase crossover atan(wT) + wL = pi, GM = sqrt(1+w^2T^2)/K.
    # (A negative DM means the loop is already unstable; the formula holds with its sign.)
    # Tolerance 1e-8 relative: root finding to 1e-12, nothing else approximated.
    m = delayed_margins(control.tf([K], [T, 1.0]), L)
    wc = np.sqrt(K**2 - 1) / T
    assert m.crossover_frequency == pytest.approx(wc, rel=1e-8)
    assert m.phase_margin == pytest.approx(np.degrees(np.pi - np.arctan(wc * T) - wc * L), rel=1e-8)
    assert m.delay_margin == pytest.approx((np.pi - np.arctan(wc * T)) / wc - L, rel=1e-8)
    from scipy.optimize import brentq

    wp = brentq(lambda w: np.arctan(w * T) + w * L - np.pi, 1e-6, 1e6)
    assert m.phase_crossover_frequency == pytest.approx(wp, rel=1e-8)
    assert m.gain_margin == pytest.approx(np.sqrt(1 + (wp * T) ** 2) / K, rel=1e-8)


@pytest.mark.parametrize("k", [0.5, 2.0, 10.0])
def test_integrator_plus_delay_stability_boundary(k):
    # k e^{-s tau}/s is closed-loop stable iff k tau < pi/2 (exact); DM = pi/(2k) at tau = 0.
    G = control.tf([k], [1.0, 0.0])
    tau_c = np.pi / (2 * k)
    assert delayed_margins(G, 0.0).delay_margin == pytest.approx(tau_c, rel=1e-9)
    assert is_closed_loop_stable(G, 0.99 * tau_c)
    assert unstable_closed_loop_roots(G, 1.01 * tau_c) == 2  # a complex pair crosses


def test_delay_margin_predicts_instability_of_pi_loop():
    # The delay margin of Hollot's PI loop must be where the argument-principle test flips.
    d = hollot_pi(60, 3750.0, 0.246, 160.0)
    G, tau = d.loop()
    dm = d.margins.delay_margin
    assert is_closed_loop_stable(G, tau + 0.98 * dm)
    assert not is_closed_loop_stable(G, tau + 1.02 * dm)


def test_argument_principle_agrees_with_pade_poles():
    # Independent check: closed-loop poles of a 12th-order Pade model (accurate far beyond
    # the crossover here) give the same verdict on both sides of the SFC boundary.
    from aqmlab.design import gao_hou_plant, sfc_loop

    pl = gao_hou_plant(300, 1250.0, 0.6, b=2)
    for k1, k2 in [(1e-4, 0.5), (1e-4, 0.55), (0.00084, 0.2), (0.00087, 0.2)]:
        G, tau = sfc_loop(pl, k1, k2)
        cl = control.feedback(pade_loop(G, tau, 12), 1)
        pade_stable = bool(np.max(cl.poles().real) < 0)
        assert is_closed_loop_stable(G, tau) == pade_stable


def test_stability_map_pi_robust_over_operating_range():
    # Hollot's claim: a design at (N-, R+) stays stable for N >= N- and R <= R+; beyond R+
    # (long RTTs) it eventually fails.
    d = hollot_pi(60, 3750.0, 0.246, 160.0)

    def ev(n, r):
        G, tau = d.loop(n, r)
        return is_closed_loop_stable(G, tau), delayed_margins(G, tau).delay_margin

    sm = stability_map(ev, [60, 120, 180], [0.1, 0.15, 0.246])
    assert sm.stable.all()
    assert np.all(sm.value > 0)
    far = stability_map(ev, [60], [2.5])
    assert not far.stable.any()
