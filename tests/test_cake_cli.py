"""CAKE from the command line: its per-tin ``tc -s`` table and ``cake_tins`` in summary.json."""

import json
import subprocess
import sys


def test_cake_tins_in_summary_and_table(tmp_path):
    sc = tmp_path / "cake.toml"
    sc.write_text(
        'name = "cake"\nduration = "4s"\nwarmup = "1s"\n'
        '[dumbbell]\nrate = "20Mbps"\nrtt = "20ms"\n'
        '[aqm]\ntype = "cake"\nbandwidth = "10Mbit"\ndiffserv = "diffserv4"\n'
        '[[flows]]\ncount = 2\ndscp = "CS1"\n'
        '[[flows]]\nkind = "udp_cbr"\nrate = "200kbps"\ndscp = "EF"\n'
    )
    out = tmp_path / "o"
    r = subprocess.run(
        [sys.executable, "-m", "aqmlab", "run", str(sc), "--out", str(out), "--no-plots"],
        capture_output=True,
        text=True,
    )
    assert r.returncode == 0, r.stderr
    assert "cake tins" in r.stdout
    link = json.loads((out / "summary.json").read_text())["links"]["bottleneck"]
    tins = link["cake_tins"]
    assert sorted(tins) == ["best_effort", "bulk", "video", "voice"]
    # thresholds R, R/16, R/2, R/4 of the 10 Mbit/s shaper (Linux cake_config_diffserv4)
    assert [tins[t]["threshold_bps"] for t in ("best_effort", "bulk", "video", "voice")] == [
        10e6,
        625e3,
        5e6,
        2.5e6,
    ]
    assert tins["bulk"]["packets"] > 0 and tins["voice"]["packets"] > 0
    assert tins["video"]["packets"] == 0
