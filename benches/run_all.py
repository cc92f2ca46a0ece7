"""Run every benchmark script in this folder (``bench_*.py``) one after the other.

Each script prints its own table: seconds, the bar it is held to, and a ratio against a reference
run in the same script. This runner only sequences them and reports which ones failed.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path


def main() -> int:
    here = Path(__file__).resolve().parent
    scripts = sorted(here.glob("bench_*.py"))
    failed = []
    for script in scripts:
        print(f"\n=== {script.name} ===", flush=True)
        rc = subprocess.call([sys.executable, str(script)])
        if rc != 0:
            failed.append(f"{script.name} (exit {rc})")
    print("\n=== summary ===")
    print(f"{len(scripts) - len(failed)} passed, {len(failed)} failed")
    for name in failed:
        print(f"  failed: {name}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
