"""Policy file format (docs/paqman_policy_format.md): round trip, validation, lookups."""

import json

import numpy as np
import pytest
from aqmlab.mdp import load_policy, negligible_rtt_model, solve
from aqmlab.mdp.policy_io import FORMAT, VERSION


@pytest.fixture(scope="module")
def pol():
    p = solve(negligible_rtt_model(10e6 / 12000, 0.005, buffer=30, grid=8))
    p.meta["pkt_size_bytes"] = 1500
    return p


def test_round_trip(tmp_path, pol):
    path = tmp_path / "p.json"
    pol.save(path)
    doc = json.loads(path.read_text())
    assert doc["format"] == FORMAT and doc["version"] == VERSION
    assert len(doc["table"]["rows"]) == pol.grid.size
    assert all(len(r) == pol.buffer + 1 for r in doc["table"]["rows"])
    back = load_policy(path)
    assert np.array_equal(back.policy, pol.policy)
    assert back.grid == pol.grid
    assert back.gain == pytest.approx(pol.gain)
    assert back.meta["service_pps"] == pytest.approx(pol.meta["service_pps"])
    assert not list(tmp_path.glob(".*tmp"))  # no temporary files left


def test_lookup(pol):
    assert pol.action(pol.buffer, 1) == 1  # full buffer drops
    r = 5
    thr = pol.drop_threshold()[r - 1]
    assert pol.action(0, r) == 0
    assert pol.action(thr, r) == 1
    assert pol.action(0, 10_000) == pol.action(0, pol.grid.size)  # clamped
    df = pol.to_pandas()
    assert len(df) == pol.policy.size and set(df.columns) >= {"rate_pps", "queue", "drop"}


@pytest.mark.parametrize(
    "mutate,msg",
    [
        (lambda d: d.update(format="x"), "not an"),
        (lambda d: d.update(version=99), "version"),
        (lambda d: d["table"]["rows"].pop(), "shape"),
        (lambda d: d.pop("rate_grid"), "malformed"),
    ],
)
def test_rejects_bad_files(tmp_path, pol, mutate, msg):
    doc = pol.to_dict()
    mutate(doc)
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(doc))
    with pytest.raises(ValueError, match=msg):
        load_policy(path)
