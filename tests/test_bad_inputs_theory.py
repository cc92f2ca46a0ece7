"""Bad inputs of the design, fluid and paqman commands and of their Python API.

Every command row runs the real ``aqmlab`` in a scratch folder (tests/badinput.py): exit status
2, one line ``error: ...`` naming the option and the value, no traceback, nothing written. The
API rows check that bad arguments raise a ``ValueError`` naming the argument.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

from badinput import assert_bad_input, run, scratch  # noqa: E402

PI = ["design", "pi", "--flows-min", "60", "--capacity", "3750pps", "--rtt-max", "246ms"]
PDLQ = ["design", "pd-lq", "--capacity", "4000pps", "--flows", "100", "--prop-rtt", "150ms",
        "--q-ref", "200"]  # fmt: skip
SFC = ["design", "sfc", "--capacity", "1250pps", "--flows-min", "300", "--rtt-max", "600ms"]
EDC = ["design", "edc", "--flows", "60", "--capacity", "187.5pps", "--prop-rtt", "100ms"]
SQM = ["design", "sqm-sigma", "--rates", "120pps,80pps", "--rtts", "100ms,150ms"]

ROWS = [
    # --- design: outputs -------------------------------------------------------------------
    ([*PI, "--plot", "/nonexistent/x.png"], ["--plot", "/nonexistent/x.png"]),
    ([*PI, "--plot", "x.unknownext"], ["--plot", "x.unknownext", ".png"]),
    ([*PI, "--plot", "notes.txt"], ["--plot", "notes.txt"]),
    ([*PI, "--plot", "mine"], ["--plot", "mine"]),
    ([*SFC, "--plot", "mine/data.csv"], ["--plot", "mine/data.csv"]),
    # --- design: units -----------------------------------------------------------------------
    ([*PI[:-1], "0.246"], ["--rtt-max", "0.246", "give a unit"]),
    (["design", "pi", "--flows-min", "60", "--capacity", "3750", "--rtt-max", "246ms"],
     ["--capacity", "3750", "pps", "Mbps"]),
    ([*PI, "--pkt-size", "-1"], ["--pkt-size", "-1"]),
    ([*PI[:-1], "10Mbps"], ["--rtt-max", "10Mbps"]),
    (["design", "pi", "--flows-min", "60", "--capacity", "3750ms", "--rtt-max", "246ms"],
     ["--capacity", "3750ms"]),
    ([*PI, "--fs", "fast"], ["--fs", "fast"]),
    # --- design: non-finite, negative, out of range ----------------------------------------
    ([*PI, "--q-ref", "nan"], ["--q-ref", "nan"]),
    (["design", "pi", "--flows-min", "inf", "--capacity", "3750pps", "--rtt-max", "246ms"],
     ["--flows-min", "inf"]),
    ([*PI, "--z", "-1"], ["--z", "-1"]),
    ([*PI, "--gain-rule", "magic"], ["--gain-rule", "magic"]),
    ([*PDLQ, "--lam", "2"], ["--lam", "2"]),
    ([*PDLQ, "--p1", "nan"], ["--p1", "nan"]),
    ([*SFC, "--k2", "-0.1"], ["--k2", "-0.1"]),
    ([*SFC[:-1], "-600ms"], ["--rtt-max", "-600ms"]),
    ([*EDC, "--n-event", "0"], ["--n-event", "0"]),
    ([*EDC, "--kp", "inf"], ["--kp", "inf"]),
    ([*SQM, "--rho", "0.5"], ["--rho", "0.5"]),
    # --- design: malformed lists -------------------------------------------------------------
    (["design", "sqm-sigma", "--rates", "120pps,,80pps", "--rtts", "100ms"], ["--rates"]),
    (["design", "sqm-sigma", "--rates", "120,80", "--rtts", "100ms"], ["--rates", "120"]),
    (["design", "sqm-sigma", "--rates", "120pps,80pps", "--rtts", "100ms:"], ["--rtts", "100ms:"]),
    (["design", "sqm-sigma", "--rates", "120pps,80pps", "--rtts", "0.1:0.15"],
     ["--rtts", "0.1", "give a unit"]),
    (["design", "sqm-sigma", "--rates", "120pps,80pps", "--rtts", "1ms,2ms,3ms"],
     ["--rtts", "1ms,2ms,3ms"]),
    # --- fluid ---------------------------------------------------------------------------------
    (["fluid", "misra", "--duration", "1e7s"], ["--duration", "1e7s", "limit"]),
    (["fluid", "misra", "--duration", "1e7"], ["--duration", "1e7", "give a unit"]),
    (["fluid", "misra", "--duration", "1s", "--dt", "1ns"], ["--dt", "1ns", "GiB", "limit"]),
    (["fluid", "misra", "--rtt", "1e6s"], ["--rtt", "1e6s", "GiB"]),
    (["fluid", "edc", "--duration", "1e6s"], ["--duration", "1e6s", "limit"]),
    (["fluid", "kelly", "--duration", "1e9s"], ["--duration", "1e9s"]),
    (["fluid", "sqm", "--duration", "-5s"], ["--duration", "-5s"]),
    (["fluid", "misra", "--duration", "nans"], ["--duration", "nans"]),
    (["fluid", "misra", "--rtt", "0.2"], ["--rtt", "0.2", "give a unit"]),
    (["fluid", "misra", "--capacity", "3750"], ["--capacity", "3750", "pps"]),
    (["fluid", "misra", "--flows", "nan"], ["--flows", "nan"]),
    (["fluid", "misra", "--law", "red", "--max-th", "10"], ["--max-th", "10"]),
    (["fluid", "misra", "--law", "red", "--max-p", "inf"], ["--max-p", "inf"]),
    (["fluid", "misra", "--law", "pi", "--a", "nan"], ["--a", "nan"]),
    (["fluid", "misra", "--law", "xyz"], ["--law", "xyz"]),
    (["fluid", "gao-hou", "--ack-b", "-2"], ["--ack-b", "-2"]),
    (["fluid", "sqm", "--weights", "1,,2"], ["--weights", "1,,2"]),
    (["fluid", "sqm", "--weights", "1,x"], ["--weights", "1,x"]),
    (["fluid", "sqm", "--weights", "1,2,3", "--flows", "4"], ["--weights", "1,2,3"]),
    (["fluid", "kelly", "--rtt", "100ms,200ms,300ms"], ["--rtt", "100ms,200ms,300ms"]),
    (["fluid", "kelly", "--rtt", "100ms:200ms:300ms"], ["--rtt", "100ms:200ms:300ms"]),
    (["fluid", "misra", "--duration", "1s", "--out", "mine"], ["mine", "--force"]),
    (["fluid", "misra", "--duration", "1s", "--out", "."], ["'.'", "current folder"]),
    (["fluid", "misra", "--duration", "1s", "--out", "notes.txt"], ["notes.txt"]),
    # --- paqman --------------------------------------------------------------------------------
    (["paqman", "solve", "--service", "10Mbps", "--out", "."], ["--out", "'.'"]),
    (["paqman", "solve", "--service", "10Mbps", "--out", "notes.txt"], ["notes.txt", ".json"]),
    (["paqman", "solve", "--service", "10Mbps", "--out", "/nonexistent/p.json"],
     ["--out", "/nonexistent/p.json"]),
    (["paqman", "solve", "--service", "10", "--out", "p.json"], ["--service", "10", "unit"]),
    (["paqman", "solve", "--service", "10Mbps", "--drop-projection", "ceil", "--out", "p.json"],
     ["--drop-projection", "ceil", "split or floor"]),
    (["paqman", "solve", "--service", "10Mbps", "--target", "nanms", "--out", "p.json"],
     ["--target", "nanms"]),
    (["paqman", "solve", "--service", "10Mbps", "--buffer", "0", "--out", "p.json"],
     ["--buffer", "0"]),
    (["paqman", "evaluate", "{tmp}/nan.json", "--out", "ev"], ["nan.json", "unit_pps", "nan"]),
    (["paqman", "evaluate", "{tmp}/neg.json", "--out", "ev"], ["neg.json", "unit_pps", "-3"]),
    (["paqman", "evaluate", "{tmp}/missing.json", "--out", "ev"],
     ["missing.json", "unit_pps", "missing"]),
    (["paqman", "evaluate", "notes.txt", "--out", "ev"], ["notes.txt", "not JSON"]),
    # the model-level evaluation runs at the policy's own scenario: it needs its service rate
    (["paqman", "evaluate", "{tmp}/nosvc.json", "--out", "ev"],
     ["POLICY", "nosvc.json", "service_rate_pps is missing"]),
    (["paqman", "evaluate", "{tmp}/zerosvc.json", "--out", "ev"],
     ["zerosvc.json", "service_rate_pps = 0", "> 0"]),
    (["paqman", "evaluate", "{tmp}/notarget.json", "--out", "ev"],
     ["notarget.json", "target_delay_s is missing"]),
    (["paqman", "evaluate", "mine", "--out", "ev"], ["mine"]),
    (["paqman", "evaluate", "nosuchfile.json", "--out", "ev"], ["nosuchfile.json"]),
    (["paqman", "evaluate", "{tmp}/good.json", "--out", "mine"], ["--out", "mine", "--force"]),
    (["paqman", "evaluate", "{tmp}/good.json", "--arrivals", "1000000000", "--out", "ev"],
     ["--arrivals", "1000000000", "limit"]),
    (["paqman", "plot", "{tmp}/good.json", "--out", "p.unknownext"], ["--out", "p.unknownext"]),
    (["paqman", "figures", "--out", "mine"], ["--out", "mine"]),
    (["paqman", "figures", "--rtts", "1ms,,2ms", "--out", "f"], ["--rtts", "1ms,,2ms"]),
]  # fmt: skip


def _policies(folder: Path) -> None:
    """A small valid policy, three broken copies (unit_pps NaN, negative, missing) and three
    without the scenario the evaluation needs (no or zero service rate, no target)."""
    from aqmlab.mdp import negligible_rtt_model, solve

    doc = solve(negligible_rtt_model(833.3, 0.005, buffer=10, grid=4)).to_dict()
    (folder / "good.json").write_text(json.dumps(doc))
    for name, value in (("nan", float("nan")), ("neg", -3)):
        d = json.loads(json.dumps(doc))
        d["rate_grid"]["unit_pps"] = value
        (folder / f"{name}.json").write_text(json.dumps(d))
    d = json.loads(json.dumps(doc))
    del d["rate_grid"]["unit_pps"]
    (folder / "missing.json").write_text(json.dumps(d))
    for name, key, value in (("nosvc", "service_rate_pps", None), ("zerosvc", "service_rate_pps", 0),
                             ("notarget", "target_delay_s", None)):  # fmt: skip
        d = json.loads(json.dumps(doc))
        if value is None:
            del d[key]
        else:
            d[key] = value
        (folder / f"{name}.json").write_text(json.dumps(d))


@pytest.mark.parametrize("args,needles", ROWS, ids=[" ".join(r[0][:4]) for r in ROWS])
def test_bad_command_input(tmp_path, args, needles):
    if any("{tmp}" in a for a in args):
        _policies(tmp_path)
    t0 = time.perf_counter()
    assert_bad_input(args, needles, tmp_path)
    assert time.perf_counter() - t0 < 30  # refused up front, not after computing


def test_cost_refusal_is_fast(tmp_path):
    scratch(tmp_path)
    t0 = time.perf_counter()
    p = run(["fluid", "misra", "--duration", "1e7s"], tmp_path)
    assert p.returncode == 2 and "limit" in p.stderr
    # a second is the budget of the check itself; the rest is the interpreter's start-up
    from aqmlab.fluid import PI, Misra

    t1 = time.perf_counter()
    with pytest.raises(ValueError):
        Misra(60, 3750, 0.2, PI()).simulate(1e7)
    assert time.perf_counter() - t1 < 1.0
    assert time.perf_counter() - t0 < 30


# --- the Python API: ValueError naming the argument -----------------------------------------


def _api_rows():
    from aqmlab import design, fluid
    from aqmlab.mdp import negligible_rtt_model, solve
    from aqmlab.mdp.evaluate import evaluate

    small = negligible_rtt_model(833.3, 0.005, buffer=5, grid=2)
    return [
        (lambda: design.hollot_pi("60", 3750.0, 0.246), "n_min"),
        (lambda: design.hollot_pi(60, None, 0.246), "capacity"),
        (lambda: design.hollot_pi(60, 3750.0, float("nan")), "rtt_max"),
        (lambda: design.hollot_pi(60, 3750.0, 0.246, q_ref=-1), "q_ref"),
        (lambda: design.pd_lq_design(4000.0, 100, 0.15, 200.0, lam="fast"), "lam"),
        (lambda: design.sfc_design(1250.0, 300, 0.6, k2=float("inf")), "k2"),
        (lambda: design.sfc_design(1250.0, 300, 0.6).to_aqm(), "k1"),
        (lambda: design.edc_design(60, 187.5, 200.0, 0.1, kp=float("nan")), "kp"),
        (lambda: design.sqm_sigma([], []), "rates"),
        (lambda: design.sqm_sigma([100.0, 100.0], [0.1]), "rtts"),
        (lambda: design.sqm_sigma([100.0], [0.1], rho=float("nan")), "rho"),
        (lambda: fluid.PI(a=float("nan")), "a"),
        (lambda: fluid.Kelly(100.0, [], []), "rtt"),
        (lambda: fluid.SQM(1000.0, "x"), "rtt"),
        (lambda: fluid.Misra(60, 3750, 0.2, fluid.PI()).simulate(1.0, dt=float("nan")), "dt"),
        (lambda: fluid.Misra(60, 3750, 0.2, fluid.PI()).simulate(1e7), "duration"),
        (lambda: solve(small, eps=-1), "eps"),
        (lambda: evaluate(_without(solve(small), "service_pps"), runs=1), "service_rate_pps"),
    ]


def _without(policy, key):
    """``policy`` as a file without ``key`` reads it (the loader leaves the meta value None)."""
    policy.meta[key] = None
    return policy


@pytest.mark.parametrize("i", range(18))
def test_bad_api_argument(i):
    fn, name = _api_rows()[i]
    with pytest.raises(ValueError, match=name):
        fn()


def test_api_table_size():
    assert len(_api_rows()) == 18
