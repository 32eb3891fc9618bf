# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Live: the real Debian iperf3 over 127.0.0.1, its ``-J`` output parsed and checked.

Each test starts a one-off server (``iperf3 -s -1 -p PORT -B 127.0.0.1``) on its own port
in 15210-15229, runs a client of at most 2 s with ``-J`` under a subprocess timeout, and
always stops the server. Figures are checked for structure and plausibility (not exact
values: they come from a real run).
"""

from __future__ import annotations

import json
import os
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator

from ansible_collections.esxilab.iperf.plugins.plugin_utils.iperf.iperf3_json import parse_iperf3_json
from ansible_collections.esxilab.iperf.plugins.plugin_utils.iperf.result import Result, plain
from tests.collection_path import SCHEMA
from tests.processes import end_process

IPERF3 = "/usr/bin/iperf3"
HOST = "127.0.0.1"
CLIENT_TIMEOUT = 20
VALIDATOR = Draft202012Validator(json.loads(SCHEMA.read_text()))

pytestmark = [
    pytest.mark.live,
    pytest.mark.skipif(not os.access(IPERF3, os.X_OK), reason=f"{IPERF3} is not installed (apt-get install iperf3)"),
]


def _listening(port: int) -> bool:
    """A TCP listener on ``port``? Read from /proc: a probing connect would start an iperf3 test."""
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            lines = Path(table).read_text().splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            fields = line.split()
            if len(fields) > 3 and fields[3] == "0A" and int(fields[1].rsplit(":", 1)[1], 16) == port:
                return True
    return False


@contextmanager
def _server(port: int) -> Iterator[subprocess.Popen[bytes]]:
    if _listening(port):
        pytest.fail(f"port {port} is already in use: another iperf3 left running?")
    server = subprocess.Popen(
        [IPERF3, "-s", "-1", "-p", str(port), "-B", HOST],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 10
        while not _listening(port):
            if server.poll() is not None or time.monotonic() > deadline:
                pytest.fail(f"iperf3 server on port {port} did not start (rc={server.poll()})")
            time.sleep(0.05)
        yield server
    finally:
        end_process(server, 5)


def _run(port: int, *args: str) -> tuple[str, Result]:
    with _server(port):
        client = subprocess.run(
            [IPERF3, "-c", HOST, "-p", str(port), "-J", *args],
            capture_output=True,
            text=True,
            timeout=CLIENT_TIMEOUT,
            check=False,
        )
    assert client.returncode == 0, client.stdout[-2000:] + client.stderr
    result = parse_iperf3_json(None, client.stdout)
    errors = [f"{list(e.path)}: {e.message}" for e in VALIDATOR.iter_errors(result)]
    assert not errors, errors
    return client.stdout, plain(result)


def _rate_matches(totals: dict[str, Any]) -> None:
    """iperf3's bits_per_second is bytes*8/seconds (within 1 %: the printed seconds are rounded)."""
    assert totals["bytes"] > 0
    assert totals["seconds"] > 0
    assert totals["bits_per_second"] == pytest.approx(totals["bytes"] * 8 / totals["seconds"], rel=0.01)


def _common(result: dict[str, Any], port: int) -> None:
    assert result["error"] is None
    assert result["tool"] == "iperf3" and result["format"] == "json"
    assert result["tool_version"] is not None and result["tool_version"].startswith("3.")
    assert result["side"] == "client"
    assert result["local"]["host"] == HOST
    assert result["remote"] == {"host": HOST, "port": port}
    assert result["timestamp"] is not None and result["timestamp"].endswith("+00:00")
    assert result["cpu"] is not None and result["cpu"]["local_percent"] is not None


def test_tcp() -> None:
    port = 15210
    raw, result = _run(port, "-t", "1", "-b", "200M", "--get-server-output")
    _common(result, port)
    assert result["protocol"] == "tcp"
    assert result["reverse"] is False and result["bidir"] is False
    assert result["streams"] == 1 and len(result["per_stream"]) == 1
    _rate_matches(result["sent"])
    _rate_matches(result["received"])
    assert isinstance(result["sent"]["retransmits"], int)  # Linux sender: TCP_INFO readable
    assert result["received"]["retransmits"] is None
    assert result["bits_per_second"] == result["received"]["bits_per_second"]
    assert result["complete"] is True
    assert len(result["intervals"]) >= 1
    assert sum(i["bytes"] for i in result["intervals"]) == result["sent"]["bytes"]
    # the server was not started with -J: its report comes back as text
    assert "server_output_text" in result and "Accepted connection" in result["server_output_text"]
    assert json.loads(raw)["start"]["connecting_to"]["port"] == port


def test_parallel_three_streams() -> None:
    port = 15211
    _raw, result = _run(port, "-t", "1", "-P", "3", "-b", "50M")
    _common(result, port)
    assert result["streams"] == 3
    assert len(result["per_stream"]) == 3
    assert len({s["id"] for s in result["per_stream"]}) == 3
    for stream in result["per_stream"]:
        _rate_matches(stream["sent"])
        _rate_matches(stream["received"])
    assert sum(s["sent"]["bytes"] for s in result["per_stream"]) == result["sent"]["bytes"]
    assert sum(s["received"]["bytes"] for s in result["per_stream"]) == result["received"]["bytes"]
    _rate_matches(result["received"])
    assert result["complete"] is True


def test_reverse() -> None:
    port = 15212
    _raw, result = _run(port, "-t", "1", "-R", "-b", "100M")
    _common(result, port)
    assert result["reverse"] is True
    _rate_matches(result["sent"])  # the server's figures
    _rate_matches(result["received"])
    assert isinstance(result["sent"]["retransmits"], int)  # reported by the Linux server
    assert all(i["retransmits"] is None for i in result["intervals"])  # the client only receives
    assert result["complete"] is True


def test_bidir() -> None:
    port = 15213
    _raw, result = _run(port, "-t", "1", "--bidir", "-b", "100M")
    _common(result, port)
    assert result["bidir"] is True
    for key in ("sent", "received", "reverse_sent", "reverse_received"):
        _rate_matches(result[key])
    assert result["streams"] == 1
    assert len(result["per_stream"]) == 1 and len(result["reverse_per_stream"]) == 1
    assert result["per_stream"][0]["id"] != result["reverse_per_stream"][0]["id"]
    assert result["intervals"] and result["reverse_intervals"]
    assert result["intervals"][0]["retransmits"] is not None  # client-to-server: the client sends
    assert result["reverse_intervals"][0]["retransmits"] is None
    assert result["complete"] is True


def test_udp() -> None:
    port = 15214
    _raw, result = _run(port, "-t", "1", "-u", "-b", "50M")
    _common(result, port)
    assert result["protocol"] == "udp"
    _rate_matches(result["sent"])
    _rate_matches(result["received"])
    assert result["sent"]["bits_per_second"] == pytest.approx(50e6, rel=0.2)
    udp = result["udp"]
    assert udp is not None
    assert udp["packets"] > 0
    assert 0 <= udp["lost_packets"] <= udp["packets"]
    assert 0 <= udp["lost_percent"] <= 100
    assert udp["jitter_ms"] is not None and udp["jitter_ms"] >= 0
    assert result["sent"]["retransmits"] is None
    assert result["complete"] is True


def test_omit() -> None:
    port = 15215
    _raw, result = _run(port, "-t", "1", "-O", "1", "-b", "100M")
    _common(result, port)
    omitted = [i["omitted"] for i in result["intervals"]]
    assert omitted[0] is True
    assert False in omitted
    # the end totals exclude the omitted second
    counted = sum(i["bytes"] for i in result["intervals"] if not i["omitted"])
    assert result["sent"]["bytes"] == pytest.approx(counted, rel=0.05)
    _rate_matches(result["received"])
    assert result["complete"] is True


def test_byte_limited() -> None:
    port = 15216
    _raw, result = _run(port, "-n", "10M")
    _common(result, port)
    assert result["sent"]["bytes"] == 10 * 1024 * 1024  # -n 10M, written in whole 128 KiB blocks
    _rate_matches(result["sent"])
    received = result["received"]["bytes"]
    assert 0 <= received <= result["sent"]["bytes"]
    if received == 0:
        assert result["complete"] is False
        assert any("receiver counted 0 bytes" in w for w in result["warnings"])
    elif received < result["sent"]["bytes"]:
        # loopback: the receiver often stops counting at TEST_END before reading everything
        assert any(f"the receiver counted {received} of the 10485760 bytes" in w for w in result["warnings"])
    else:
        assert result["warnings"] == []
