# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The client script with ``latency`` run for real under ``sh`` and busybox ``ash`` (``latency/shell.py``).

No packet leaves the machine: ``ping`` is a stand-in that replays the recorded iputils output
(``linux-iputils20221126__ping-i__ok.txt``) one line per nap and, like iputils, prints no summary when TERM stops
it; ``vmkping`` is the ESXi stand-in (``tests/esxi_standin/vmkping``, replaying the recorded vmkping layout); iperf
is a shell script that sleeps. Checked: the idle ping runs before the barrier and never delays the start time (a
ping still running then is stopped: ``cut``), the loaded ping runs during the transfer and is waited for, a failed
iperf stops it at once, every ping started is gone afterwards and the files are removed.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest

from ansible_collections.esxilab.iperf.plugins.plugin_utils import iperf_run as r
from ansible_collections.esxilab.iperf.plugins.plugin_utils.host.framing import first
from ansible_collections.esxilab.iperf.plugins.plugin_utils.iperf_run.latency import client_latency, client_pings
from tests.collection_path import ESXI_RECORDINGS, REPO

TOKEN = "0123abcd"
GNU_CAPS = r.parse_caps(
    "epochrealtime=\ndate_ns=1796019183.875742123\nusleep=0\nfracsleep=1\ngnu_timeout=1\nuname=Linux\n"
)
ESXI_CAPS = r.parse_caps(
    "epochrealtime=\ndate_ns=1796019183.%N\nusleep=1\nfracsleep=1\ngnu_timeout=0\nuname=VMkernel\n"
)
SHELLS = [["/bin/sh", "-c"]] + ([["busybox", "sh", "-c"]] if shutil.which("busybox") else [])
RECORDED = ESXI_RECORDINGS / "linux-iputils20221126__ping-i__ok.txt"

FAKE_PING = f"""#!/bin/sh
echo "$$ $*" >>"$FAKE_LOG"
trap 'exit 143' TERM
while IFS= read -r line; do
    sleep "$FAKE_NAP" & wait $!
    printf '%s\\n' "$line"
done <{RECORDED}
"""
FAKE_IPERF = """#!/bin/sh
sleep "$FAKE_IPERF_SECONDS"
echo '{"start": {}}'
exit "$FAKE_IPERF_RC"
"""


def _bin(tmp_path: Path) -> Path:
    directory = tmp_path / "bin"
    directory.mkdir(exist_ok=True)
    for name, text in (("ping", FAKE_PING), ("fake-iperf3", FAKE_IPERF)):
        (directory / name).write_text(text)
        (directory / name).chmod(0o755)
    return directory


def _run(
    tmp_path: Path,
    shell: list[str],
    *,
    latency: dict[str, Any],
    start_in: float | None,
    nap: float,
    iperf_seconds: float = 0.3,
    iperf_rc: int = 0,
    caps: r.HostCaps = GNU_CAPS,
    path_first: Path | None = None,
) -> tuple[dict[str, Any], dict[str, Any], float]:
    """Run the client script; (its latency figures, the started_at section's time and start_at, the wall time)."""
    fake = _bin(tmp_path)
    state = tmp_path / "state"
    state.mkdir(exist_ok=True)
    params = {"server": "198.18.0.1", "bind": "198.18.0.2", "duration": 1, "latency": latency}
    pings = client_pings(params, esxi=caps.esxi, timeout=10)
    assert pings is not None
    start_at = time.time() + start_in if start_in is not None else None
    script = r.build_client_script(
        TOKEN,
        [str(fake / "fake-iperf3")],
        caps=caps,
        timeout=10,
        start_at=start_at,
        state_dir=str(state),
        latency=pings,
    )
    env = {
        **os.environ,
        "PATH": f"{path_first or fake}{os.pathsep}{fake}{os.pathsep}{os.environ['PATH']}",
        "FAKE_LOG": str(tmp_path / "pings.log"),
        "FAKE_NAP": str(nap),
        "FAKE_IPERF_SECONDS": str(iperf_seconds),
        "FAKE_IPERF_RC": str(iperf_rc),
        "ESXI_STANDIN_STATE": str(tmp_path / "standin"),
    }
    began = time.monotonic()
    out = subprocess.run([*shell, script], env=env, capture_output=True, text=True, timeout=30, check=False)
    wall = time.monotonic() - began
    sections = r.parse_sections(out.stdout, TOKEN)
    assert first(sections, "done") is not None, out.stdout + out.stderr
    started = float(first(sections, "started_at").args)  # type: ignore[union-attr]
    figures = client_latency(pings, sections, esxi=caps.esxi, target="198.18.0.1")
    # every ping it started has ended, and nothing of it is left in the private directory
    log = tmp_path / "pings.log"
    for line in log.read_text().splitlines() if log.exists() else []:
        assert not Path(f"/proc/{line.split()[0]}").exists(), line
    assert [p.name for p in state.rglob("esxilab-iperf-*") if p.is_file()] == []
    return dict(figures), {"started_at": started, "start_at": start_at}, wall


@pytest.mark.parametrize("shell", SHELLS, ids=lambda s: s[0])
def test_the_idle_ping_is_cut_at_the_barrier_and_never_delays_the_start(tmp_path: Path, shell: list[str]) -> None:
    # the 6 recorded lines before the summary at 0.3 s each take 1.8 s (replies at 0.6, 0.9 s ...); the start time
    # comes after 1.1 s
    figures, times, _wall = _run(tmp_path, shell, latency={"interval": 0.2, "idle": 5}, start_in=1.1, nap=0.3)
    assert times["started_at"] - times["start_at"] < 0.25  # the start time held
    idle = figures["idle"]
    assert idle["cut"] and idle["transmitted"] is None and idle["lost"] is None
    assert idle["command"] == "ping -n -c 25 -i 0.2 -W 1 -I 198.18.0.2 198.18.0.1"
    assert 1 <= idle["samples"] <= 3 and idle["min_ms"] in (0.044, 0.049)
    assert idle["rc"] == 143  # stopped by our TERM


@pytest.mark.parametrize("shell", SHELLS, ids=lambda s: s[0])
def test_the_loaded_ping_runs_during_the_transfer_and_is_waited_for(tmp_path: Path, shell: list[str]) -> None:
    figures, _times, wall = _run(tmp_path, shell, latency={"interval": 0.2, "idle": 0}, start_in=None, nap=0.02)
    assert figures["idle"] is None  # idle 0: no idle window
    loaded = figures["loaded"]
    assert loaded["command"] == "ping -n -c 5 -i 0.2 -W 1 -I 198.18.0.2 198.18.0.1"  # 1 s / 0.2 s
    assert (loaded["transmitted"], loaded["received"], loaded["lost"], loaded["cut"]) == (5, 5, 0, False)
    assert (loaded["p50_ms"], loaded["max_ms"], loaded["p90_ms"]) == (0.040, 0.049, None)  # p90 needs 10
    assert loaded["raw"] == RECORDED.read_text()
    assert wall < 5


@pytest.mark.parametrize("shell", SHELLS, ids=lambda s: s[0])
def test_without_a_barrier_the_idle_window_comes_first(tmp_path: Path, shell: list[str]) -> None:
    began = time.time()
    figures, times, _wall = _run(tmp_path, shell, latency={"interval": 0.2, "idle": 1}, start_in=None, nap=0.1)
    assert times["started_at"] - began >= 0.6  # 6 recorded lines at 0.1 s before iperf started
    assert figures["idle"]["cut"] is False and figures["idle"]["samples"] == 5


def test_a_failed_iperf_stops_the_loaded_ping_at_once(tmp_path: Path) -> None:
    figures, _times, wall = _run(
        tmp_path, SHELLS[0], latency={"interval": 0.2, "idle": 0}, start_in=None, nap=2.0, iperf_seconds=0.1, iperf_rc=1
    )
    assert wall < 4  # the replay would take 12 s
    assert figures["loaded"]["cut"] and figures["loaded"]["samples"] == 0
    assert figures["loaded"]["error"] is not None and "no reply" in figures["loaded"]["error"]


def test_on_esxi_the_client_runs_vmkping_with_its_vmkernel_adapter(tmp_path: Path) -> None:
    standin = REPO / "tests" / "esxi_standin"
    subprocess.run(
        [str(standin / "esxi-standin"), "init", "8.0"],
        env={**os.environ, "ESXI_STANDIN_STATE": str(tmp_path / "standin")},
        check=True,
        capture_output=True,
        timeout=20,
    )
    figures, _times, _wall = _run(
        tmp_path,
        SHELLS[0],
        latency={"interval": 0.2, "idle": 1, "interface": "vmk1"},
        start_in=None,
        nap=0,
        caps=ESXI_CAPS,
        path_first=standin,
    )
    assert figures["tool"] == "vmkping" and figures["interface"] == "vmk1"
    for window in (figures["idle"], figures["loaded"]):
        assert window["command"] == "vmkping -c 5 -i 0.2 -W 1 -I vmk1 198.18.0.1"
        # the stand-in replays the recorded round-trip times (unknown__vmkping__jumbo-ok-8980.txt)
        assert (window["transmitted"], window["received"], window["p50_ms"], window["max_ms"]) == (5, 5, 0.341, 0.695)
    calls = (tmp_path / "standin" / "calls.log").read_text()
    assert calls.count("vmkping -c 5 -i 0.2 -W 1 -I vmk1 198.18.0.1") == 2


#: vmkping's options as its own help text lists them (``vmkping [args] [host]``; evidence and URLs in
#: docs/latency.md, "vmkping's options"): those followed by a value, and the bare flags.
VMKPING_VALUE_OPTIONS = {"-c", "-i", "-I", "-N", "-s", "-t", "-W", "-S"}
VMKPING_FLAGS = {"-4", "-6", "-d", "-D", "-v", "-X"}


@pytest.mark.parametrize("interval", [0.01, 0.05, 0.2, 1.0, 2.5])
def test_the_esxi_ping_uses_only_options_vmkping_documents(interval: float) -> None:
    """No iputils-only option (``-n``, ``-w``) on ESXi; ``-i`` in seconds, fractions as the recorded ``vmkping
    -i 0.05`` (Cisco HyperFlex-Hypercheck issue 18) took them; ``-W`` a whole number of seconds."""
    from ansible_collections.esxilab.iperf.plugins.plugin_utils.latency.shell import ping_argv

    argv = ping_argv(esxi=True, target="198.18.0.1", interval=interval, count=3, interface="vmk2", source=None)
    assert argv[0] == "vmkping" and argv[-1] == "198.18.0.1"
    options = argv[1:-1]
    values: dict[str, str] = {}
    while options:
        option = options.pop(0)
        assert option in VMKPING_VALUE_OPTIONS | VMKPING_FLAGS, option
        if option in VMKPING_VALUE_OPTIONS:
            values[option] = options.pop(0)
    assert values == {"-c": "3", "-i": f"{interval:g}", "-W": "1", "-I": "vmk2"}
    assert float(values["-i"]) == interval and values["-W"].isdigit()
