"""PAQMAN's multi-flow DQN (aqmlab.mdp.dqn, docs/paqman.md): features, training, the policy
file and its packet-level runtime (crates/aqm/src/paqman_multiflow.rs)."""

from __future__ import annotations

import json

import numpy as np
import pytest
from aqmlab.aqm import Queue
from aqmlab.mdp.dqn import QUEUE_FEATURE_MAX, DqnPolicy, Mlp, dqn_features, evaluate, fit_dqn_policy
from aqmlab.mdp.multiflow import MultiflowConfig, threshold_policy

CFG = MultiflowConfig(
    service_pps=833.333, target_s=0.005, rtts_s=(0.001, 0.005, 0.01), buffer=60, grid=20
)


@pytest.fixture(scope="module")
def trained():
    return fit_dqn_policy(CFG, n_decisions=6000, rounds=3, iters=20, epochs=1, seed=1)


def test_features_hand_computed():
    # q = 10 packets, d mu = 4.1667: 2.4; rates 10, 5, 20 units of mu/20; flow 1 decides;
    # flow 0 is 0.5 ms into its 1-ms window (half to come), flow 2 before its first decision.
    f = dqn_features(CFG, [10], [[10, 5, 20]], [[0.0005, 0.006, np.inf]], [1])
    want = [10 / (0.005 * 833.333), 0.5, 0.25, 1.0, 0.5, 1.0, 0.0, 0.0, 1.0, 0.0]
    np.testing.assert_allclose(f[0], want, rtol=1e-12)
    # the queue feature saturates
    assert dqn_features(CFG, [1000], [[1, 1, 1]], [[1, 1, 1]], [0])[0, 0] == QUEUE_FEATURE_MAX


def test_mlp_gradient_matches_finite_differences():
    rng = np.random.default_rng(3)
    net = Mlp([4, 5, 2], rng)
    x, out, y = rng.normal(size=(6, 4)), rng.integers(0, 2, 6), rng.normal(size=6)

    def loss(n):
        return float(np.mean((n.q(x)[np.arange(6), out] - y) ** 2))

    # one plain gradient step of a tiny learning rate lowers the loss by about lr |g|^2 under
    # Adam's first step (each coordinate moves by lr sign(g)): check the decrease against the
    # finite-difference gradient's L1 norm
    eps, l0 = 1e-6, loss(net)
    g1 = 0.0
    for p in [*net.weights, *net.biases]:
        for i in np.ndindex(p.shape):
            p[i] += eps
            g1 += abs(loss(net) - l0) / eps
            p[i] -= eps
    lr = 1e-5
    assert net.step(x, out, y, lr) == pytest.approx(l0)
    assert l0 - loss(net) == pytest.approx(lr * g1, rel=1e-2)


def test_training_is_deterministic_and_sized():
    a = fit_dqn_policy(CFG, n_decisions=1200, rounds=1, iters=2, seed=4)
    b = fit_dqn_policy(CFG, n_decisions=1200, rounds=1, iters=2, seed=4)
    for wa, wb in zip(a.net.weights, b.net.weights, strict=True):
        np.testing.assert_array_equal(wa, wb)
    # (10 + 1) 32 + (32 + 1) 32 + (32 + 1) 2 weights and biases
    assert a.parameters() == 11 * 32 + 33 * 32 + 33 * 2 == 1474
    assert a.nbytes() == 8 * 1474
    assert a.train_seconds > 0 and a.to_dict()["training"]["parameters"] == 1474


def test_dqn_policy_at_least_matches_the_best_threshold(trained):
    """In the §V-B model, the learned policy's reward rate is within 3 % of the best queue
    threshold's or above it (P = 1; observed with this budget, seed 1: 483 per second against
    459 for the best threshold, 3; seed 2 gave 497; the 3 % covers the 10 000-decision
    evaluation's noise, about 1 %)."""
    best = max(
        evaluate(CFG, threshold_policy(k), 10_000, seed=5)["reward_rate"] for k in range(1, 9)
    )
    got = evaluate(CFG, trained, 10_000, seed=5)["reward_rate"]
    assert got >= 0.97 * best, (got, best)


def _reference_decisions(pol: DqnPolicy, arrivals):
    """The runtime's rules (paqman_multiflow.rs module doc) in Python, on the policy's own
    network: slots by first packet, a decision at the first packet at least the flow's RTT
    after its previous one, the window rate averaged with gain 0.25 and moved by the last
    action."""
    cfg = pol.cfg
    m = cfg.n_flows
    rtt = np.asarray(cfg.rtts_s)
    unit = cfg.rate_grid.unit_pps
    slots, last, count = [], [None] * m, [0] * m
    smooth, rate, prev = [0.0] * m, [0.0] * m, [None] * m
    out = []
    for t, flow, q in arrivals:
        if flow not in slots:
            slots.append(flow)
        i = slots.index(flow)
        count[i] += 1
        if last[i] is not None:
            if t < last[i] + rtt[i]:
                out.append(None)
                continue
            x = count[i] / (t - last[i])
            smooth[i] = x if smooth[i] == 0 else 0.75 * smooth[i] + 0.25 * x
            rate[i] = {True: smooth[i] * 0.5, False: smooth[i] + unit, None: smooth[i]}[prev[i]]
        ages = np.array([np.inf if last[j] is None else t - last[j] for j in range(m)])
        feats = dqn_features(cfg, [q], [np.asarray(rate) / unit], ages[None], [i])
        qv = pol.net.q(feats)[0]
        drop = bool(q >= cfg.buffer or qv[1] > qv[0])
        out.append(drop)
        last[i], count[i], prev[i] = t, 0, drop
    return out


def test_packet_level_runtime_decides_as_the_python_network(trained, tmp_path):
    path = trained.save(tmp_path / "dqn.policy.json")
    doc = json.loads(path.read_text())
    assert doc["model"] == "multiflow" and len(doc["multiflow"]["layers"]) == 3
    q = Queue("paqman", {"policy": str(path)}, limit_pkts=1000, link_rate_bps=10e6)
    rng = np.random.default_rng(7)
    tx = 1500 * 8 / 10e6  # the link sends the dequeued packet for 1.2 ms
    t, busy_until, arrivals, got = 0.0, -1.0, [], []
    for _ in range(3000):
        t += rng.exponential(1 / 900)
        flow = int(rng.integers(3)) + 11
        if rng.random() < 0.45 and q.len_pkts > 0:
            q.dequeue(t)
            busy_until = t + tx
        # the runtime's queue: the backlog plus the packet in service (docs/paqman.md)
        qlen = q.len_pkts + int(t < busy_until)
        got.append(q.enqueue(t, 1500, flow=flow) == "dropped")
        arrivals.append((t, flow, qlen))
    ref = _reference_decisions(trained, arrivals)
    decided = [i for i, r in enumerate(ref) if r is not None]
    assert len(decided) > 300
    assert any(ref[i] for i in decided) and not all(ref[i] for i in decided)
    # packets outside decision epochs are admitted (the buffer never fills here)
    assert not any(got[i] for i, r in enumerate(ref) if r is None)
    # the same decisions but for ties broken by the ns rounding of the times
    agree = np.mean([got[i] == ref[i] for i in decided])
    assert agree >= 0.995, agree


def test_drop_region_figure_shows_the_policy(trained):
    """The drawn drop region is the policy's own table (one image, queue on x, rate on y)."""
    import matplotlib

    matplotlib.use("Agg")
    fig = trained.plot(flow=0, qmax=12)
    (img,) = fig.axes[0].get_images()
    assert (img.get_array() == trained.drop_region(0, 12)).all()
    assert fig.axes[0].get_xlabel() == "queue length (packets)"
    assert "DQN" in fig.axes[0].get_title()
