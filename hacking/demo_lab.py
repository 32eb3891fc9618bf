# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The local demo: build the lab, run ``playbooks/demo.yml`` on it, tear the lab down.

1. ``lab/esxilab_lab.py up --hosts 4 --rate 1gbit --flow-rate 300mbit --state-dir lab/state`` -
   four network namespaces with real sshd on a bridge, every link shaped to 1 Gbit/s and every
   flow to 300 Mbit/s, so the stream sweep rises (1 stream 0.29 Gbit/s, 2 0.57, 3 0.86) and
   plateaus at the link (4 streams 0.96): the knee is at 4;
2. ``ansible-playbook -i lab/state/inventory.yml playbooks/demo.yml`` - one pair, a stream
   sweep, two pairs at once, all with real iperf3, then the report: ``results.json``, CSV,
   ``summary.md`` and PNG plots under ``reports/demo-<UTC time>/demo/`` (the run's directory,
   then the report's), and the table;
3. ``lab/esxilab_lab.py down`` - unless ``KEEP_LAB=1`` (or ``--keep``); run ``down`` yourself
   later, or play with the lab first (``ansible -i lab/state/inventory.yml lab -m ping``).

Needs root (network namespaces), iproute2, OpenSSH server, iperf3 and ansible-playbook (the
venv's, next to this Python, or on PATH). Traffic stays inside the lab (198.18.0.0/15).
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
#: The checkout as the collection esxilab.iperf (``make venv-demo`` makes the link; ansible.cfg
#: points collections_path at build/checkout and Ansible's home at build/ansible-home).
CHECKOUT_LINK = REPO / "build" / "checkout" / "ansible_collections" / "esxilab" / "iperf"
#: matplotlib's font cache and config, inside the checkout instead of ~/.cache and ~/.config.
MPLCONFIGDIR = REPO / "build" / "matplotlib"
LAB = REPO / "lab" / "esxilab_lab.py"
PLAYBOOK = REPO / "playbooks" / "demo.yml"
LAB_TIMEOUT = 300
PLAY_TIMEOUT = 900


def _ansible_playbook() -> str | None:
    beside = Path(sys.executable).parent / "ansible-playbook"
    return str(beside) if beside.exists() else shutil.which("ansible-playbook")


def missing_requirements() -> list[str]:
    """What keeps the demo from running here, each with its fix."""
    problems = []
    if os.geteuid() != 0:
        problems.append("the lab needs root (network namespaces, a bridge, tc): run it as root")
    for tool, package in (("ip", "iproute2"), ("tc", "iproute2"), ("ssh", "openssh-client"), ("iperf3", "iperf3")):
        if shutil.which(tool) is None:
            problems.append(f"{tool} is missing: apt-get install -y {package} (make deps)")
    if not Path("/usr/sbin/sshd").exists():
        problems.append("/usr/sbin/sshd is missing: apt-get install -y openssh-server (make deps)")
    if _ansible_playbook() is None:
        problems.append("ansible-playbook is missing: make venv-demo (or pip install -r requirements.txt)")
    if not CHECKOUT_LINK.is_dir() and not os.environ.get("ANSIBLE_COLLECTIONS_PATH"):
        problems.append(f"{CHECKOUT_LINK.relative_to(REPO)} is missing: make venv-demo makes it")
    return problems


def lab_command(args: argparse.Namespace, command: str, *extra: str) -> list[str]:
    return [sys.executable, str(LAB), command, "--name", args.name, "--state-dir", str(args.state_dir), *extra]


def newest_report(reports_dir: Path) -> Path | None:
    """The report of the newest run: reports/demo-<time>/<report>/ (playbooks/tasks/run-reports.yml)."""
    found = [p.parent for p in reports_dir.glob("demo-*/*/summary.md")]
    return max(found, key=lambda p: p.stat().st_mtime) if found else None


def run_demo(args: argparse.Namespace) -> int:
    """Up, play, (down); the playbook's exit code."""
    flow = ("--flow-rate", args.flow_rate) if args.flow_rate not in ("", "none") else ()
    up = lab_command(args, "up", "--hosts", str(args.hosts), "--rate", args.rate, *flow, "--subnet", args.subnet)
    print("$ " + " ".join(up), flush=True)
    subprocess.run(up, check=True, timeout=LAB_TIMEOUT)
    playbook = _ansible_playbook()
    if playbook is None:  # missing_requirements() said so already
        return 2
    argv = [
        playbook,
        *("-i", str(args.state_dir / "inventory.yml")),
        str(PLAYBOOK),
        *("-e", f"esxilab_reports_dir={args.reports_dir}", "-e", f"esxilab_demo_duration={args.duration}"),
    ]
    # run from the checkout: its ansible.cfg keeps Ansible's files out of ~/.ansible
    env = {"MPLCONFIGDIR": str(MPLCONFIGDIR), **os.environ}
    print("$ " + " ".join(argv), flush=True)
    played = subprocess.run(argv, check=False, timeout=PLAY_TIMEOUT, env=env, cwd=REPO)
    report = newest_report(args.reports_dir)
    if played.returncode == 0 and report is not None:
        plots = sorted(p.name for p in report.glob("*.png"))
        print(f"\nReport: {report / 'summary.md'}")
        print(f"Plots ({len(plots)}): {', '.join(plots) or 'none (matplotlib missing on the controller)'}")
        print(f"Data: {report / 'results.json'}, {report / 'results.csv'}")
    return played.returncode


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n", maxsplit=1)[0])
    parser.add_argument("--hosts", type=int, default=4, help="lab hosts (default 4)")
    parser.add_argument("--rate", default="1gbit", help="link rate of every lab host (default 1gbit)")
    parser.add_argument(
        "--flow-rate", default="300mbit", help="per-flow limit under the link rate (default 300mbit; none: no limit)"
    )
    parser.add_argument("--name", default="esxilab", help="lab prefix (default esxilab)")
    parser.add_argument("--subnet", default="198.18.0.0/24", help="lab subnet (default 198.18.0.0/24)")
    parser.add_argument("--state-dir", type=Path, default=REPO / "lab" / "state", help="lab state (default lab/state)")
    parser.add_argument("--reports-dir", type=Path, default=REPO / "reports", help="reports go here (default reports)")
    parser.add_argument("--duration", type=int, default=3, help="seconds per iperf run (default 3)")
    parser.add_argument("--keep", action="store_true", help="keep the lab afterwards (also KEEP_LAB=1)")
    args = parser.parse_args(argv)
    args.state_dir, args.reports_dir = args.state_dir.resolve(), args.reports_dir.resolve()
    problems = missing_requirements()
    if problems:
        for problem in problems:
            print(f"demo: {problem}", file=sys.stderr)
        return 2
    keep = args.keep or os.environ.get("KEEP_LAB", "") not in ("", "0")
    try:
        return run_demo(args)
    except subprocess.CalledProcessError as exc:
        print(f"demo: {' '.join(map(str, exc.cmd))} failed (exit {exc.returncode})", file=sys.stderr)
        return 1
    finally:
        if keep:
            print(f"\nThe lab is kept (KEEP_LAB): remove it with {' '.join(lab_command(args, 'down'))}")
        else:
            subprocess.run(lab_command(args, "down"), check=False, timeout=LAB_TIMEOUT)


if __name__ == "__main__":
    sys.exit(main())
