# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Live: the figures issue #10 is about, proven against what the real tools printed on a lossy lab link.

Builds a two-host local lab (``lab/esxilab_lab.py``, prefix ``fpa``, 198.19.101.0/24, a
temporary state dir; ``down --purge`` in the finalizer, checked to leave nothing) and runs the
Debian binaries in its namespaces:

* **iperf2 2.1.8, UDP ``-P 4``** from h1 to h2 at 4 x 10 Mbit/s through a ``tbf`` of 20 Mbit/s
  on h1's ``eth0`` with a 32 KiB queue: the queue overflows, so about half the datagrams are
  really lost (the lab's own ``--rate`` shaping would not do: its 1 MiB queue pushes back on the
  sending socket, so nothing is dropped). The client's parsed ``received`` (the four Server
  Reports summed by ``iperf/udp_sum.py``) must equal what the **server process itself** printed
  for its four streams, summed here from its own output (text, or its exact CSV), within the
  rounding of the printed digits; loss counts exactly.
* **iperf3 RTT**: JSON carries the sending streams' RTT (plausible: 0 < min <= mean <= max);
  iperf3 3.12's text (also ``-V`` and ``--get-server-output``) carries none, so the text result's
  ``rtt`` is null, never guessed; with ``-R`` the RTT is the server's (in ``server_output``).

Every process is bounded by a timeout; servers are started here and killed by their own pid.
``ESXILAB_KEEP_LIVE_OUTPUTS=DIR`` keeps the raw outputs (the corpus files
``iperf2-2.1.8-*-fpa.txt`` in ``tests/fixtures/iperf`` were recorded that way).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator

from ansible_collections.esxilab.iperf.plugins.plugin_utils.iperf.iperf2_csv import parse_iperf2_csv
from ansible_collections.esxilab.iperf.plugins.plugin_utils.iperf.iperf2_text import parse_iperf2_text
from ansible_collections.esxilab.iperf.plugins.plugin_utils.iperf.iperf3_json import parse_iperf3_json
from ansible_collections.esxilab.iperf.plugins.plugin_utils.iperf.iperf3_text import parse_iperf3_text
from ansible_collections.esxilab.iperf.plugins.plugin_utils.iperf.result import IperfResult, Result, plain
from tests.collection_path import SCHEMA
from tests.integration.labkit import Lab, lab_unavailable, skip_if

pytestmark = [pytest.mark.live, pytest.mark.lab, pytest.mark.slow]

# overridable so that parallel sessions can run this file on their own lab prefix and subnet
PREFIX = os.environ.get("ESXILAB_FIGURES_PREFIX", "fpa")
NET = os.environ.get("ESXILAB_FIGURES_SUBNET", "198.19.101")  # the first three octets of a /24
SUBNET = f"{NET}.0/24"
H1, H2 = f"{NET}.11", f"{NET}.12"
RUN_TIMEOUT = 30.0
STREAMS = 4
VALIDATOR = Draft202012Validator(json.loads(SCHEMA.read_text()))
KEEP = os.environ.get("ESXILAB_KEEP_LIVE_OUTPUTS")


def _unavailable() -> str | None:
    tools = ("ip", "tc", "iperf", "iperf3", "ssh-keygen")
    reason = lab_unavailable(tools, needs="network namespaces, tc", ansible=False)
    if reason:
        return reason
    version = subprocess.run(["iperf", "-v"], capture_output=True, text=True, timeout=10, check=False)
    if "iperf version 2." not in version.stdout + version.stderr:
        return "/usr/bin/iperf is not iperf2"
    return None


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    skip_if(_unavailable())
    the_lab = Lab(PREFIX, tmp_path_factory.mktemp("fpa") / "state", timeout=120)
    with the_lab.session("--hosts", "2", "--subnet", SUBNET):
        yield the_lab.state_dir


def _in(host: str, *argv: str) -> list[str]:
    return ["ip", "netns", "exec", f"{PREFIX}-{host}", *argv]


@dataclass
class Outputs:
    server: str
    client: str


def _bound(pid: int, port: int, table: str) -> bool:
    """Is ``port`` bound in the namespace of process ``pid``? (its ``/proc/PID/net``; no probe packet)."""
    try:
        rows = Path(f"/proc/{pid}/net/{table}").read_text().splitlines()[1:]
    except OSError:
        return False
    return any(int(row.split()[1].rsplit(":", 1)[1], 16) == port for row in rows)


def _run(server: Sequence[str], client: Sequence[str], *, port: int, table: str) -> Outputs:
    """Start ``server`` in h2 (it exits by itself), run ``client`` in h1, return both outputs."""
    proc = subprocess.Popen(_in("h2", *server), stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + 5
        while not _bound(proc.pid, port, table):
            if proc.poll() is not None or time.monotonic() > deadline:
                pytest.fail(f"server {server} did not start (rc={proc.poll()})")
            time.sleep(0.05)
        done = subprocess.run(_in("h1", *client), capture_output=True, timeout=RUN_TIMEOUT, check=False)
        assert done.returncode == 0, done.stdout + done.stderr
        out, _err = proc.communicate(timeout=RUN_TIMEOUT)
    finally:
        if proc.poll() is None:
            proc.kill()  # our own child, by its pid
            proc.communicate(timeout=5)
    # iperf 2.1.8's server pads its output with NUL bytes at times: not text, dropped
    return Outputs(out.decode(errors="replace").replace("\x00", ""), (done.stdout + done.stderr).decode())


def _keep(name: str, text: str) -> None:
    if KEEP:
        Path(KEEP).mkdir(parents=True, exist_ok=True)
        (Path(KEEP) / name).write_text(text)


@pytest.fixture
def lossy_link(lab: Path) -> Iterator[None]:
    """h1's NIC queue: 20 Mbit/s, 32 KiB: a 40 Mbit/s UDP offer overflows it (real drops)."""
    tbf = ("tc", "qdisc", "replace", "dev", "eth0", "root", "tbf", "rate", "20mbit", "burst", "16kb", "limit", "32kb")
    subprocess.run(_in("h1", *tbf), check=True, timeout=10)
    try:
        yield
    finally:
        subprocess.run(_in("h1", "tc", "qdisc", "del", "dev", "eth0", "root"), check=True, timeout=10)


def _valid(result: IperfResult) -> Result:
    errors = [f"{list(e.path)}: {e.message}" for e in VALIDATOR.iter_errors(result)]
    assert not errors, errors
    assert result["error"] is None, result["error"]
    return plain(result)


# ---------------------------------------------------------------------- printed figures

_BYTE = {"": 1, "K": 2**10, "M": 2**20, "G": 2**30}
_BIT = {"": 1, "K": 10**3, "M": 10**6, "G": 10**9}
_RX_LINE = re.compile(
    r"^\[\s*(?P<id>\d+)\]\s+0\.0+-\s*(?P<end>[\d.]+)\s+sec\s+(?P<bytes>[\d.]+ [KMG]?Bytes)\s+"
    r"(?P<rate>[\d.]+ [KMG]?bits/sec)\s+(?P<jitter>[\d.]+) ms\s+(?P<lost>\d+)/\s*(?P<total>\d+)"
)


def _value(printed: str) -> tuple[float, float]:
    """(value, half a unit of its last digit) of ``"2.35 MBytes"`` / ``"6.54 Mbits/sec"``."""
    number, unit = printed.split()
    prefix = unit[0] if unit[0] in "KMG" else ""
    scale = (_BIT if "bits" in unit else _BYTE)[prefix]
    decimals = len(number.split(".")[1]) if "." in number else 0
    return float(number) * scale, 0.5 * 10.0**-decimals * scale


@dataclass
class Printed:
    """The sums of a receiver's per-stream total lines, and the rounding they carry."""

    nbytes: float
    bytes_tol: float
    rate: float
    rate_tol: float
    lost: int
    packets: int
    jitter_max: float
    lines: int


def _server_text_totals(text: str) -> Printed:
    found = [m for m in map(_RX_LINE.match, (ln.strip() for ln in text.splitlines())) if m]
    by_id = {m["id"]: m for m in found}  # each stream's total line (printed once by a 2.1.8 server)
    values = [(_value(m["bytes"]), _value(m["rate"])) for m in by_id.values()]
    return Printed(
        nbytes=sum(nbytes for (nbytes, _tol), _rate in values),
        bytes_tol=sum(tol for (_nbytes, tol), _rate in values),
        rate=sum(rate for _bytes, (rate, _tol) in values),
        rate_tol=sum(tol for _bytes, (_rate, tol) in values),
        lost=sum(int(m["lost"]) for m in by_id.values()),
        packets=sum(int(m["total"]) for m in by_id.values()),
        jitter_max=max(float(m["jitter"]) for m in by_id.values()),
        lines=len(by_id),
    )


def _server_csv_totals(text: str) -> Printed:
    rows = [ln.split(",") for ln in text.splitlines() if re.match(r"^\d{14}(?:\.\d+)?,", ln)]
    rows = [r for r in rows if len(r) >= 14 and r[5] != "-1" and r[6].startswith("0.0")]
    return Printed(
        nbytes=sum(int(r[7]) for r in rows),
        bytes_tol=0.0,
        rate=sum(float(r[8]) for r in rows),
        rate_tol=0.0,
        lost=sum(int(r[10]) for r in rows),
        packets=sum(int(r[11]) for r in rows),
        jitter_max=max(float(r[9]) for r in rows),
        lines=len(rows),
    )


UDP_CLIENT = ("iperf", "-c", H2, "-p", "5001", "-u", "-b", "10M", "-P", str(STREAMS), "-t", "3")
UDP_SERVER = ("iperf", "-s", "-u", "-B", H2, "-p", "5001", "-t", "8")


def _agrees(received: dict[str, Any], udp: dict[str, Any], printed: Printed) -> None:
    """The client's summed Server Reports (rounded text) against the receiver's own figures."""
    assert printed.lines == STREAMS, printed
    if printed.bytes_tol:  # both rounded as printed: half a unit of the last digit on either side
        bytes_tol, rate_tol = 2 * printed.bytes_tol, 2 * printed.rate_tol
    else:  # exact (CSV) against the reports' 3 significant digits: at most 0.5 % each
        bytes_tol, rate_tol = 0.005 * printed.nbytes, 0.005 * printed.rate
    assert abs(received["bytes"] - printed.nbytes) <= bytes_tol + 1, (received, printed)
    assert abs(received["bits_per_second"] - printed.rate) <= rate_tol + 1, (received, printed)
    assert udp["lost_packets"] == printed.lost
    assert udp["packets"] == printed.packets
    assert udp["lost_percent"] == pytest.approx(100.0 * printed.lost / printed.packets)
    # jitter is sampled separately by each print (e.g. 0.249 and 0.250 ms): the largest of the streams
    assert udp["jitter_ms"] == pytest.approx(printed.jitter_max, abs=0.01, rel=0.05)


@pytest.mark.usefixtures("lossy_link")
def test_iperf2_udp_p4_summed_server_reports_equal_the_receivers_own_figures() -> None:
    run = _run((*UDP_SERVER, "-e"), (*UDP_CLIENT, "-e"), port=5001, table="udp")
    _keep("iperf2-2.1.8-text-client-udp-e-P4-lossy-fpa.txt", run.client)
    _keep("iperf2-2.1.8-text-server-udp-e-P4-lossy-fpa.txt", run.server)
    result = _valid(parse_iperf2_text(run.client))
    assert (result["side"], result["protocol"], result["streams"]) == ("client", "udp", STREAMS)
    assert result["complete"] is True, result["warnings"]
    printed = _server_text_totals(run.server)
    assert printed.lost > 0.1 * printed.packets, "the shaped link dropped nothing: the test proves nothing"
    _agrees(result["received"], result["udp"], printed)
    # the headline is what was delivered, well below the 40 Mbit/s offered
    assert result["bits_per_second"] == result["received"]["bits_per_second"]
    assert result["bits_per_second"] < 0.8 * result["sent"]["bits_per_second"]
    assert all(item["received"] is not None for item in result["per_stream"])
    # the server's own result: its loss columns summed the same way (its [SUM] total has none in 2.1.8)
    server = _valid(parse_iperf2_text(run.server))
    assert (server["side"], server["streams"]) == ("server", STREAMS)
    assert (server["udp"]["lost_packets"], server["udp"]["packets"]) == (printed.lost, printed.packets)


@pytest.mark.usefixtures("lossy_link")
def test_iperf2_udp_p4_summed_against_the_servers_exact_csv() -> None:
    run = _run((*UDP_SERVER, "-y", "C"), (*UDP_CLIENT, "-e"), port=5001, table="udp")
    _keep("iperf2-2.1.8-csv-server-udp-P4-lossy-fpa.txt", run.server)
    result = _valid(parse_iperf2_text(run.client))
    printed = _server_csv_totals(run.server)  # exact bytes and bit/s, as the receiver counted them
    assert printed.lost > 0.1 * printed.packets
    assert result["complete"] is True, result["warnings"]
    _agrees(result["received"], result["udp"], printed)
    server = _valid(parse_iperf2_csv(run.server, side="server"))
    assert sum(item["received"]["bytes"] for item in server["per_stream"]) == printed.nbytes


@pytest.mark.usefixtures("lossy_link")
def test_iperf2_udp_p4_client_csv() -> None:
    """iperf 2.1.8's client CSV (``-y C``) prints its own lines only, no Server Report lines."""
    run = _run(UDP_SERVER, (*UDP_CLIENT, "-y", "C"), port=5001, table="udp")
    _keep("iperf2-2.1.8-csv-client-udp-P4-lossy-fpa.txt", run.client)
    result = _valid(parse_iperf2_csv(run.client))
    printed = _server_text_totals(run.server)
    assert printed.lost > 0.1 * printed.packets
    assert len(result["per_stream"]) == STREAMS
    assert all(item["sent"] is not None for item in result["per_stream"])
    reports = [item for item in result["per_stream"] if item["received"] is not None]
    if reports:  # a build that repeats the Server Reports in CSV: summed like the text ones
        assert len(reports) == STREAMS
        _agrees(result["received"], result["udp"], printed)
    else:  # 2.1.8: nothing to sum, and nothing is made up
        assert result["received"] is None and result["complete"] is False
        assert result["udp"]["lost_packets"] is None
        assert sum("no server report line" in w for w in result["warnings"]) == STREAMS


# ---------------------------------------------------------------------------------- RTT


def _iperf3(server: Sequence[str], client: Sequence[str]) -> Outputs:
    return _run(
        ("iperf3", "-s", "-1", "-B", H2, "-p", "5201", *server),
        ("iperf3", "-c", H2, "-p", "5201", "-t", "2", *client),
        port=5201,
        table="tcp",
    )


def _plausible(rtt: dict[str, Any] | None) -> None:
    assert rtt is not None
    assert 0 < rtt["min_us"] <= rtt["mean_us"] <= rtt["max_us"] < 1_000_000, rtt


def test_iperf3_json_carries_rtt_and_text_carries_none(lab: Path) -> None:
    as_json = _valid(parse_iperf3_json(None, _iperf3((), ("-P", "2", "-J")).client))
    _plausible(as_json["rtt"])
    streams = [item["rtt"] for item in as_json["per_stream"]]
    assert len(streams) == 2
    for figures in streams:
        _plausible(figures)
        assert figures["rtt_us"] > 0 and figures["var_us"] is not None
    assert as_json["rtt"]["min_us"] == min(f["min_us"] for f in streams)
    assert as_json["rtt"]["max_us"] == max(f["max_us"] for f in streams)

    text = _iperf3((), ("-P", "2", "-V", "--get-server-output")).client
    # iperf3's text prints no RTT at all (the random test cookie may hold the letters "rtt": words only) ...
    assert not re.search(r"\brtt\b", text, re.IGNORECASE), text
    as_text = _valid(parse_iperf3_text(text))
    assert as_text["sent"] is not None and as_text["sent"]["bytes"] > 0
    assert as_text["rtt"] is None  # ... so none is reported, never guessed


def test_iperf3_reverse_rtt_is_the_servers(lab: Path) -> None:
    # the server prints JSON too, so --get-server-output hands its document to the client
    result = _valid(parse_iperf3_json(None, _iperf3(("-J",), ("-R", "-J", "--get-server-output")).client))
    assert result["reverse"] is True
    assert result["rtt"] is None  # the client only received
    assert all(item["rtt"] is None for item in result["per_stream"])
    server = result["server_output"]
    assert server is not None
    _plausible(server["rtt"])
