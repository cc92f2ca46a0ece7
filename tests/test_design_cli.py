"""`aqmlab design` command line: JSON contract, figures, input errors."""

import json

import pytest
from aqmlab.cli import app
from typer.testing import CliRunner

runner = CliRunner()


def run_json(*args):
    res = runner.invoke(app, ["design", *args, "--json"])
    assert res.exit_code == 0, res.output
    return json.loads(res.stdout)  # exactly one JSON object on stdout


def test_pi_json():
    d = run_json(
        "pi", "--flows-min", "60", "--capacity", "3750pps", "--rtt-max", "246ms", "--fs", "160Hz"
    )
    assert {"a", "b", "K", "z"} <= d.keys()
    assert f"{d['a']:.4g}" == "1.822e-05" and f"{d['b']:.4g}" == "1.816e-05"
    assert f"{d['z']:.3f}" == "0.529"
    assert d["K"] == pytest.approx(9.64e-6, rel=3e-3)  # paper rounds z to 0.53, see test_design_pi


@pytest.mark.parametrize(
    "extra,prop,expected",
    [
        ([], "150ms", ("5.657e-04", "3.626e-04", "4.894e-05", 0.0303)),
        (["--memory"], "350ms", ("6.093e-04", "5.672e-04", "1.308e-04", 0.00775)),
    ],
)
def test_pd_lq_json(extra, prop, expected):
    d = run_json(
        "pd-lq", "--capacity", "4000pps", "--flows", "100", "--prop-rtt", prop, "--q-ref", "200",
        "--p1", "1", "--lam", "-3.75", *extra,
    )  # fmt: skip
    assert {"H1", "H2", "H3", "p_star"} <= d.keys()
    assert tuple(f"{d[k]:.3e}" for k in ("H1", "H2", "H3")) == expected[:3]
    assert d["p_star"] == pytest.approx(expected[3], abs=5e-5)


def test_sfc_json():
    d = run_json(
        "sfc", "--capacity", "1250pps", "--flows-min", "300", "--rtt-max", "600ms", "--b", "2",
        "--k2", "0.2",
    )  # fmt: skip
    assert {"alpha", "p0", "theta", "k2_max", "k1_max_printed", "k1_max_exact"} <= d.keys()
    assert f"{d['alpha']:.2g} {d['p0']:.3f} {d['theta']:.3f} {d['k2_max']:.3f}" == (
        "2.5 0.143 1.787 0.523"
    )
    assert f"{d['k1_max_printed']:.5f} {d['k1_max_exact']:.5f}" == "0.00070 0.00086"


def test_edc_and_sqm_sigma_json():
    d = run_json("edc", "--flows", "60", "--capacity", "187.5pps", "--prop-rtt", "100ms")
    assert d["stable"] and 0.985 < d["spectral_radius"] < 0.995
    d = run_json(
        "sqm-sigma", "--rates", ",".join(["120pps"] * 5 + ["80pps"] * 5), "--rtts", "100ms:150ms"
    )
    assert f"{d['J']:.2f} {d['norm_A']:.3f} {d['rhs']:.3f}" == "3.03 0.459 0.356"
    assert len(d["sigma"]) == 10 and d["satisfied"]


@pytest.mark.parametrize(
    "args",
    [
        ["pi", "--flows-min", "60", "--capacity", "3750pps", "--rtt-max", "246ms", "--plot-kind", "nyquist"],
        ["pd-lq", "--capacity", "4000pps", "--flows", "100", "--prop-rtt", "150ms", "--q-ref", "200"],
        ["sfc", "--capacity", "1250pps", "--flows-min", "300", "--rtt-max", "600ms", "--k1", "0.0005"],
        ["edc", "--flows", "60", "--capacity", "187.5pps", "--prop-rtt", "100ms"],
        ["sqm-sigma", "--rates", "120pps,80pps", "--rtts", "100ms,150ms"],
    ],
)  # fmt: skip
def test_plot_writes_a_png(tmp_path, args):
    out = tmp_path / "fig.png"
    res = runner.invoke(app, ["design", *args, "--plot", str(out)])
    assert res.exit_code == 0, res.output
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


@pytest.mark.parametrize(
    "args,option,value",
    [
        (["pi", "--flows-min", "60", "--capacity", "-3750pps", "--rtt-max", "246ms"], "--capacity", "-3750pps"),
        (["pi", "--flows-min", "60", "--capacity", "3750pps", "--rtt-max", "246ms", "--fs", "0"], "--fs", "0"),
        (["pd-lq", "--capacity", "4000pps", "--flows", "100", "--prop-rtt", "150ms", "--q-ref", "200", "--lam", "2"], "--lam", "2"),
        (["sfc", "--capacity", "1250pps", "--flows-min", "300", "--rtt-max", "-600ms"], "--rtt-max", "-600ms"),
        (["edc", "--flows", "60", "--capacity", "187.5pps", "--prop-rtt", "100ms", "--n-event", "0"], "--n-event", "0"),
        (["sqm-sigma", "--rates", "120pps,-80pps", "--rtts", "100ms,150ms"], "--rates", "-80pps"),
        (["sqm-sigma", "--rates", "120pps,80pps", "--rtts", "100ms,150ms", "--rho", "0.5"], "--rho", "0.5"),
    ],
)  # fmt: skip
def test_bad_input_one_line_error_nothing_written(tmp_path, args, option, value):
    out = tmp_path / "fig.png"
    res = runner.invoke(app, ["design", *args, "--plot", str(out), "--json"])
    assert res.exit_code != 0
    assert res.stdout == ""
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1 and option in lines[0] and value in lines[0]
    assert not out.exists()


def test_infeasible_operating_point_is_reported():
    res = runner.invoke(
        app, ["design", "sfc", "--capacity", "1250pps", "--flows-min", "3000", "--rtt-max", "600ms"]
    )
    assert res.exit_code == 2
    assert "equilibrium" in res.stderr and len(res.stderr.strip().splitlines()) == 1


def test_bit_rate_capacity_equals_packet_rate():
    # 30 Mb/s of 1000-byte packets (the default --pkt-size) is 3750 packets/s
    a = run_json("pi", "--flows-min", "60", "--capacity", "3750pps", "--rtt-max", "246ms")
    b = run_json("pi", "--flows-min", "60", "--capacity", "30Mbps", "--rtt-max", "246ms")
    c = run_json(
        "pi",
        "--flows-min",
        "60",
        "--capacity",
        "15Mbps",
        "--pkt-size",
        "500",
        "--rtt-max",
        "0.246s",
    )
    assert a["a"] == pytest.approx(b["a"]) == pytest.approx(c["a"])
    assert a["aqm"] == {"type": "pi", "a": a["a"], "b": a["b"], "w": 160.0, "q_ref": 200.0}


def test_plot_formats_and_force(tmp_path):
    args = ["design", "sfc", "--capacity", "1250pps", "--flows-min", "300", "--rtt-max", "600ms"]
    for ext in ("pdf", "svg", "jpg"):
        out = tmp_path / f"fig.{ext}"
        res = runner.invoke(app, [*args, "--plot", str(out)])
        assert res.exit_code == 0, res.output
        assert out.stat().st_size > 0
    out = tmp_path / "fig.pdf"
    before = out.read_bytes()
    res = runner.invoke(app, [*args, "--plot", str(out)])
    assert res.exit_code == 2 and "--force" in res.stderr and out.read_bytes() == before
    res = runner.invoke(app, [*args, "--plot", str(out), "--force"])
    assert res.exit_code == 0, res.output
    assert sorted(p.name for p in tmp_path.iterdir()) == ["fig.jpg", "fig.pdf", "fig.svg"]


def test_help_shows_flags_and_units():
    res = runner.invoke(app, ["design", "pd-lq", "--help"])
    assert "--memory" in res.stdout and "--no-memory" not in res.stdout
    assert "--no-json" not in res.stdout and "--no-force" not in res.stdout
    res = runner.invoke(
        app, ["design", "pi", "--flows-min", "60", "--capacity", "3750pps", "--rtt-max", "246ms"]
    )
    assert "a [1/packet]" in res.stdout and "delay_margin [s]" in res.stdout


def test_designed_pi_flows_into_a_simulation():
    # Hollot's PI for 60 flows on 15 Mb/s of 500-byte packets, R+ = 200 ms + 200 queued packets
    from aqmlab.design import hollot_pi
    from aqmlab.sim import simulate

    d = run_json(
        "pi", "--flows-min", "60", "--capacity", "15Mbps", "--pkt-size", "500",
        "--rtt-max", "253ms", "--q-ref", "200",
    )  # fmt: skip
    assert d["aqm"] == hollot_pi(60, 3750.0, 0.253, q_ref=200).to_aqm()
    # the window starts after the PI's settling: the 60 flows' slow start overshoots to ~400
    # packets in the first 5 s and the integrator undershoots (~60-80) in the next 5 s
    # (seeds 1-2); from 10 s on the 5-s means stay within 165-240
    scenario = {
        "duration": "25s",
        "warmup": "10s",
        "dumbbell": {"rate": "15Mbps", "rtt": "200ms", "buffer": 800, "pkt_size": 500},
        "aqm": d["aqm"],
        "flows": [{"count": 60}],
    }
    link = simulate(scenario).link("bottleneck")
    assert link["aqm"] == "pi" and link["utilization"] > 0.95
    assert 150 < link["mean_queue_pkts"] < 250  # regulated around q_ref = 200


def test_to_aqm_names():
    from aqmlab.aqm import aqm_config
    from aqmlab.design import edc_design, hollot_pi, pd_lq_design, sfc_design, sqm_sigma

    pi = hollot_pi(60, 3750.0, 0.246, fs=160.0, q_ref=200).to_aqm()
    assert pi == {"type": "pi", "a": pi["a"], "b": pi["b"], "w": 160.0, "q_ref": 200.0}
    params = {k: v for k, v in pi.items() if k != "type"}
    assert aqm_config("pi", params)  # the simulator accepts every name and value
    assert set(pd_lq_design(4000.0, 100, 0.15, 200.0).to_aqm()) == {
        "type", "h1", "h2", "h3", "p1", "q_ref", "p_offset", "t_update",
    }  # fmt: skip
    mem = pd_lq_design(4000.0, 100, 0.35, 200.0, memory=True).to_aqm()
    assert mem["memory"] is True and mem["tau"] == pytest.approx(0.4)
    assert sfc_design(1250.0, 300, 0.6, k1=0.0005).to_aqm() == {
        "type": "sfc", "k1": 0.0005, "k2": 0.2, "capacity": 1250.0, "q_ref": 50.0,
    }  # fmt: skip
    assert edc_design(60, 187.5, 200.0, 0.1).to_aqm() == {
        "type": "edc", "kp": 0.03, "ki": 0.01, "q_ref": 200.0, "n_event": 30,
    }  # fmt: skip
    sq = sqm_sigma([120.0, 80.0], [0.1, 0.15], beta=5.0).to_aqm()
    assert sq["type"] == "sqm" and sq["weights"] == [120.0, 80.0] and sq["beta"] == [5.0, 5.0]
    assert len(sq["sigma"]) == 2
