# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Benchmark: the paired_test role on the local lab, against iperf3 run by hand.

Figures, each printed with its goal:

1. accuracy -- mean total of the role's one-pair test divided by the mean of iperf3 run by
   hand (``ip netns exec <ns> iperf3 ...``, same options, same link), rounds alternating
   between the two (goal >= 0.98);
2. overhead -- wall time of ``ansible-playbook`` running that one-pair test minus the test's
   duration (goal <= 3 s), median of the rounds (Ansible's own start-up included);
3. start spread -- ``start_spread`` (last minus first ``started_at``) of 2, 4 and 8 concurrent
   pairs (rings h1->h2->...->hN->h1), worst of the rounds (goal <= 100 ms).

Builds its own lab (prefix ``ptbench``, 8 hosts on 198.19.243.0/24, every link shaped) in a
temporary state dir and removes it at the end, also on failure. Needs root. A script, not a
pytest test::

    python tests/bench/bench_paired.py                 # 3 rounds, 3 s tests, 1gbit links
    python tests/bench/bench_paired.py --rounds 5 --rate 500mbit
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from tests.collection_path import ensure_collection_path  # noqa: E402

LAB = REPO / "lab" / "esxilab_lab.py"
PLAYBOOK = REPO / "tests" / "integration" / "targets" / "paired_test" / "paired_test.yml"
ANSIBLE_PLAYBOOK = Path(sys.executable).parent / "ansible-playbook"
PREFIX = "ptbench"
SUBNET = "198.19.243"
HOSTS = 8
PORT_BASE = 25401
HAND_PORT = 25499
GOAL_RATIO = 0.98
GOAL_OVERHEAD = 3.0
GOAL_SPREAD = 0.100


def address(host: int) -> str:
    return f"{SUBNET}.{10 + host}"


def lab(state_dir: Path, command: str, *args: str) -> None:
    argv = [sys.executable, str(LAB), command, "--name", PREFIX, "--state-dir", str(state_dir), *args]
    proc = subprocess.run(argv, capture_output=True, text=True, timeout=120, check=False)
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(argv)} failed:\n{proc.stdout}{proc.stderr}")


def play(
    state_dir: Path, work: Path, tests: list[dict[str, Any]], name: str, limit: str | None = None
) -> tuple[float, dict[str, Any], list[tuple[float, str]]]:
    """Run the role; return (wall seconds, report document, (seconds since start, task) per task)."""
    variables = {
        "paired_test_tests": tests,
        "paired_test_address_var": "lab_address",
        "paired_test_port_base": PORT_BASE,
        "paired_test_state_dir": str(work),
        "paired_test_report_dir": str(work),
        "paired_test_report_name": name,
    }
    vars_file = work / f"{name}.vars.json"
    vars_file.write_text(json.dumps(variables))
    env = dict(
        os.environ, ANSIBLE_COLLECTIONS_PATH=str(ensure_collection_path()), ANSIBLE_FORKS="16", ANSIBLE_NOCOLOR="1"
    )
    argv = [str(ANSIBLE_PLAYBOOK), "-i", str(state_dir / "inventory.yml"), str(PLAYBOOK), "-e", f"@{vars_file}"]
    if limit:
        argv += ["--limit", limit]
    started = time.monotonic()
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env)
    assert proc.stdout is not None
    marks: list[tuple[float, str]] = []
    lines: list[str] = []
    for line in proc.stdout:  # ansible-playbook prints a task's header when it starts it
        lines.append(line)
        if line.startswith(("TASK [", "PLAY RECAP")):
            marks.append((time.monotonic() - started, line.split(" : ", 1)[-1].strip(" *\n[]")))
    rc = proc.wait(timeout=300)
    wall = time.monotonic() - started
    if rc != 0:
        raise SystemExit(f"the playbook failed (rc={rc}):\n{''.join(lines)[-4000:]}")
    # the role's report directory <name>-<UTC time>; the run records are each run's "record" in results.json
    (path,) = work.glob(f"{name}-*/results.json")
    document = json.loads(path.read_text())
    return wall, {"results": [run["record"] for run in document["runs"]]}, marks


PHASES = (
    ("ansible start-up", None),
    ("preflight (plan, asserts, iperf_facts)", "Expand the tests into runs"),
    ("server start", "Start the iperf servers of this host"),
    ("barrier", "Set the common start time of the clients"),
    ("client task (incl. the test)", "Run the iperf client of this host"),
    ("server stop", "Stop the iperf servers of this host"),
    ("record, summary, report files", "Hand over what this host did in the run"),
)


def phases(marks: list[tuple[float, str]], wall: float) -> list[tuple[str, float]]:
    """Seconds per phase of a one-run playbook, from the task start times."""
    starts = {task: at for at, task in reversed(marks)}  # first start of each task
    points = [0.0] + [starts.get(task or "", 0.0) for _label, task in PHASES[1:]] + [wall]
    return [(label, points[i + 1] - points[i]) for i, (label, _task) in enumerate(PHASES)]


def by_hand(duration: int) -> float:
    """iperf3 h2 -> h1 with the same options the role uses; the receiver's bit/s."""
    server = subprocess.Popen(
        ["ip", "netns", "exec", f"{PREFIX}-h1", "iperf3", "-s", "-1", "-p", str(HAND_PORT), "-B", address(1)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 10
        while True:
            client = subprocess.run(
                ["ip", "netns", "exec", f"{PREFIX}-h2", "iperf3", "-c", address(1), "-p", str(HAND_PORT), "-J",
                 "-t", str(duration), "-P", "1", "-B", address(2)],
                capture_output=True, text=True, timeout=duration + 30, check=False,
            )  # fmt: skip
            doc = json.loads(client.stdout)
            if "error" not in doc:
                return float(doc["end"]["sum_received"]["bits_per_second"])
            if time.monotonic() > deadline:
                raise SystemExit(f"iperf3 by hand failed: {doc['error']}")
            time.sleep(0.1)  # the server is not listening yet
    finally:
        if server.poll() is None:
            server.send_signal(signal.SIGTERM)
        server.wait(timeout=10)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n", 1)[0])
    parser.add_argument("--rounds", type=int, default=3, help="rounds of each measurement (default 3)")
    parser.add_argument("--duration", type=int, default=3, help="test length in seconds (default 3)")
    parser.add_argument("--rate", default="1gbit", help="tbf rate of every lab link (default 1gbit)")
    args = parser.parse_args(argv)
    if os.geteuid() != 0:
        print("the lab needs root", file=sys.stderr)
        return 2

    with tempfile.TemporaryDirectory(prefix="bench-paired-") as tmp:
        state_dir, work = Path(tmp) / "state", Path(tmp) / "work"
        work.mkdir()
        lab(state_dir, "down", "--purge")
        try:
            lab(state_dir, "up", "--hosts", str(HOSTS), "--subnet", f"{SUBNET}.0/24", "--rate", args.rate)
            one = [{"name": "one", "pairs": [{"server": "h1", "client": "h2"}], "duration": args.duration}]
            play(state_dir, work, one, "warmup", limit="h1,h2")  # ssh masters up, caches warm

            role_rates: list[float] = []
            hand_rates: list[float] = []
            walls: list[float] = []
            breakdowns: list[list[tuple[str, float]]] = []
            for index in range(args.rounds):
                wall, doc, marks = play(state_dir, work, one, f"one-{index}", limit="h1,h2")
                walls.append(wall)
                breakdowns.append(phases(marks, wall))
                role_rates.append(float(doc["results"][0]["total_bits_per_second"]))
                hand_rates.append(by_hand(args.duration))
                print(
                    f"round {index + 1}: role {role_rates[-1] / 1e6:8.2f} Mbit/s (wall {wall:5.2f} s)   "
                    f"by hand {hand_rates[-1] / 1e6:8.2f} Mbit/s",
                    flush=True,
                )

            spreads: dict[int, list[float]] = {}
            for pairs in (2, 4, 8):
                ring = [{"server": f"h{i}", "client": f"h{i % pairs + 1}"} for i in range(1, pairs + 1)]
                tests = [{"name": f"ring{pairs}", "pairs": ring, "duration": 2, "repeat": args.rounds}]
                _wall, doc, _marks = play(
                    state_dir, work, tests, f"ring{pairs}", limit=",".join(f"h{i}" for i in range(1, pairs + 1))
                )
                spreads[pairs] = [float(r["start_spread"]) for r in doc["results"]]
                margins = [r["barrier_margin"] for r in doc["results"]]
                print(
                    f"{pairs} pairs: start spreads {', '.join(f'{s * 1000:.1f}' for s in spreads[pairs])} ms; "
                    f"start delays {', '.join(str(r['start_delay']) for r in doc['results'])} s; "
                    f"margins {', '.join(f'{m:.2f}' for m in margins if m is not None)} s",
                    flush=True,
                )
        finally:
            lab(state_dir, "down", "--purge")

    ratio = statistics.fmean(role_rates) / statistics.fmean(hand_rates)
    overhead = statistics.median(walls) - args.duration
    print()
    print(f"lab      : {HOSTS} hosts, tbf {args.rate} per host and direction, {args.rounds} rounds, {args.duration} s")
    print(f"{'figure':<44}{'value':>12}{'goal':>10}  verdict")
    rows = [
        ("accuracy: role / iperf3 by hand (mean)", f"{ratio:.4f}", f">= {GOAL_RATIO}", ratio >= GOAL_RATIO),
        (
            f"overhead: playbook wall - {args.duration} s (median)",
            f"{overhead:.2f} s",
            f"<= {GOAL_OVERHEAD:g} s",
            overhead <= GOAL_OVERHEAD,
        ),
    ]
    for pairs, values in spreads.items():
        worst = max(values)
        rows.append(
            (f"start spread, {pairs} pairs (worst)", f"{worst * 1000:.1f} ms", "<= 100 ms", worst <= GOAL_SPREAD)
        )
    for label, value, goal, ok in rows:
        print(f"{label:<44}{value:>12}{goal:>10}  {'ok' if ok else 'MISSED'}")
    print("\none-pair playbook, median seconds per phase:")
    for index, (label, _task) in enumerate(PHASES):
        print(f"  {label:<40}{statistics.median(b[index][1] for b in breakdowns):6.2f}")
    print(
        f"\nrates    : role {statistics.fmean(role_rates) / 1e6:.2f} Mbit/s, by hand "
        f"{statistics.fmean(hand_rates) / 1e6:.2f} Mbit/s; walls {', '.join(f'{w:.2f}' for w in walls)} s"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
