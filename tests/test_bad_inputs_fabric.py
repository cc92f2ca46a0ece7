"""Bad input to the fabric tables (``[fat_tree]``, ``[leaf_spine]``) and their flow keys
(``pattern``, ``senders``, ``size_cdf``, ``load``) through ``aqmlab run``: one line, exit 2, the
key and value named, no traceback, nothing written (harness: tests/badinput.py). The core's
table of every key's error is ``crates/experiment/src/scenario/fabric_tests.rs``.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from badinput import assert_bad_input  # noqa: E402

FT = 'duration = "10ms"\n[fat_tree]\nrate = "10Gbps"\n'
LS = 'duration = "10ms"\n[leaf_spine]\nrate = "10Gbps"\n'
PERM = '[[flows]]\npattern = "permutation"\nsize = "10kB"\n'

ROWS = [
    ("odd k", FT + "k = 5\n" + PERM, ["fat_tree.k = 5", "must be even"]),
    ("zero leaves", LS + "leaves = 0\n" + PERM, ["leaf_spine.leaves = 0"]),
    (
        "spine_rate and oversubscription",
        LS + 'spine_rate = "1Gbps"\noversubscription = 2\n' + PERM,
        ["leaf_spine.spine_rate", "1Gbps", "not both"],
    ),
    ("unknown ecmp", FT + 'ecmp = "random"\n' + PERM, ["fat_tree.ecmp", "random", "flow, packet"]),
    (
        "unknown tier",
        FT + '[fat_tree.aqm.spine]\ntype = "codel"\n' + PERM,
        ["fat_tree.aqm.spine", "unknown key"],
    ),
    ("no pattern", FT + "[[flows]]\ncount = 2\n", ["flows[0].pattern", "required on a fabric"]),
    (
        "too many incast senders",
        FT + '[[flows]]\npattern = "incast"\nsenders = 16\n',
        ["flows[0].senders = 16", "[1, 15]"],
    ),
    (
        "missing size_cdf file",
        FT + '[[flows]]\nkind = "tcp_short"\nsize_cdf = "nope.cdf"\nload = 0.3\n',
        ["flows[0].size_cdf", "nope.cdf", "cannot read"],
    ),
    (
        "load above 1",
        FT + '[[flows]]\nkind = "tcp_short"\nsize_cdf = "websearch"\nload = 1.5\n',
        ["flows[0].load = 1.5", "(0, 1]"],
    ),
    (
        "pattern on a dumbbell",
        'duration = "1s"\n[dumbbell]\nrate = "10Mbps"\n' + PERM,
        ["flows[0].pattern", "permutation", "only for fabrics"],
    ),
]


@pytest.mark.parametrize("name, toml, needles", ROWS, ids=[r[0] for r in ROWS])
def test_fabric_bad_input(tmp_path, name, toml, needles):
    (tmp_path / "s.toml").write_text(toml)
    assert_bad_input(["run", "{tmp}/s.toml", "--out", "{tmp}/res"], needles, tmp_path)


def test_a_size_cdf_file_is_read_beside_the_scenario(tmp_path):
    """A relative ``size_cdf`` is relative to the scenario's folder, and the result folder
    keeps a copy beside its ``scenario.toml`` (as a ``rate_trace``)."""
    from aqmlab.scenario import load_scenario

    (tmp_path / "sizes.cdf").write_text("# two sizes\n1000 0.5\n3000 1\n")
    (tmp_path / "s.toml").write_text(
        FT + '[[flows]]\nkind = "tcp_short"\nsize_cdf = "sizes.cdf"\nload = 0.1\n'
    )
    sc = load_scenario(tmp_path / "s.toml")
    files: dict[str, Path] = {}
    text = sc.to_toml(files)
    assert files == {"sizes.cdf": tmp_path / "sizes.cdf"}
    assert 'size_cdf = "sizes.cdf"' in text
    # the shipped names are not files
    (tmp_path / "w.toml").write_text(
        FT + '[[flows]]\nkind = "tcp_short"\nsize_cdf = "websearch"\nload = 0.1\n'
    )
    files = {}
    assert 'size_cdf = "websearch"' in load_scenario(tmp_path / "w.toml").to_toml(files)
    assert files == {}
