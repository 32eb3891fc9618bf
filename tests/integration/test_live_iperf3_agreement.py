# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The text parser and the JSON parser agree on the same real iperf3 run (loopback only).

iperf3 3.12 cannot print text and JSON for one run from one process (``-J`` suppresses the
text), but the two ends of a run print independently. So each mode runs twice:

* ``server-text``: the server prints text (``-s -1``), the client prints JSON (``-J``);
* ``client-text``: the client prints text, the server prints JSON (``-s -1 -J``).

Both ends then describe the same run, and the figures the *server* measured appear in
both outputs: the receiver totals of the client-to-server direction, the sender totals of
the server-to-client direction (``-R``, ``--bidir``), and the UDP receiver figures. Those
are compared, the text side within the rounding of its printed digits.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from ansible_collections.esxilab.iperf.plugins.plugin_utils.iperf.iperf3_json import parse_iperf3_json
from ansible_collections.esxilab.iperf.plugins.plugin_utils.iperf.iperf3_text import parse_iperf3_text

IPERF3 = "/usr/bin/iperf3"
HOST = "127.0.0.1"
FIRST_PORT = 15230  # this file uses 15230-15249
RUN_TIMEOUT = 20.0

pytestmark = [
    pytest.mark.live,
    pytest.mark.skipif(not Path(IPERF3).exists() or shutil.which("iperf3") is None, reason="needs /usr/bin/iperf3"),
]


@dataclass(frozen=True)
class Mode:
    name: str
    client: tuple[str, ...]  # client-only options (both runs)
    text: tuple[str, ...] = ()  # options for whichever end prints text
    streams: int = 1
    udp: bool = False
    reverse: bool = False
    bidir: bool = False
    checks: tuple[str, ...] = field(default=())


MODES = [
    Mode("tcp", ("-t", "1")),
    Mode("tcp-P3", ("-t", "1", "-P", "3"), streams=3),
    Mode("tcp-R", ("-t", "1", "-R"), reverse=True),
    Mode("tcp-bidir", ("-t", "1", "--bidir"), streams=2, bidir=True),
    Mode("udp-b20M", ("-t", "1", "-u", "-b", "20M"), udp=True),
    Mode("udp-b20M-R", ("-t", "1", "-u", "-b", "20M", "-R"), udp=True, reverse=True),
    Mode("tcp-O1", ("-t", "1", "-O", "1"), checks=("omitted",)),
    Mode("tcp-fK", ("-t", "1"), text=("-f", "K"), checks=("byte-rates",)),
    Mode("tcp-V", ("-t", "1"), text=("-V",), checks=("verbose",)),
    Mode("tcp-timestamps", ("-t", "1"), text=("--timestamps",)),
]
PAIRINGS = ("server-text", "client-text")
# make test: the modes that take each path of the text parser (streams with [SUM], both directions at once,
# UDP receiver figures sent back with -R, byte-unit rates); make test-full: the whole matrix
IN_MAKE_TEST = ("tcp-P3", "tcp-bidir", "udp-b20M-R", "tcp-fK")
MATRIX = [pytest.param(m, id=m.name, marks=() if m.name in IN_MAKE_TEST else pytest.mark.full) for m in MODES]


# -------------------------------------------------------------------------------- running


def _listening(port: int) -> bool:
    """True once a socket listens on 127.0.0.1:port (read from /proc, without connecting:
    a probe connection would be taken by the one-off server as its test client)."""
    wanted = f"0100007F:{port:04X}"
    try:
        rows = Path("/proc/net/tcp").read_text().splitlines()[1:]
    except OSError:
        return False
    return any(row.split()[1] == wanted and row.split()[3] == "0A" for row in rows)


def _run_pair(port: int, server_args: list[str], client_args: list[str]) -> tuple[str, str]:
    """Run a one-off server and one client against it; return (server stdout, client stdout)."""
    server = subprocess.Popen(
        [IPERF3, "-s", "-1", "-B", HOST, "-p", str(port), *server_args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.monotonic() + 5.0
        while not _listening(port):
            if server.poll() is not None or time.monotonic() > deadline:
                out, err = server.communicate(timeout=5)
                pytest.fail(f"iperf3 server did not start on port {port}: {out}{err}")
            time.sleep(0.05)
        client = subprocess.run(
            [IPERF3, "-c", HOST, "-p", str(port), *client_args],
            capture_output=True,
            text=True,
            timeout=RUN_TIMEOUT,
            check=False,
        )
        server_out, server_err = server.communicate(timeout=RUN_TIMEOUT)
        assert client.returncode == 0, client.stdout + client.stderr
        assert server.returncode == 0, server_out + server_err
        return server_out, client.stdout
    finally:
        if server.poll() is None:
            server.kill()
            server.wait(timeout=5)


# ----------------------------------------------------------------------- printed digits

_PREFIX = {"": 1, "K": 1, "M": 2, "G": 3, "T": 4}
_SUMMARY_RE = re.compile(
    r"\[\s*(?P<id>\d+|SUM)\](?:\[(?P<role>[TR]X-[CS])\])?\s+\S+\s*-\s*\S+\s+sec\s+"
    r"(?P<bytes>[\d.]+ [KMGT]?Bytes)\s+(?P<rate>[\d.]+ [KMGT]?(?:bits|Bytes)/sec)\s.*\s(?P<tag>sender|receiver)\s*$"
)


def _printed(text: str, tag: str, roles: tuple[str | None, ...]) -> tuple[str, str]:
    """The printed Transfer and Bitrate of the ([SUM] or single) summary line with ``tag``."""
    found: dict[str, tuple[str, str]] = {}
    for line in text.splitlines():
        match = _SUMMARY_RE.search(line)
        if match and match.group("tag") == tag and match.group("role") in roles:
            found[match.group("id")] = (match.group("bytes"), match.group("rate"))
    assert found, f"no {tag} summary line for {roles} in:\n{text}"
    return found["SUM"] if "SUM" in found else next(iter(found.values()))


def _half_unit(printed: str) -> float:
    """Half a unit of the last printed digit, in bytes or bit/s (``"5.62 GBytes"`` -> 0.005 GiB)."""
    number, unit = printed.split()
    decimals = len(number.split(".")[1]) if "." in number else 0
    prefix = unit[0] if unit[0] in "KMGT" else ""
    if "bits" in unit:
        scale = 1000.0 ** _PREFIX[prefix] if prefix else 1.0
    else:
        scale = 1024.0 ** _PREFIX[prefix] if prefix else 1.0
        if unit.endswith("/sec"):
            scale *= 8
    return 0.5 * 10.0**-decimals * scale


def _agree_totals(
    text_totals: Any, json_totals: Any, printed: tuple[str, str], what: str, *, same_clock: bool = True
) -> None:
    """Text and JSON totals agree within the text's printed rounding.

    ``same_clock=False``: both ends count the same bytes but divide by different durations
    (iperf3 ``--bidir`` takes every summary duration from the *first* stream of its own
    list, and the two ends list their streams in a different order). Then bytes and
    retransmits must agree, and each side's rate must match its own bytes / seconds.
    """
    assert text_totals is not None, f"{what}: text side has no totals"
    assert json_totals is not None, f"{what}: JSON side has no totals"
    printed_bytes, printed_rate = printed
    byte_tol = _half_unit(printed_bytes) + 0.5 + 1e-9 * json_totals["bytes"]
    rate_tol = _half_unit(printed_rate) + 1e-9 * json_totals["bits_per_second"]
    assert abs(text_totals["bytes"] - json_totals["bytes"]) <= byte_tol, (what, printed_bytes, json_totals)
    if same_clock:
        assert abs(text_totals["bits_per_second"] - json_totals["bits_per_second"]) <= rate_tol, (
            what,
            printed_rate,
            json_totals,
        )
        if text_totals["seconds"] is not None and json_totals.get("seconds") is not None:
            assert abs(text_totals["seconds"] - json_totals["seconds"]) <= 0.005 + 1e-9, (what, json_totals)
    else:
        for totals, tolerance in ((text_totals, None), (json_totals, 1e-6)):
            implied = totals["bytes"] * 8 / totals["seconds"]
            if tolerance is None:  # printed figures: bytes, rate and seconds are all rounded
                allowed = _half_unit(printed_rate) + implied * (
                    _half_unit(printed_bytes) / totals["bytes"] + 0.005 / totals["seconds"]
                )
            else:
                allowed = tolerance * implied
            assert abs(totals["bits_per_second"] - implied) <= allowed, (what, totals)
    if text_totals["retransmits"] is not None and json_totals.get("retransmits") is not None:
        assert text_totals["retransmits"] == json_totals["retransmits"], what


def _agree_udp(text_udp: Any, json_udp: Any) -> None:
    assert text_udp is not None and json_udp is not None
    assert text_udp["packets"] == json_udp["packets"]
    assert text_udp["lost_packets"] == json_udp["lost_packets"]
    assert abs(text_udp["jitter_ms"] - json_udp["jitter_ms"]) <= 0.0005 + 1e-12  # printed %5.3f
    # printed %.2g: two significant digits
    assert text_udp["lost_percent"] == pytest.approx(json_udp["lost_percent"], rel=0.05, abs=1e-9)


# ---------------------------------------------------------------------------------- test


@pytest.mark.parametrize("pairing", PAIRINGS)
@pytest.mark.parametrize("mode", MATRIX)
def test_text_and_json_agree_on_the_same_run(mode: Mode, pairing: str) -> None:
    port = FIRST_PORT + 2 * MODES.index(mode) + PAIRINGS.index(pairing)
    if pairing == "server-text":
        text, doc_text = _run_pair(port, list(mode.text), [*mode.client, "-J"])
        text_side, server_role_rx, server_role_tx = "server", "RX-S", "TX-S"
    else:
        doc_text, text = _run_pair(port, ["-J"], [*mode.client, *mode.text])
        text_side, server_role_rx, server_role_tx = "client", "TX-C", "RX-C"
    from_text = parse_iperf3_text(text)
    from_json = parse_iperf3_json(json.loads(doc_text), doc_text)

    assert from_text["side"] == text_side
    assert from_text["complete"] is True, (from_text["warnings"], text)
    assert from_text["error"] is None
    assert from_text["tool"] == from_json["tool"] == "iperf3"
    assert from_text["protocol"] == from_json["protocol"] == ("udp" if mode.udp else "tcp")
    assert from_text["reverse"] is from_json["reverse"] is mode.reverse
    assert from_text["bidir"] is from_json["bidir"] is mode.bidir
    assert from_text["streams"] == mode.streams
    assert from_text["intervals"], text

    # The figures the server measured, present in both outputs.
    if mode.bidir:
        _agree_totals(
            from_text["received"],
            from_json["received"],
            _printed(text, "receiver", (server_role_rx,)),
            "client-to-server receiver",
        )
        _agree_totals(
            from_text["reverse_sent"],
            from_json["reverse_sent"],
            _printed(text, "sender", (server_role_tx,)),
            "server-to-client sender",
            same_clock=False,
        )
    elif mode.reverse:
        _agree_totals(from_text["sent"], from_json["sent"], _printed(text, "sender", (None,)), "server as sender")
    else:
        _agree_totals(
            from_text["received"], from_json["received"], _printed(text, "receiver", (None,)), "server as receiver"
        )
        if mode.udp:
            _agree_udp(from_text["udp"], from_json["udp"])

    if "omitted" in mode.checks:
        assert any(i["omitted"] for i in from_text["intervals"])
        assert not from_text["intervals"][-1]["omitted"]
    if "byte-rates" in mode.checks:
        assert "KBytes/sec" in text
    if "verbose" in mode.checks:
        assert from_text["tool_version"] == "3.12"
        assert from_text["timestamp"] is not None and from_text["timestamp"].endswith("+00:00")
        if text_side == "client":
            cpu = from_text["cpu"]
            assert cpu is not None
            local_percent = cpu.get("local_percent")
            assert local_percent is not None and local_percent > 0
