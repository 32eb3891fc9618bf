# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Live: the real Debian iperf2 (``/usr/bin/iperf``, 2.1.8) over 127.0.0.1, text and CSV parsed.

Each test starts a server bound to 127.0.0.1 on its own port in 15301-15329 with ``-t 2.5``
(``-t 4`` for ``-r``; it stops by itself, and is killed in ``finally`` otherwise), runs a
client of 1 s (1 s each way for ``-r``) under a subprocess timeout, and parses both outputs. A single run gives the
client's and the server's view of the same transfer, so the totals are checked against each
other: exactly for CSV vs CSV figures, within the rounding of the printed text (3
significant digits: 0.6 %) otherwise.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import pytest
from jsonschema import Draft202012Validator

from ansible_collections.esxilab.iperf.plugins.plugin_utils.iperf.iperf2_csv import parse_iperf2_csv
from ansible_collections.esxilab.iperf.plugins.plugin_utils.iperf.iperf2_text import (
    parse_iperf2_text,
    split_iperf2_text,
)
from ansible_collections.esxilab.iperf.plugins.plugin_utils.iperf.result import IperfResult, Result, plain
from tests.collection_path import SCHEMA

IPERF = "/usr/bin/iperf"
HOST = "127.0.0.1"
SERVER_TIME = 2.5  # seconds the server listens and receives (-t), then exits by itself
CLIENT_TIMEOUT = 15
TEXT_ROUNDING = 0.006  # "2.34 GBytes": 3 significant digits
CSV_SECONDS_ROUNDING = 0.05  # CSV intervals have one decimal: "0.0-1.0"
UDP_PAYLOAD = 1470
VALIDATOR = Draft202012Validator(json.loads(SCHEMA.read_text()))


def _version() -> str | None:
    if not os.access(IPERF, os.X_OK):
        return None
    try:
        out = subprocess.run([IPERF, "-v"], capture_output=True, text=True, timeout=10, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return None
    match = re.search(r"iperf version (\S+)", out.stdout + out.stderr)
    return match.group(1) if match else None


VERSION = _version()

pytestmark = [
    pytest.mark.live,
    pytest.mark.skipif(
        VERSION is None or not VERSION.startswith("2."), reason=f"{IPERF} is not iperf2 (apt-get install iperf)"
    ),
]


def _bound(port: int, udp: bool) -> bool:
    """Is 127.0.0.1:port bound? Read from /proc: a probing connect would start an iperf test."""
    table, state = ("/proc/net/udp", "07") if udp else ("/proc/net/tcp", "0A")
    try:
        lines = Path(table).read_text().splitlines()[1:]
    except OSError:
        return False
    for line in lines:
        fields = line.split()
        if len(fields) > 3 and fields[3] == state and int(fields[1].rsplit(":", 1)[1], 16) == port:
            return True
    return False


@dataclass
class Run:
    client: str
    server: str
    client_rc: int


def run_pair(
    port: int, server_args: list[str], client_args: list[str], *, udp: bool = False, server_time: float = SERVER_TIME
) -> Run:
    """Start ``iperf -s`` on ``port``, run one client against it, return both outputs."""
    if _bound(port, udp):
        pytest.fail(f"port {port} is already in use: an iperf left running?")
    server = subprocess.Popen(
        [IPERF, "-s", "-B", HOST, "-p", str(port), "-t", str(server_time), *server_args],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        deadline = time.monotonic() + 5
        while not _bound(port, udp):
            if server.poll() is not None or time.monotonic() > deadline:
                pytest.fail(f"iperf server on port {port} did not start (rc={server.poll()})")
            time.sleep(0.05)
        client = subprocess.run(
            [IPERF, "-c", HOST, "-p", str(port), *client_args],
            capture_output=True,
            text=True,
            timeout=CLIENT_TIMEOUT,
            check=False,
        )
        server_out, _stderr = server.communicate(timeout=server_time + 10)
    finally:
        if server.poll() is None:
            server.kill()
            server.communicate(timeout=5)
    return Run(client.stdout + client.stderr, server_out, client.returncode)


def valid(result: IperfResult) -> Result:
    errors = [f"{list(e.path)}: {e.message}" for e in VALIDATOR.iter_errors(result)]
    assert not errors, errors
    assert result["tool"] == "iperf2"
    assert result["error"] is None, result["error"]
    return plain(result)


def text(output: str) -> dict[str, Any]:
    return valid(parse_iperf2_text(output))


def csv(output: str, side: Literal["client", "server"] | None = None) -> dict[str, Any]:
    return valid(parse_iperf2_csv(output, side=side))


def plausible(
    totals: dict[str, Any] | None, *, low: float = 1e6, high: float = 1e12, csv_seconds: bool = False
) -> None:
    """Totals that hang together; ``csv_seconds``: parsed from CSV, whose interval has one decimal."""
    assert totals is not None
    assert totals["bytes"] > 0
    assert 0.5 < totals["seconds"] < 3.0
    assert low < totals["bits_per_second"] < high
    if csv_seconds:
        # CSV: exact bytes and bit/s, but the interval printed to 0.1 s ("0.0-1.0"); iperf divided by its
        # true duration, which lies within 0.05 s of the printed end. A 1 s test that a loaded machine
        # ends at 1.043 s prints 1.0 and a rate 4 % below bytes * 8 / 1.0 (measured: 634 vs 662 Mbit/s).
        rounding = CSV_SECONDS_ROUNDING
        implied = (
            totals["bytes"] * 8 / (totals["seconds"] + rounding),
            totals["bytes"] * 8 / (totals["seconds"] - rounding),
        )
        assert implied[0] <= totals["bits_per_second"] <= implied[1], (totals, implied)
    else:
        # text: seconds to 4 decimals; iperf's rate is bytes * 8 / seconds within the rounding of the printed figures
        assert totals["bits_per_second"] == pytest.approx(totals["bytes"] * 8 / totals["seconds"], rel=0.02)


def same_bytes(printed: dict[str, Any], exact: dict[str, Any], *, lost: int = 0) -> None:
    """A rounded (text) byte total equals an exact one within the text's rounding."""
    tolerance = printed["bytes"] * TEXT_ROUNDING + lost * UDP_PAYLOAD
    assert abs(printed["bytes"] - exact["bytes"]) <= tolerance, (printed, exact)


def udp_rate_ok(totals: dict[str, Any], target: float) -> None:
    assert totals["bits_per_second"] == pytest.approx(target, rel=0.15)


# ----------------------------------------------------------------------------- text


def test_tcp_text_client_and_server() -> None:
    port = 15301
    run = run_pair(port, [], ["-t", "1"])
    assert run.client_rc == 0, run.client
    client, server = text(run.client), text(run.server)
    assert (client["side"], server["side"]) == ("client", "server")
    assert client["protocol"] == server["protocol"] == "tcp"
    assert client["complete"] is server["complete"] is True
    plausible(client["sent"])
    plausible(server["received"])
    assert client["received"] is None and server["sent"] is None
    same_bytes(client["sent"], server["received"])
    assert client["remote"] == {"host": HOST, "port": port}
    assert server["local"] == {"host": HOST, "port": port}
    assert client["local"]["port"] == server["remote"]["port"]
    assert client["streams"] == server["streams"] == 1


def test_parallel_three_streams() -> None:
    port = 15302
    run = run_pair(port, ["-i", "0.5"], ["-t", "1", "-P", "3", "-i", "0.5"])
    client, server = text(run.client), text(run.server)
    assert client["streams"] == server["streams"] == 3
    assert len(client["per_stream"]) == len(server["per_stream"]) == 3
    # under load iperf 2.1 may print no final [SUM] line (seen on the server: 3 of 250 runs at load average
    # 10-17); the parser then leaves the total unknown and says so. A final [SUM] that ends early (the
    # client's, up to 0.27 s before every stream's total) is still the total (iperf2_text._sum_total)
    if client["sent"] is None:
        assert any("no final [SUM] line" in w for w in client["warnings"]), client["warnings"]
        assert all(item["sent"] for item in client["per_stream"])
    else:
        plausible(client["sent"])
    if server["received"] is None:
        assert any("no final [SUM] line" in w for w in server["warnings"]), server["warnings"]
        assert all(item["received"] for item in server["per_stream"])
    else:
        plausible(server["received"])
    if client["sent"] is not None and server["received"] is not None:
        same_bytes(client["sent"], server["received"])
    assert len(client["intervals"]) >= 2  # [SUM] lines every 0.5 s
    assert all(iv["end"] > iv["start"] for iv in client["intervals"])
    for item in client["per_stream"]:
        plausible(item["sent"], low=1e5)


def test_enhanced_columns() -> None:
    port = 15303
    run = run_pair(port, ["-e", "-i", "0.5"], ["-t", "1", "-e", "-i", "0.5"])
    client, server = text(run.client), text(run.server)
    plausible(client["sent"])
    assert isinstance(client["sent"]["retransmits"], int)  # the Rtry column
    assert all(isinstance(iv["retransmits"], int) for iv in client["intervals"])
    assert len(client["intervals"]) >= 1
    assert client["timestamp"] is not None and client["timestamp"].endswith("+00:00")
    plausible(server["received"])
    assert server["received"]["retransmits"] is None
    assert server["peer_version"] == VERSION
    same_bytes(client["sent"], server["received"])


def test_udp_20m() -> None:
    port = 15304
    run = run_pair(port, ["-u"], ["-t", "1", "-u", "-b", "20M"], udp=True)
    client, server = text(run.client), text(run.server)
    assert client["protocol"] == server["protocol"] == "udp"
    udp_rate_ok(client["sent"], 20e6)
    udp_rate_ok(client["received"], 20e6)  # the Server Report
    assert client["udp"]["jitter_ms"] is not None and client["udp"]["packets"] > 1000
    assert client["udp"]["sent_packets"] >= client["udp"]["packets"]
    assert client["complete"] is True
    # the Server Report is the server's own final line, printed again by the client
    assert client["received"] == server["received"]
    assert client["udp"]["packets"] == server["udp"]["packets"]
    assert client["udp"]["lost_packets"] == server["udp"]["lost_packets"]


# ----------------------------------------------------------------------------- CSV


def test_csv_tcp_client_against_text_server() -> None:
    port = 15305
    run = run_pair(port, [], ["-t", "1", "-y", "C", "-i", "0.5"])
    client, server = csv(run.client, side="client"), text(run.server)
    assert client["protocol"] == "tcp"
    plausible(client["sent"], csv_seconds=True)
    assert client["complete"] is True
    assert len(client["intervals"]) == 2
    assert client["timestamp_local"] is not None
    assert client["csv_endpoints"][1] == {"host": HOST, "port": port}
    same_bytes(server["received"], client["sent"])


def test_text_client_against_csv_server() -> None:
    port = 15306
    run = run_pair(port, ["-y", "C"], ["-t", "1"])
    client, server = text(run.client), csv(run.server, side="server")
    assert server["side"] == "server"
    plausible(server["received"], csv_seconds=True)
    assert server["sent"] is None
    same_bytes(client["sent"], server["received"])


def test_csv_udp_client_against_text_server() -> None:
    port = 15307
    run = run_pair(port, ["-u"], ["-t", "1", "-u", "-b", "20M", "-y", "C"], udp=True)
    client, server = csv(run.client), text(run.server)
    assert client["protocol"] == "udp"
    udp_rate_ok(client["sent"], 20e6)
    # 2.1.8 clients print no server report line in CSV: the receiver's view is unknown there
    assert client["received"] is None and client["complete"] is False
    same_bytes(server["received"], client["sent"], lost=server["udp"]["lost_packets"] or 0)


def test_csv_enhanced_tcp_client() -> None:
    port = 15308
    run = run_pair(port, ["-e"], ["-t", "1", "-e", "-y", "C", "-i", "0.5"])
    client, server = csv(run.client, side="client"), text(run.server)
    plausible(client["sent"], csv_seconds=True)
    # 2.1.8 -e CSV: 9 fields, time stamps with milliseconds and no zone
    assert client["timestamp"] is None
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}", client["timestamp_local"])
    same_bytes(server["received"], client["sent"])


def test_csv_enhanced_udp_client() -> None:
    port = 15309
    run = run_pair(port, ["-u", "-e"], ["-t", "1", "-u", "-b", "20M", "-e", "-y", "C"], udp=True)
    client, server = csv(run.client), text(run.server)
    assert client["protocol"] == "udp"
    udp_rate_ok(client["sent"], 20e6)
    udp_rate_ok(server["received"], 20e6)
    assert server["udp"]["jitter_ms"] is not None
    same_bytes(server["received"], client["sent"], lost=server["udp"]["lost_packets"] or 0)


def test_csv_udp_server_against_text_client() -> None:
    port = 15310
    run = run_pair(port, ["-u", "-y", "C"], ["-t", "1", "-u", "-b", "20M"], udp=True)
    client, server = text(run.client), csv(run.server, side="server")
    assert server["protocol"] == "udp"
    udp_rate_ok(server["received"], 20e6)
    # the client's Server Report (text, rounded) is the server's own total (CSV, exact)
    same_bytes(client["received"], server["received"])
    assert client["udp"]["packets"] == server["udp"]["packets"]
    assert client["udp"]["lost_packets"] == server["udp"]["lost_packets"]
    assert client["udp"]["jitter_ms"] == pytest.approx(server["udp"]["jitter_ms"], abs=0.0015)


def test_csv_same_run_client_and_server() -> None:
    port = 15311
    run = run_pair(port, ["-y", "C"], ["-t", "1", "-y", "C"])
    client, server = csv(run.client, side="client"), csv(run.server, side="server")
    # CSV byte counts are exact: a TCP sender's bytes are the receiver's bytes
    assert client["sent"]["bytes"] == server["received"]["bytes"]
    # each end's own interval, to 0.1 s: a 1 s test lasts at least 1 s; how much longer (the end of the
    # client's last write, the server's read of the end) depends on the scheduler (measured: 1.1 under load)
    for totals in (client["sent"], server["received"]):
        assert 1.0 <= totals["seconds"] < 3.0 and round(totals["seconds"], 1) == totals["seconds"], totals


# ----------------------------------------------------------------------------- both directions


#: iperf 2.1.8's own race in a test with a reverse connection: under load the server connects back before the
#: client listens on its -L port (server: "tcp connect failed: Connection refused"; client: "ERROR: expected reverse
#: connect did not occur"; 1 run in 8-12 with 3 busy loops on the 2 cores, and once in CI). Both outputs then say
#: so and no reverse test is made: the run is made again, at most RACE_TRIES times in all.
RACE_TRIES = 3


def run_reverse_pair(port: int, client_args: list[str], server_time: float) -> Run:
    """``run_pair`` again while iperf2's reverse-connect race (:data:`RACE_TRIES`) is all that went wrong."""
    for _attempt in range(RACE_TRIES - 1):
        run = run_pair(port, [], client_args, server_time=server_time)
        raced = "expected reverse connect did not occur" in run.client and "Connection refused" in run.server
        if not raced:
            return run
    return run_pair(port, [], client_args, server_time=server_time)


def test_dualtest_d() -> None:
    port, back = 15312, 15313
    # the server opens the reverse test when the client's arrives: it must still listen then (a loaded machine
    # starts the client late; with the default 2.5 s the server once exited first and no reverse test was made)
    run = run_reverse_pair(port, ["-t", "1", "-d", "-L", str(back)], server_time=5)
    client, server = text(run.client), text(run.server)
    assert (client["side"], server["side"]) == ("client", "server")
    assert client["bidir"] is server["bidir"] is True
    plausible(client["sent"])
    plausible(client["reverse_received"])
    plausible(server["received"])
    plausible(server["reverse_sent"])
    same_bytes(client["sent"], server["received"])
    same_bytes(client["reverse_received"], server["reverse_sent"])
    assert client["complete"] is server["complete"] is True


def test_dualtest_two_streams_each_way() -> None:
    port, back = 15320, 15321
    run = run_pair(port, [], ["-t", "1", "-d", "-L", str(back), "-P", "2"], server_time=5)
    client, server = text(run.client), text(run.server)
    assert (client["side"], server["side"]) == ("client", "server")
    assert client["streams"] == server["streams"] == 2
    # iperf's [SUM] adds both directions here: kept apart, per-stream figures compared
    assert client["bidir_sum"] is not None and server["bidir_sum"] is not None
    pairs = [
        ([i["sent"] for i in client["per_stream"]], [i["received"] for i in server["per_stream"]]),
        ([i["received"] for i in client["reverse_per_stream"]], [i["sent"] for i in server["reverse_per_stream"]]),
    ]
    for mine, theirs in pairs:
        for a, b in zip(sorted(mine, key=lambda t: t["bytes"]), sorted(theirs, key=lambda t: t["bytes"]), strict=True):
            plausible(a, low=1e5)
            same_bytes(a, b)


def test_tradeoff_r() -> None:
    port, back = 15314, 15315
    run = run_reverse_pair(port, ["-t", "1", "-r", "-L", str(back)], server_time=4)
    client, server = text(run.client), text(run.server)
    assert client["bidir"] is server["bidir"] is True
    same_bytes(client["sent"], server["received"])
    same_bytes(client["reverse_received"], server["reverse_sent"])


def test_reverse_R() -> None:
    port = 15316
    run = run_pair(port, [], ["-t", "1", "-R"])
    client, server = text(run.client), text(run.server)
    assert client["reverse"] is server["reverse"] is True
    assert client["sent"] is None and server["received"] is None
    plausible(client["received"])
    plausible(server["sent"])
    same_bytes(client["received"], server["sent"])
    assert client["bits_per_second"] == client["received"]["bits_per_second"]


def test_full_duplex() -> None:
    port = 15317
    run = run_pair(port, [], ["-t", "1", "--full-duplex"], server_time=5)
    client, server = text(run.client), text(run.server)
    assert client["bidir"] is server["bidir"] is True
    same_bytes(client["sent"], server["received"])
    same_bytes(client["reverse_received"], server["reverse_sent"])


def test_udp_reverse() -> None:
    port = 15318
    run = run_pair(port, ["-u"], ["-t", "1", "-u", "-b", "10M", "-R"], udp=True)
    client, server = text(run.client), text(run.server)
    assert client["reverse"] is server["reverse"] is True
    udp_rate_ok(client["received"], 10e6)
    udp_rate_ok(server["sent"], 10e6)
    assert client["udp"]["packets"] > 500
    same_bytes(client["received"], server["sent"], lost=client["udp"]["lost_packets"] or 0)


def test_server_log_of_two_consecutive_tests() -> None:
    port = 15319
    server = subprocess.Popen(
        [IPERF, "-s", "-B", HOST, "-p", str(port), "-t", "3.5"],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        deadline = time.monotonic() + 5
        while not _bound(port, udp=False):
            assert server.poll() is None and time.monotonic() < deadline, "iperf server did not start"
            time.sleep(0.05)
        outputs = [
            subprocess.run(
                [IPERF, "-c", HOST, "-p", str(port), "-t", "1", *extra],
                capture_output=True,
                text=True,
                timeout=CLIENT_TIMEOUT,
                check=False,
            ).stdout
            for extra in ([], ["-P", "2"])
        ]
        log, _stderr = server.communicate(timeout=15)
    finally:
        if server.poll() is None:
            server.kill()
            server.communicate(timeout=5)
    assert log.count("Server listening") == 1
    pieces = split_iperf2_text(log)
    assert len(pieces) == 2
    first, second = (text(piece) for piece in pieces)
    assert (first["streams"], second["streams"]) == (1, 2)
    same_bytes(first["received"], text(outputs[0])["sent"])
    same_bytes(second["received"], text(outputs[1])["sent"])
    assert any("holds 2 tests" in w for w in text(log)["warnings"])


# ----------------------------------------------------------------------------- failures


def test_connection_refused() -> None:
    port = 15329
    assert not _bound(port, udp=False)
    out = subprocess.run(
        [IPERF, "-c", HOST, "-p", str(port), "-t", "1"],
        capture_output=True,
        text=True,
        timeout=CLIENT_TIMEOUT,
        check=False,
    )
    result = parse_iperf2_text(out.stdout + out.stderr)
    assert not list(VALIDATOR.iter_errors(result))
    assert result["error"] is not None and "connect failed" in result["error"]
    assert result["complete"] is False
    assert result["bits_per_second"] is None
