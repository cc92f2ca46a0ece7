"""The policy islands (docs/paqman.md): the floor projection of the multiplicative decrease
makes the drop thresholds zigzag between odd and even rate indices (and, on the full grid,
admit islands inside the drop region); the unbiased split projection gives a staircase.

Instance: the reference RTT policy (10 Mbit/s, 1500 B, d = 5 ms, RTT 10 ms, G = 50) with a
60-packet buffer so that it solves in seconds; the full B = 200 numbers are in docs/paqman.md.
"""

import numpy as np
import pytest
from aqmlab.mdp import policy_gain, rtt_model, solve

MU10 = 10e6 / 8 / 1500
B = 60


@pytest.fixture(scope="module")
def policies():
    out = {}
    for proj in ("floor", "split"):
        m = rtt_model(MU10, 0.005, 0.01, buffer=B, grid=50, drop_projection=proj)
        out[proj] = (m, solve(m, eps=1e-6))
    return out


def test_floor_projection_zigzags_and_split_is_a_staircase(policies):
    _, floor = policies["floor"]
    _, split = policies["split"]
    # measured: 24 and 0 reversals; admit islands with floor at rates 39-67 (q 57-59)
    assert floor.threshold_reversals() >= 10
    assert not floor.is_threshold()
    assert split.threshold_reversals() == 0
    thr = split.drop_threshold()
    assert np.all(np.diff(thr) <= 0)  # the first drop queue never rises with the rate
    # threshold-like except for admits at the last two queues before the full buffer
    assert split.is_threshold(below=B - 2)


def test_split_edge_admits_are_gain_neutral(policies):
    m, split = policies["split"]
    fill = split.threshold_fill()
    assert (fill != split.policy).any()  # there are edge admits ...
    # ... in states the optimal policy never reaches: filling them in changes nothing
    assert policy_gain(m, fill) == pytest.approx(policy_gain(m, split.policy), rel=1e-9)


def test_floor_policy_loses_gain_in_the_unbiased_model(policies):
    # measured: 512.953 against the optimum 513.141 packets/s of reward (-0.037 %)
    m, split = policies["split"]
    _, floor = policies["floor"]
    g_split = policy_gain(m, split.policy)
    g_floor = policy_gain(m, floor.policy)
    assert g_split * (1 - 1e-3) < g_floor < g_split * (1 - 1e-4)
