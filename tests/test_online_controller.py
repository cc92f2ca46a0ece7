"""SQM's Algorithm 2 (aqmlab.online.tuning) and the period controller over the simulator
(aqmlab.online.controller), end to end on a dumbbell with a DRR scheduler of three classes."""

from __future__ import annotations

import numpy as np
import pytest
from aqmlab.online import link_tuning, run_controller
from aqmlab.online.controller import ParamMapping
from aqmlab.sim import Simulation

RTTS = np.linspace(0.1, 0.15, 10)
RATES = np.array([120.0] * 5 + [80.0] * 5)


def test_weights_make_the_shares_equal_the_rates():
    t = link_tuning(RATES, RTTS, capacity=1000.0)
    assert np.allclose(t.weights, RATES) and np.allclose(t.shares, RATES)


def test_delay_rule_puts_the_fluid_queue_at_the_target():
    t = link_tuning(RATES, RTTS, delay_target=0.02, beta=0.5)
    assert np.allclose(t.delay_star, 0.02)
    assert np.allclose(t.sigma, (0.02 * RATES - 0.5) * RATES**2)
    # far below Theorem 3's sigma: the practical rule does not meet the sufficient condition
    assert not t.satisfied and t.lhs > 100 * t.theorem3.rhs


def test_theorem3_rule_meets_the_condition_and_is_conservative():
    t = link_tuning(RATES, RTTS, sigma_rule="theorem3", rho=1.01)
    assert t.satisfied and t.lhs < t.theorem3.rhs
    # Theorem 3 on the paper's §V-A example (docs/design/sqm_sigma.md): sigma ~ 1e7, standing
    # queues of thousands of packets
    assert 5e6 < t.sigma.min() and t.sigma.max() < 1e8
    assert t.queue_star.max() > 1000


@pytest.mark.parametrize(
    "kwargs, needle",
    [
        ({"sigma_rule": "lyapunov"}, "sigma_rule"),
        ({"delay_target": -1.0}, "delay_target"),
        ({"beta": 10.0}, "delay_target = 0.005"),
        ({"rho": 1.0}, "rho"),
        ({"alpha": 0.0}, "alpha"),
    ],
)
def test_tuning_bad_input(kwargs, needle):
    with pytest.raises(ValueError, match=needle):
        link_tuning(RATES, RTTS, **kwargs)


def scenario(duration=50.0):
    classes = [{"name": n, "aqm": {"type": "codel"}} for n in ("a", "b", "c")]
    return {
        "duration": duration,
        "seed": 1,
        "dumbbell": {"rate": "10Mbps", "rtt": "60ms", "buffer": 200},
        "aqm": {"type": "drr", "classes": classes},  # equal weights to start with
        "flows": [
            {"count": 1, "class": "a"},
            {"count": 2, "class": "b"},
            {"count": 3, "class": "c"},
        ],
    }


def class_shares(sim, t0, t1):
    """Goodput share of each class between t0 and t1."""
    sim.run_until(t0)
    b0 = [sim.flow_status(f)["bytes_delivered"] for f in range(6)]
    sim.run_until(t1)
    b1 = [sim.flow_status(f)["bytes_delivered"] for f in range(6)]
    d = np.subtract(b1, b0)
    per = np.array([d[0], d[1:3].sum(), d[3:].sum()])
    return per / per.sum()


def test_controller_moves_weights_and_goodput_shares_towards_the_ogd_rates():
    # without the controller DRR's equal weights give each class about a third (observed
    # 0.29, 0.35, 0.36: one NewReno flow does not quite keep its class backlogged)
    base = class_shares(Simulation(scenario()), 20.0, 50.0)
    assert np.allclose(base, 1 / 3, atol=0.06)
    sim = Simulation(scenario())
    r = run_controller(sim, period=5.0)
    assert len(r.periods) == 10 and r.periods[-1]["t_end"] == pytest.approx(50.0)
    # Algorithm 1 from eps: one link, equal gradients -> every flow at C/6 (the NUM optimum)
    C = 10e6 / 8 / 1000
    assert np.allclose(r["ogd_pps"][-1], C / 6)
    assert np.allclose(r["num_pps"][-1], C / 6)
    # Algorithm 2 wrote class weights = sum of the class's flow rates, smallest 1
    assert r.periods[-1]["written"] == pytest.approx(
        {"classes.a.weight": 1.0, "classes.b.weight": 2.0, "classes.c.weight": 3.0}
    )
    assert sim.aqm_param("bottleneck", "classes.c.weight") == pytest.approx(3.0)
    # goodput shares follow: 1/6, 2/6, 3/6 over the last 30 s
    shares = r.key_shares("measured_pps", ParamMapping.drr_classes(sim))[4:]
    mean = {k: np.mean([s[k] for s in shares]) for k in "abc"}
    assert mean == pytest.approx({"a": 1 / 6, "b": 2 / 6, "c": 3 / 6}, abs=0.03)
    # measured rates add up to (nearly) the capacity
    assert 0.9 * C < r["measured_pps"][-1].sum() <= 1.01 * C


def test_controller_can_step_from_the_measured_rates():
    from aqmlab.online import ogd_step, project

    sim = Simulation(scenario(15.0))
    r = run_controller(sim, period=5.0, state="measured")
    meas, ogd = r["measured_pps"], r["ogd_pps"]
    C = r.capacity_pps
    for t in (1, 2, 3):
        x_t = project(np.maximum(meas[t - 1], 1.0), r.routing, C).x
        assert np.allclose(ogd[t - 1], ogd_step(x_t, meas[t - 1] > 0, t, r.routing, C))
    # the measured start is not the OGD's own: the flows' decisions are not all C/6
    assert not np.allclose(ogd[-1], C[0] / 6)


def test_mapping_writes_sigma_per_flow_queue_for_an_sqm_target():
    m = ParamMapping(
        {0: "q0", 1: "q1"},
        weight="queues.{key}.weight",
        sigma="queues.{key}.sigma",
        beta="queues.{key}.beta",
        normalize=False,
    )
    t = link_tuning([300.0, 100.0], [0.1, 0.2], beta=0.2)
    w = m.writes([0, 1], t)
    assert w["queues.q0.weight"] == 300.0 and w["queues.q1.weight"] == 100.0
    assert w["queues.q1.sigma"] == pytest.approx((0.005 * 100 - 0.2) * 100**2)
    assert w["queues.q0.beta"] == 0.2


def test_mapping_and_controller_bad_input():
    with pytest.raises(ValueError, match="share queue 'a'"):
        ParamMapping({0: "a", 1: "a"}, sigma="queues.{key}.sigma")
    with pytest.raises(ValueError, match="weight must be a path template"):
        ParamMapping({0: "a"}, weight="classes.a.weight")
    sim = Simulation(scenario(10.0))
    with pytest.raises(ValueError, match="period"):
        run_controller(sim, period=0.0)
    with pytest.raises(ValueError, match="'nope' is not a link"):
        run_controller(sim, links={"nope": 100.0})
    with pytest.raises(ValueError, match="sigma_rule"):
        run_controller(sim, sigma_rule="x")
    with pytest.raises(ValueError, match="state must be"):
        run_controller(sim, state="x")
