# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""``make demo``: real iperf3 and iperf runs on this machine, parsed and printed as a table.

Every figure in the table is parsed from the tool's own output by the collection's results
core (the same code the ``iperf_parse`` filter and the modules use). Traffic stays on the
loopback interface (127.0.0.1).
"""

from __future__ import annotations

import argparse
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from tests.collection_path import ensure_collection_path

ensure_collection_path()

from ansible_collections.esxilab.iperf.plugins.module_utils._parse import parse  # noqa: E402
from ansible_collections.esxilab.iperf.plugins.module_utils._result import Result  # noqa: E402

LOOPBACK = "127.0.0.1"


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind((LOOPBACK, 0))
        port: int = sock.getsockname()[1]
        return port


def _wait_listening(port: int, timeout: float = 5.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        with socket.socket() as sock:
            if sock.connect_ex((LOOPBACK, port)) == 0:
                return
        time.sleep(0.05)
    raise RuntimeError(f"no iperf server listening on {LOOPBACK}:{port} after {timeout} s")


def run_pair(server_cmd: Sequence[str], client_cmd: Sequence[str], port: int, udp: bool, timeout: float) -> str:
    """Start a server, run one client against it, stop the server; return the client's output."""
    server = subprocess.Popen(list(server_cmd), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        if udp:
            time.sleep(0.5)  # a UDP server has no TCP socket to probe for iperf2; iperf3 has its control port
        else:
            _wait_listening(port)
        done = subprocess.run(list(client_cmd), capture_output=True, text=True, timeout=timeout, check=False)
        return done.stdout + done.stderr
    finally:
        server.kill()
        server.wait(timeout=5)


def _cases(duration: int) -> list[tuple[str, list[str], list[str], bool]]:
    t = str(duration)
    cases: list[tuple[str, list[str], list[str], bool]] = []
    if shutil.which("iperf3"):
        for label, extra, udp in (
            ("iperf3 TCP -J", ["-J"], False),
            ("iperf3 TCP -P 4 text", ["-P", "4"], False),
            ("iperf3 TCP -R -J", ["-R", "-J"], False),
            ("iperf3 UDP -b 100M text", ["-u", "-b", "100M"], False),
        ):
            cases.append(
                (
                    label,
                    ["iperf3", "-s", "-1", "-B", LOOPBACK, "-p", "{port}"],
                    ["iperf3", "-c", LOOPBACK, "-p", "{port}", "-t", t, *extra],
                    udp,
                )
            )
    if shutil.which("iperf"):
        cases.append(
            (
                "iperf2 TCP -e text",
                ["iperf", "-s", "-B", LOOPBACK, "-p", "{port}"],
                ["iperf", "-c", LOOPBACK, "-p", "{port}", "-t", t, "-e"],
                False,
            )
        )
        cases.append(
            (
                "iperf2 TCP -P 2 CSV",
                ["iperf", "-s", "-B", LOOPBACK, "-p", "{port}"],
                ["iperf", "-c", LOOPBACK, "-p", "{port}", "-t", t, "-P", "2", "-y", "C"],
                False,
            )
        )
        cases.append(
            (
                "iperf2 UDP -b 100M text",
                ["iperf", "-s", "-u", "-B", LOOPBACK, "-p", "{port}"],
                ["iperf", "-c", LOOPBACK, "-u", "-b", "100M", "-p", "{port}", "-t", t],
                True,
            )
        )
    return cases


def _mbit(value: float | None) -> str:
    return "-" if value is None else f"{value / 1e6:,.1f}"


def _row(label: str, result: Result) -> list[str]:
    sent, received = result.get("sent") or {}, result.get("received") or {}
    retr = sent.get("retransmits")
    loss = (result.get("udp") or {}).get("lost_percent")
    return [
        label,
        f"{result['tool']} {result['tool_version'] or '?'}",
        result["format"],
        str(result["streams"]),
        _mbit(sent.get("bits_per_second")),
        _mbit(received.get("bits_per_second")),
        _mbit(result["bits_per_second"]),
        "-" if retr is None else str(retr),
        "-" if loss is None else f"{loss:.2f}",
        "yes" if result["complete"] else "NO",
    ]


def print_table(rows: list[list[str]]) -> None:
    header = [
        "run",
        "tool",
        "parsed",
        "streams",
        "sent Mbit/s",
        "recv Mbit/s",
        "headline",
        "retr",
        "loss %",
        "complete",
    ]
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header))]
    line = "  ".join(h.ljust(w) for h, w in zip(header, widths, strict=True))
    print(line)
    print("  ".join("-" * w for w in widths))
    for row in rows:
        print("  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)))


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--duration", type=int, default=2, help="seconds per run (default 2)")
    args = parser.parse_args(argv)
    cases = _cases(args.duration)
    if not cases:
        print("neither iperf3 nor iperf is installed: run `make deps` (apt-get install iperf3 iperf)", file=sys.stderr)
        return 2
    rows: list[list[str]] = []
    for label, server, client, udp in cases:
        port = _free_port()
        server_cmd = [a.replace("{port}", str(port)) for a in server]
        client_cmd = [a.replace("{port}", str(port)) for a in client]
        print(f"running {label}: {' '.join(client_cmd)}", flush=True)
        raw = run_pair(server_cmd, client_cmd, port, udp, timeout=args.duration + 20)
        result = parse(raw)
        rows.append(_row(label, result))
        for warning in result["warnings"]:
            print(f"  warning: {warning}")
        if result["error"]:
            print(f"  error: {result['error']}")
    print()
    print_table(rows)
    return 0


if __name__ == "__main__":
    sys.exit(main())
