# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Unit tests of the iperf_run backend: command lines, scripts, output reading, diagnosis, flow.

Texts marked "observed" were printed by the Debian 12 binaries (iperf 3.12, iperf 2.1.8, ss,
net-tools and busybox 1.35 netstat) on the machine this module was written on; the others come
from the real-output corpus ``tests/fixtures/iperf/`` (its README section 3.4 and the ``*error*``
files) or from ESXi recordings cited where they are used (``[fs:<id>]`` as in
``tests/fixtures/esxi/SOURCES.md``).
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shlex
import shutil
import subprocess
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest
import yaml

import ansible_collections.esxilab.iperf.plugins.modules.iperf_run as module_doc
from ansible_collections.esxilab.iperf.plugins.action.iperf_run import ARGUMENT_SPEC as SPEC
from ansible_collections.esxilab.iperf.plugins.plugin_utils import iperf_run as r
from ansible_collections.esxilab.iperf.plugins.plugin_utils.iperf_run.reading import Rider
from tests.collection_path import ESXI_RECORDINGS, FIXTURES, REPO

TOKEN = "0123abcd"
M = f"{r.MARKER}{TOKEN}"

IPERF3_312_BANNER = (
    "iperf 3.12 (cJSON 1.7.15)\nLinux vm 6.18.44-fc-v669 #1 SMP PREEMPT_DYNAMIC @0 x86_64\n"
    "Optional features available: CPU affinity setting, IPv6 flow label, SCTP\n"
)  # observed, `iperf3 -v` (features line shortened)
IPERF2_218_BANNER = "iperf version 2.1.8 (12 August 2022) pthreads\n"  # observed, `iperf -v`
# ESXi 6.0, /opt/iperf/bin/iperf -v (the recording in tests/fixtures/esxi, prompt line removed)
IPERF2_205_BANNER = (ESXI_RECORDINGS / "6.0__opt-iperf-bin-iperf-v.txt").read_text().splitlines()[1]

GNU_ENV = "epochrealtime=\ndate_ns=1796019183.875742123\nusleep=0\nfracsleep=1\ngnu_timeout=1\nuname=Linux\n"
# What the probe prints under busybox ash 1.35 with busybox applets (observed: busybox `date +%s.%N`
# prints a literal %N, EPOCHREALTIME exists, usleep exists).
BUSYBOX_ENV = (
    "epochrealtime=1796019183.874025\ndate_ns=1796019183.%N\nusleep=1\nfracsleep=1\ngnu_timeout=0\nuname=Linux\n"
)
# An old busybox: no EPOCHREALTIME, no %N, no fractional sleep, usleep present, as ESXi is assumed to be.
OLD_BUSYBOX_ENV = "epochrealtime=\ndate_ns=1796019183.%N\nusleep=1\nfracsleep=0\ngnu_timeout=0\nuname=VMkernel\n"


def params(**values: Any) -> dict[str, Any]:
    """Task arguments as validate_argument_spec hands them over (every option present)."""
    full: dict[str, Any] = {name: spec.get("default") for name, spec in SPEC.items()}
    full.update(values)
    return full


def emit(token: str, *sections: tuple[str, str, str]) -> str:
    """The stdout a script prints: ``printf '\\n%s\\n' marker`` then the section's text."""
    out = ""
    for name, args, text in sections:
        out += f"\n{r.MARKER}{token} {name}{' ' + args if args else ''}\n{text}"
    return out


IPERF3 = r.Binary("/usr/bin/iperf3", "iperf3", "3.12")
IPERF2 = r.Binary("/usr/bin/iperf", "iperf2", "2.1.8")
IPERF2_ESXI = r.Binary("/opt/iperf/bin/iperf.copy", "iperf2", "2.0.5")


# ------------------------------------------------------------------------------------------
# Documentation and argument spec agree
# ------------------------------------------------------------------------------------------


def test_documentation_matches_argument_spec() -> None:
    doc = yaml.safe_load(module_doc.DOCUMENTATION)
    options = doc["options"]
    assert set(options) == set(SPEC)
    for name, spec in SPEC.items():
        documented = options[name]
        assert documented["type"] == spec["type"], name
        assert documented.get("default") == spec.get("default"), name
        assert documented.get("choices") == spec.get("choices"), name
        assert documented.get("required", False) == spec.get("required", False), name
        assert documented.get("elements") == spec.get("elements"), name
    assert doc["attributes"]["check_mode"]["support"] == "partial"
    assert doc["attributes"]["diff_mode"]["support"] == "none"
    assert "esxilab.iperf.attributes.action" in doc["extends_documentation_fragment"]
    assert "esxilab.iperf.attributes.platform_posix_raw" in doc["extends_documentation_fragment"]
    assert yaml.safe_load(module_doc.EXAMPLES)
    returned = yaml.safe_load(module_doc.RETURN)
    for key in ("pid", "log", "result", "raw", "command", "started_at", "stopped", "error_kind", "barrier"):
        assert key in returned


# ------------------------------------------------------------------------------------------
# Option checks without a host
# ------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("values", "needle"),
    [
        ({"mode": "server", "duration": 5}, "duration (mode=client)"),
        ({"mode": "stop", "binary": "/x"}, "binary (mode=client/probe/server)"),
        ({"mode": "client", "server": "h", "one_off": True}, "one_off (mode=server)"),
        ({"mode": "client", "server": "h", "pid": 3}, "pid (mode=stop)"),
        ({"mode": "client", "server": "h", "port": 70000}, "between 1 and 65535"),
        ({"mode": "client", "server": "h", "streams": 0}, "streams must be at least 1"),
        ({"mode": "client", "server": "h", "streams": 129}, "at most 128"),
        ({"mode": "client", "server": "h", "timeout": 0.0}, "timeout must be more than 0 and at most 86400 seconds"),
        # issue 21: NaN passes every comparison; a day is the longest wait; negative is no time
        ({"mode": "client", "server": "h", "timeout": float("nan")}, "timeout=nan is not a finite number"),
        ({"mode": "client", "server": "h", "timeout": 1e9}, "timeout must be more than 0 and at most 86400"),
        ({"mode": "client", "server": "h", "interval": float("nan")}, "interval=nan is not a finite number"),
        ({"mode": "client", "server": "h", "interval": -1.0}, "interval must be 0 (no interval reports) or more"),
        ({"mode": "client", "server": "h", "start_at": float("nan")}, "start_at=nan is not a finite number"),
        ({"mode": "client", "server": "h", "start_at": float("inf")}, "start_at=inf is not a finite number"),
        ({"mode": "client", "server": "h", "start_at": -5.0}, "start_at must be an epoch time in seconds"),
        ({"mode": "collect", "clients": 1, "deadline": 1e9}, "deadline must be more than 0 and at most 86400 seconds"),
        ({"mode": "collect", "clients": 1, "deadline": -5.0}, "deadline must be more than 0 and at most 86400"),
        ({"mode": "collect", "clients": 1, "deadline": float("nan")}, "deadline=nan is not a finite number"),
        ({"mode": "server", "server_timeout": -1}, "server_timeout must be at least 0"),
        ({"mode": "client", "server": "h", "window": "lots"}, "window='lots'"),
        ({"mode": "client", "server": "h", "bandwidth": "1 G"}, "bandwidth='1 G'"),
        ({"mode": "client", "server": "-p 1"}, "is not a host name or address"),
        ({"mode": "server", "state_dir": "tmp"}, "absolute path"),
        ({"mode": "server", "state_dir": "/tmp/$(reboot)"}, "absolute path"),
    ],
)
def test_validate_params_refuses(values: dict[str, Any], needle: str) -> None:
    with pytest.raises(r.IperfRunError) as err:
        r.validate_params(params(**values), SPEC)
    assert needle in err.value.message


def test_validate_params_accepts_defaults_of_other_modes() -> None:
    # Options left at their defaults never count as "set" for another mode.
    assert r.validate_params(params(mode="stop"), SPEC) == "stop"
    assert r.validate_params(params(mode="server", port=15400), SPEC) == "server"
    assert r.validate_params(params(mode="client", server="192.0.2.1", bandwidth="100M/10"), SPEC) == "client"


def test_default_timeout() -> None:
    assert r.default_timeout(params(mode="client")) == 40.0
    assert r.default_timeout(params(mode="client", duration=2)) == 32.0
    assert r.default_timeout(params(mode="client", duration=20, omit=3)) == 53.0
    assert r.default_timeout(params(mode="client", bytes=10**9)) == 600.0


def test_check_start_at() -> None:
    now = 1_700_000_000.0
    r.check_start_at(now + 5, now)
    r.check_start_at(now - 5, now)  # a past barrier is reported after the run, not refused
    with pytest.raises(r.IperfRunError, match="looks like milliseconds"):
        r.check_start_at(1_700_000_005_000.0, now)
    with pytest.raises(r.IperfRunError, match="more than one hour"):
        r.check_start_at(now + 3601, now)


# ------------------------------------------------------------------------------------------
# Command lines
# ------------------------------------------------------------------------------------------

ALL_CLIENT = {
    "server": "192.0.2.10",
    "duration": 12,
    "streams": 4,
    "interval": 0.5,
    "protocol": "udp",
    "bandwidth": "1G",
    "window": "256K",
    "length": "1400",
    "mss": 1400,
    "bind": "192.0.2.11",
    "extra_args": ["--title", "a b"],
}


def test_iperf3_client_argv_every_option() -> None:
    p = params(mode="client", **ALL_CLIENT, reverse=True, omit=2, zerocopy=True, connect_timeout=500)
    argv = r.build_client_argv(IPERF3, p, 5201)
    assert argv == [
        "/usr/bin/iperf3", "-c", "192.0.2.10", "-p", "5201", "-J", "-t", "12", "-P", "4", "-i", "0.5", "-R",
        "-u", "-b", "1G", "-w", "256K", "-l", "1400", "-M", "1400", "-O", "2", "-Z", "-B", "192.0.2.11",
        "--connect-timeout", "500", "--title", "a b",
    ]  # fmt: skip
    assert shlex.join(argv).endswith("--title 'a b'")


def test_iperf3_client_argv_bidir_and_bytes() -> None:
    argv = r.build_client_argv(IPERF3, params(mode="client", server="h", bidir=True, bytes=1000000), 15400)
    assert argv == ["/usr/bin/iperf3", "-c", "h", "-p", "15400", "-J", "-n", "1000000", "--bidir"]


def test_iperf2_21_client_argv_every_option() -> None:
    p = params(mode="client", **ALL_CLIENT, reverse=True)
    argv = r.build_client_argv(IPERF2, p, 5001)
    assert argv == [
        "/usr/bin/iperf", "-c", "192.0.2.10", "-p", "5001", "-f", "b", "-e", "-t", "12", "-P", "4", "-i", "0.5",
        "-R", "-u", "-b", "1G", "-w", "256K", "-l", "1400", "-M", "1400", "-B", "192.0.2.11", "--title", "a b",
    ]  # fmt: skip


def test_iperf2_bidir_is_dualtest_and_205_has_no_enhanced() -> None:
    argv = r.build_client_argv(IPERF2_ESXI, params(mode="client", server="h", bidir=True, duration=5), 5001)
    assert argv == ["/opt/iperf/bin/iperf.copy", "-c", "h", "-p", "5001", "-f", "b", "-t", "5", "-d"]


@pytest.mark.parametrize(
    ("binary", "values", "needle"),
    [
        (IPERF2_ESXI, {"reverse": True}, "reverse needs iperf2 2.1 or later"),
        (IPERF2, {"omit": 2}, "-O (omit the first seconds) is an iperf3 option"),
        (IPERF2, {"zerocopy": True}, "congestion control algorithm"),
        (IPERF2, {"connect_timeout": 100}, "--connect-timeout is an iperf3 option"),
        (IPERF2, {"bandwidth": "10M/5", "protocol": "udp"}, "/burst suffix is an iperf3 feature"),
        (IPERF2_ESXI, {"bandwidth": "10M"}, "-b implies UDP"),
        (r.Binary("/b", "iperf3", "3.6"), {"bidir": True}, "bidir needs iperf3 3.7"),
        (r.Binary("/b", "iperf3", "3.1.3"), {"connect_timeout": 100}, "connect_timeout needs iperf3 3.2"),
    ],
)
def test_client_argv_refusals(binary: r.Binary, values: dict[str, Any], needle: str) -> None:
    with pytest.raises(r.IperfRunError) as err:
        r.build_client_argv(binary, params(mode="client", server="h", **values), 1)
    assert needle in err.value.message


def test_iperf2_205_udp_bandwidth_is_allowed() -> None:
    argv = r.build_client_argv(IPERF2_ESXI, params(mode="client", server="h", protocol="udp", bandwidth="10M"), 1)
    assert argv[-3:] == ["-u", "-b", "10M"]


def test_server_argv_variants() -> None:
    p = params(mode="server", bind="127.0.0.1", interval=1.0, window="1M", one_off=True, server_timeout=300)
    assert r.build_server_argv(IPERF3, p, 15400) == [
        "/usr/bin/iperf3", "-s", "-p", "15400", "--forceflush", "-1", "--idle-timeout", "300", "-B", "127.0.0.1",
        "-i", "1", "-w", "1M",
    ]  # fmt: skip
    # 3.10 has --idle-timeout, but it restarts a one-off server instead of ending it: not used.
    assert r.build_server_argv(r.Binary("/b", "iperf3", "3.10.1"), p, 1)[:6] == [
        "/b",
        "-s",
        "-p",
        "1",
        "--forceflush",
        "-1",
    ]
    assert "--idle-timeout" not in r.build_server_argv(r.Binary("/b", "iperf3", "3.10.1"), p, 1)
    # 3.1.3 (no --forceflush yet)
    old = r.build_server_argv(r.Binary("/b", "iperf3", "3.1.3"), params(mode="server"), 5201)
    assert old == ["/b", "-s", "-p", "5201"]
    # iperf2 servers listen for one protocol
    assert r.build_server_argv(IPERF2, params(mode="server", protocol="udp"), 5001) == [
        "/usr/bin/iperf", "-s", "-p", "5001", "-u",
    ]  # fmt: skip
    with pytest.raises(r.IperfRunError, match="one_off is an iperf3 option"):
        r.build_server_argv(IPERF2, params(mode="server", one_off=True), 5001)
    with pytest.raises(r.IperfRunError, match=re.escape("3.0.11")):
        r.build_server_argv(r.Binary("/b", "iperf3", "3.0.10"), params(mode="server", one_off=True), 5201)


# ------------------------------------------------------------------------------------------
# Output sections
# ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("body", ["", "one line", "ends with newline\n", "two\n\nblank lines\n\n", "\n"])
def test_sections_keep_text_exactly(body: str) -> None:
    stdout = "login noise\n" + emit(TOKEN, ("stdout", "", body), ("exit", "rc=0 timedout=0", ""), ("done", "", ""))
    sections = r.parse_sections(stdout, TOKEN)
    assert [s.name for s in sections] == ["stdout", "exit", "done"]
    assert sections[0].text == body
    assert sections[1].args == "rc=0 timedout=0"


def test_sections_from_a_pty_are_normalised() -> None:
    stdout = emit(TOKEN, ("stdout", "", "a\nb\n"), ("done", "", "")).replace("\n", "\r\n")
    assert r.parse_sections(stdout, TOKEN)[0].text == "a\nb\n"


def test_sections_ignore_other_tokens() -> None:
    stdout = emit(TOKEN, ("stdout", "", f"{r.MARKER}ffff stdout\n"), ("done", "", ""))
    assert r.parse_sections(stdout, TOKEN)[0].text == f"{r.MARKER}ffff stdout\n"


def test_marker_round_trip_through_sh() -> None:
    script = "\n".join(
        [
            r.marker(TOKEN, "a"),
            "printf 'x\\ny'",
            r.marker(TOKEN, "b", "v=$((1+2))"),
            "printf 'z\\n'",
            r.marker(TOKEN, "done"),
        ]
    )
    out = subprocess.run(["/bin/sh", "-c", script], capture_output=True, text=True, timeout=10, check=True).stdout
    sections = r.parse_sections(out, TOKEN)
    assert [(s.name, s.args, s.text) for s in sections] == [("a", "", "x\ny"), ("b", "v=3", "z\n"), ("done", "", "")]


# ------------------------------------------------------------------------------------------
# Capabilities, clocks and the barrier
# ------------------------------------------------------------------------------------------


def test_parse_caps() -> None:
    gnu = r.parse_caps(GNU_ENV)
    assert (gnu.clock, gnu.nap, gnu.gnu_timeout, gnu.esxi) == ("date_ns", "fracsleep", True, False)
    busybox = r.parse_caps(BUSYBOX_ENV)
    assert (busybox.clock, busybox.nap, busybox.gnu_timeout) == ("epochrealtime", "fracsleep", False)
    old = r.parse_caps(OLD_BUSYBOX_ENV)
    assert (old.clock, old.nap, old.esxi, old.clock_source) == ("date_s", "usleep", True, "date +%s")
    # bash in a locale with a decimal comma
    assert r.parse_caps("epochrealtime=1796019183,874025\n").clock == "epochrealtime"


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("1796019183.874025", (1796019183.874025, 1e-6)),
        ("1796019183,874025", (1796019183.874025, 1e-6)),
        ("1796019183.875742123", (1796019183.875742123, 1e-9)),
        ("1796019183.%N", (1796019183.0, 1.0)),  # busybox date without %N (observed)
        ("1796019183.N", (1796019183.0, 1.0)),
        ("1796019183", (1796019183.0, 1.0)),
        ("", (None, None)),
        ("date: invalid", (None, None)),
    ],
)
def test_parse_started_at(raw: str, expected: tuple[float | None, float | None]) -> None:
    value, resolution = r.parse_started_at(raw)
    assert (value, resolution) == (
        pytest.approx(expected[0]) if expected[0] else None,
        pytest.approx(expected[1]) if expected[1] else None,
    )


def _sh(script: str, shell: Sequence[str] = ("/bin/sh", "-c")) -> str:
    return subprocess.run([*shell, script], capture_output=True, text=True, timeout=10, check=True).stdout.strip()


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("1700000000.000123", 1700000000000123),  # leading zeros must not turn octal
        ("1700000000.089999", 1700000000089999),
        ("1700000000,5", 1700000000500000),  # decimal comma, short fraction
        ("1700000000.123456789", 1700000000123456),  # nanoseconds are cut to microseconds
    ],
)
def test_now_us_shell_arithmetic(value: str, expected: int) -> None:
    # dash has no special EPOCHREALTIME, so the variable can be set to a known value.
    reading = r.now_us(r.HostCaps(clock="epochrealtime"))
    assert "$(" not in reading.replace("$((", "")  # no fork: no command substitution
    assert _sh(f"EPOCHREALTIME={value}\n{reading}\necho $_nu") == str(expected)


def test_barrier_math_subsecond_clock() -> None:
    text = r.build_barrier(TOKEN, r.HostCaps(clock="date_ns", nap="usleep"), 1700000000.25)
    assert "_tgt=1700000000250000" in text
    assert 'usleep "$_r"' in text
    assert "sleep $(( _r / 1000000 - 1 ))" in text  # coarse whole-second sleep first
    frac = r.build_barrier(TOKEN, r.HostCaps(clock="epochrealtime", nap="fracsleep"), 1.5)
    assert '_z=$(( $_r % 1000000 + 1000000 )); sleep "$(( $_r / 1000000 )).${_z#1}"' in frac
    assert "_r=$(( _r - 20000 ))" in frac  # aimed 20 ms short first, then the rest after a second reading
    assert "$(" not in frac.replace("$((", "")  # no fork but the sleeps
    spin = r.build_barrier(TOKEN, r.HostCaps(clock="epochrealtime", nap="none"), 1.5)
    assert 'while [ "$_r" -gt 0 ]; do _t=$EPOCHREALTIME;' in spin


def test_barrier_math_whole_second_clock() -> None:
    text = r.build_barrier(TOKEN, r.HostCaps(clock="date_s", nap="usleep"), 1700000000.25)
    assert "_ts=1700000000" in text
    assert 'usleep "250000"' in text  # the fraction after the second boundary
    no_nap = r.build_barrier(TOKEN, r.HostCaps(clock="date_s", nap="none"), 1700000000.25)
    assert 'while [ "$(date +%s)" -lt "1700000001" ]; do :; done' in no_nap  # next whole second
    whole = r.build_barrier(TOKEN, r.HostCaps(clock="date_s", nap="none"), 1700000000.0)
    assert "1700000001" not in whole


def test_a_bash_with_epochrealtime_runs_the_client_when_the_login_shell_forks_date() -> None:
    dash = r.parse_caps(GNU_ENV + "bash=/usr/bin/bash\nbash_epoch=1796019183.874025\n")
    assert (dash.clock, dash.bash) == ("date_ns", "/usr/bin/bash")
    fast = r.with_bash_clock(dash)
    assert (fast.clock, fast.shell) == ("epochrealtime", "/usr/bin/bash")
    assert r.parse_caps(GNU_ENV + "bash=/usr/bin/bash\nbash_epoch=\n").bash == ""  # bash 4: no such clock
    assert r.parse_caps(GNU_ENV + "bash=bin/bash\nbash_epoch=1796019183.874025\n").bash == ""  # not absolute
    assert r.with_bash_clock(r.HostCaps(clock="date_ns")).shell == ""
    assert r.in_shell(r.HostCaps(), "echo hi") == "echo hi"
    # a login shell with its own clock (bash, busybox ash 1.3x) - a bash found runs the client all the same
    assert r.parse_caps("epochrealtime=1796019183,874025\nbash=/bin/bash\nbash_epoch=1796019183.874025\n").bash
    bash = shutil.which("bash")
    assert bash is not None
    caps = r.with_bash_clock(r.HostCaps(clock="date_ns", nap="fracsleep", bash=bash))
    # the barrier and the start time under bash, the whole handed to it by the login shell (dash)
    script = r.build_barrier(TOKEN, caps, time.time() + 0.3) + "\n_sa=$EPOCHREALTIME\n" + r.marker(TOKEN, "sa", "$_sa")
    before = time.time()
    sections = r.parse_sections(_sh(r.in_shell(caps, script)), TOKEN)
    started = float(sections[1].args)
    assert before + 0.29 <= started <= time.time()


@pytest.mark.parametrize("fifo", [True, False])
def test_under_bash_the_client_is_started_before_the_barrier_and_let_go_at_the_start_time(
    tmp_path: Path, fifo: bool
) -> None:
    bash = shutil.which("bash")
    assert bash is not None
    caps = r.with_bash_clock(r.HostCaps(clock="date_ns", nap="fracsleep", gnu_timeout=True, bash=bash))
    base = tmp_path / "state"
    base.mkdir()
    base.chmod(0o1777)
    start_at = time.time() + 1.2
    script = r.build_client_script(
        TOKEN, ["date", "+%s.%N"], caps=caps, timeout=5, start_at=start_at, state_dir=str(base)
    )
    assert "mkfifo -m 600" in script and "read -r -t" in script and "echo go >&8" in script
    env = dict(os.environ)
    if not fifo:  # no mkfifo on the host: as without bash (the client started after the barrier)
        (tmp_path / "bin").mkdir()
        (tmp_path / "bin" / "mkfifo").write_text("#!/bin/sh\nexit 1\n")
        (tmp_path / "bin" / "mkfifo").chmod(0o755)
        env["PATH"] = f"{tmp_path / 'bin'}:{env['PATH']}"
    out = subprocess.run(["/bin/sh", "-c", r.in_shell(caps, script)], capture_output=True, text=True, timeout=20,
                         check=True, env=env)  # fmt: skip
    sections = {s.name: s for s in r.parse_sections(out.stdout, TOKEN)}
    started, ran = float(sections["started_at"].args), float(sections["stdout"].text)
    assert r.parse_kv(sections["exit"].args) == {"rc": "0", "timedout": "0"}, out.stdout + out.stderr
    assert start_at <= started <= ran < started + 0.5  # the client ran after the start time it reported
    private = next(base.iterdir())
    assert list(private.iterdir()) == []  # the FIFOs and files are gone


@pytest.mark.parametrize("word", ["go", None])
def test_the_client_started_before_the_barrier_runs_on_go_only(tmp_path: Path, word: str | None) -> None:
    """The FIFO's end without "go" - the script hung up and gone, its end closed before the TERM to its timeout came
    (a loaded host) - ends the waiting client without a test; "go" runs it."""
    fifo, ran = tmp_path / "go", tmp_path / "ran"
    os.mkfifo(fifo, 0o600)
    held = os.open(fifo, os.O_RDWR)  # the script's end (exec 8<>), so that neither end blocks
    waiting = subprocess.Popen(["/bin/sh", "-c", r.WAIT_FOR_GO, "sh", str(fifo), "touch", str(ran)])
    try:
        deadline = time.monotonic() + 10  # the script's end stays open until the client has opened its own
        while not any(os.path.realpath(f) == str(fifo) for f in Path(f"/proc/{waiting.pid}/fd").glob("*")):
            assert time.monotonic() < deadline and waiting.poll() is None
            time.sleep(0.01)
        if word is not None:
            os.write(held, f"{word}\n".encode())
    finally:
        os.close(held)
    assert waiting.wait(timeout=10) == (0 if word else 125)
    assert ran.exists() is (word is not None)


def test_barrier_in_the_past_returns_at_once() -> None:
    caps = r.HostCaps(clock="date_ns", nap="fracsleep")
    script = r.build_barrier(TOKEN, caps, 1000.0) + "\n" + r.marker(TOKEN, "done")
    sections = r.parse_sections(_sh(script), TOKEN)
    kv = r.parse_kv(sections[0].args)
    assert kv["target_us"] == "1000000000"
    assert int(kv["now_us"]) > 1_700_000_000_000_000


@pytest.mark.parametrize(
    ("caps", "words"),
    [
        (r.HostCaps(clock="epochrealtime", nap="usleep"), "then usleep to the target (clock: EPOCHREALTIME)"),
        (r.HostCaps(clock="date_ns", nap="none"), "busy-wait on date +%s.%N"),
        (r.HostCaps(clock="date_s", nap="none"), "busy-wait for the next whole second"),
    ],
)
def test_barrier_method_words(caps: r.HostCaps, words: str) -> None:
    assert words in r.barrier_method(caps)


# ------------------------------------------------------------------------------------------
# Listening sockets
# ------------------------------------------------------------------------------------------

SS_OUTPUT = """\
Netid State  Recv-Q Send-Q Local Address:Port  Peer Address:PortProcess
udp   UNCONN 0      0            0.0.0.0:15431      0.0.0.0:*
tcp   LISTEN 0      4096       127.0.0.1:15430      0.0.0.0:*
tcp   LISTEN 0      4096               *:15432            *:*
"""  # observed (`ss -lntu`, trailing blanks stripped)
NETSTAT_OUTPUT = """\
Active Internet connections (only servers)
Proto Recv-Q Send-Q Local Address           Foreign Address         State
tcp        0      0 127.0.0.1:15430         0.0.0.0:*               LISTEN
tcp6       0      0 :::15432                :::*                    LISTEN
udp        0      0 0.0.0.0:15431           0.0.0.0:*
"""  # observed (net-tools `netstat -lntu`)
# `esxcli network ip connection list` column layout (Proto, Recv Q, Send Q, Local Address,
# Foreign Address, State, World ID, CC Algo, World Name; UDP rows have no state), as quoted in
# the tests of intel/mfd-network-adapter; rows written for this test.
ESXCLI_OUTPUT = """\
Proto  Recv Q  Send Q  Local Address      Foreign Address  State        World ID  CC Algo  World Name
-----  ------  ------  -----------------  ---------------  -----------  --------  -------  -----------
tcp         0       0  192.0.2.11:5201    0.0.0.0:0        LISTEN        2101234  newreno  iperf3.copy
tcp         0       0  192.0.2.11:22      192.0.2.99:5599  ESTABLISHED   2099999  newreno  sshd
udp         0       0  [::]:123           [::]:0                         2098450           ntpd
"""


def test_parse_listeners() -> None:
    assert r.parse_listeners(SS_OUTPUT) == [
        r.Listener("udp", "0.0.0.0", 15431),
        r.Listener("tcp", "127.0.0.1", 15430),
        r.Listener("tcp", "*", 15432),
    ]
    assert r.parse_listeners(NETSTAT_OUTPUT) == [
        r.Listener("tcp", "127.0.0.1", 15430),
        r.Listener("tcp", "::", 15432),
        r.Listener("udp", "0.0.0.0", 15431),
    ]
    assert r.parse_listeners(ESXCLI_OUTPUT) == [r.Listener("tcp", "192.0.2.11", 5201), r.Listener("udp", "::", 123)]


def test_port_conflicts() -> None:
    listeners = r.parse_listeners(SS_OUTPUT)
    assert r.port_conflicts(listeners, proto="tcp", port=15430, bind=None)
    assert r.port_conflicts(listeners, proto="tcp", port=15430, bind="127.0.0.1")
    assert not r.port_conflicts(listeners, proto="tcp", port=15430, bind="127.0.0.2")  # another address
    assert r.port_conflicts(listeners, proto="tcp", port=15432, bind="127.0.0.2")  # wildcard listener
    assert not r.port_conflicts(listeners, proto="tcp", port=15431, bind=None)  # only UDP there
    assert r.port_conflicts(listeners, proto="udp", port=15431, bind=None)


# ------------------------------------------------------------------------------------------
# Binaries
# ------------------------------------------------------------------------------------------


def _probe_with(*binaries: tuple[str, str]) -> r.Probe:
    stdout = emit(
        TOKEN,
        ("env", "", GNU_ENV),
        *[("version", path, banner) for path, banner in binaries],
        ("done", "", ""),
    )
    return r.parse_probe(r.CommandOutput(0, stdout, ""), TOKEN)


def test_select_binary_order_and_tool() -> None:
    probe = _probe_with(
        ("/opt/iperf/bin/iperf.copy", IPERF2_205_BANNER),
        ("/usr/bin/iperf3", IPERF3_312_BANNER),
        ("/usr/bin/iperf", IPERF2_218_BANNER),
    )
    assert r.select_binary(probe, tool=None, binary=None) == r.Binary("/opt/iperf/bin/iperf.copy", "iperf2", "2.0.5")
    assert r.select_binary(probe, tool="iperf3", binary=None) == r.Binary("/usr/bin/iperf3", "iperf3", "3.12")


def test_select_binary_errors() -> None:
    only2 = _probe_with(("/usr/bin/iperf", IPERF2_218_BANNER))
    with pytest.raises(r.IperfRunError) as err:
        r.select_binary(only2, tool="iperf3", binary=None)
    assert "no usable iperf3 binary" in err.value.message
    assert "the host has iperf2 2.1.8 at /usr/bin/iperf" in err.value.message
    assert "esxi_iperf_install" in err.value.message
    with pytest.raises(r.IperfRunError, match=re.escape("is iperf2 2.1.8, but tool=iperf3")):
        r.select_binary(only2, tool="iperf3", binary="/usr/bin/iperf")
    # observed: what sh prints for an executable file that is not a program
    broken = _probe_with(("/tmp/iperf3.copy", '/tmp/iperf3.copy: 1: Syntax error: "(" unexpected\n'))
    with pytest.raises(r.IperfRunError) as err:
        r.select_binary(broken, tool=None, binary="/tmp/iperf3.copy")
    assert "printed no iperf version banner" in err.value.message
    assert "execInstalledOnly" in err.value.message
    with pytest.raises(r.IperfRunError, match="does not exist or is not executable"):
        r.select_binary(_probe_with(), tool=None, binary="/nope")


def test_probe_script_lists_candidates_quoted() -> None:
    script = r.build_probe_script(TOKEN, candidates=("/opt/x y/iperf", "iperf3"), state_dir="/tmp", pid=42)
    assert "for c in '/opt/x y/iperf' iperf3; do" in script
    assert "ss -lntu" not in script  # the listening sockets are the server start's own check
    # the pidfiles are listed in the private directory <state_dir>/esxilab-iperf-<uid> only
    assert "_sd=/tmp;" in script and '"$_pd"/esxilab-iperf-*.pid' in script
    assert "kill -0 42" in script


def test_probe_failure_is_explained() -> None:
    with pytest.raises(r.IperfRunError, match="POSIX shell"):
        r.parse_probe(r.CommandOutput(127, "", "sh: not found"), TOKEN)


# ------------------------------------------------------------------------------------------
# Diagnosis from the tools' own words
# ------------------------------------------------------------------------------------------

CLIENT3 = r.Context("client", "iperf3", server="192.0.2.10", port=5201)
CLIENT2 = r.Context("client", "iperf2", server="192.0.2.10", port=5001, duration=10.0)
SERVER3 = r.Context("server", "iperf3", port=5201, bind="198.18.0.40", binary="/usr/lib/vmware/vsan/bin/iperf3")


def _fixture(name: str) -> str:
    return (FIXTURES / name).read_text()


@pytest.mark.parametrize(
    ("text", "ctx", "kind", "needles"),
    [
        (
            _fixture("iperf3-3.1.3-windows-text-client-error-connection-refused.txt"),
            CLIENT3,
            "refused",
            ["is a server listening on 192.0.2.10:5201?", "mode=server"],
        ),
        (
            _fixture("iperf3-3.17.1-text-client-error-unable-to-connect.txt"),
            CLIENT3,
            "refused",
            ["connection refused by 192.0.2.10:5201"],
        ),
        (
            _fixture("iperf3-ge3.17-jsonstream-client-error-server-busy-omnt.jsonl"),
            CLIENT3,
            "busy",
            ["busy running a test", "one server port per client/server pair"],
        ),
        (
            "error - the server is busy running a test. try again later",  # README 3.4 (issue #980), -J form
            CLIENT3,
            "busy",
            ["another client"],
        ),
        (
            _fixture("iperf3-3.x-text-client-error-control-socket-closed-cloudpilot.txt"),
            CLIENT3,
            "not_iperf3_server",
            ["probably an iperf2 server", "do not interoperate", "tool=iperf3"],
        ),
        (
            "received an unknown control message",  # observed: iperf3 3.12 client -> iperf2 2.1.8 server, -J
            CLIENT3,
            "not_iperf3_server",
            ["does not speak the iperf3 protocol"],
        ),
        (
            # observed: iperf3 3.12 client -> iperf2 2.1.8 server, -J (one run in three or so)
            "unable to receive control message: Connection reset by peer",
            CLIENT3,
            "not_iperf3_server",
            ["does not speak the iperf3 protocol"],
        ),
        (
            _fixture("iperf3-3.1.3-text-server-error-unable-to-start-listener.txt"),
            SERVER3,
            "bind_address",
            ["198.18.0.40 is not an address of this host"],
        ),
        (
            # ESXi 7, shipped iperf3 as server ([fs:9989324320] "在esxi上运行iperf3", 2021-11-23)
            "iperf3: error - unable to start listener for connections: Operation not permitted\niperf3: exiting\n",
            SERVER3,
            "listener_not_permitted",
            ["/usr/lib/vmware/vsan/bin/iperf3.copy", "esxi_iperf_install"],
        ),
        (
            # README 3.4 (issue #625)
            "iperf3: error - unable to start listener for connections: Address already in use\niperf3: exiting\n",
            SERVER3,
            "port_in_use",
            ["port 5201 is already in use", "mode=stop port=5201"],
        ),
        (
            "listener bind failed: Address already in use\n",  # observed: iperf 2.1.8 -s on a used port
            r.Context("server", "iperf2", port=5001),
            "port_in_use",
            ["port 5001 is already in use"],
        ),
        (
            "tcp connect failed: Connection refused\n",  # observed: iperf 2.1.8 client, no server
            CLIENT2,
            "refused",
            ["connection refused by 192.0.2.10:5001", "tool=iperf2"],
        ),
        (
            "read failed: Connection refused\n" * 3,  # observed: iperf 2.1.8 UDP client, no UDP server
            r.Context("client", "iperf2", server="192.0.2.10", port=5001, protocol="udp"),
            "udp_no_server",
            ["start the server with protocol=udp"],
        ),
        (
            "[  3] WARNING: did not receive ack of last datagram after 10 tries.\n",  # observed, iperf 2.1.8
            r.Context("client", "iperf2", server="192.0.2.10", port=5001, protocol="udp"),
            "udp_no_server",
            ["no iperf2 UDP server answered"],
        ),
        (
            "iperf3: error - unable to connect to server: Name or service not known\n",  # observed, iperf3 3.12
            r.Context("client", "iperf3", server="nonexistent.invalid", port=5201),
            "resolve",
            ["'nonexistent.invalid' cannot be resolved"],
        ),
        (
            "nonexistent.invalid: Unknown host\n",  # observed, iperf 2.1.8
            r.Context("client", "iperf2", server="nonexistent.invalid", port=5001),
            "resolve",
            ["use an IP address"],
        ),
    ],
)
def test_diagnose_known_texts(text: str, ctx: r.Context, kind: str, needles: list[str]) -> None:
    diagnosis = r.diagnose(text, ctx)
    assert diagnosis is not None
    assert diagnosis.kind == kind
    for needle in needles:
        assert needle in diagnosis.message


def test_diagnose_control_socket_closed_mid_test_is_not_a_tool_mismatch() -> None:
    text = _fixture("iperf3-3.x-text-client-error-control-socket-closed-cloudpilot.txt")
    diagnosis = r.diagnose(text, CLIENT3, had_intervals=True)
    assert diagnosis is not None and diagnosis.kind == "server_gone"


def test_diagnose_iperf2_client_against_iperf3_server() -> None:
    # observed: iperf 2.1.8 client -> iperf3 3.12 server lasted 0.0261 s of -t 1
    text = "tcp write failed: Connection reset by peer\nshutdown failed: Transport endpoint is not connected\n"
    ctx = r.Context("client", "iperf2", server="127.0.0.1", port=15400, duration=1.0)
    diagnosis = r.diagnose(text, ctx, ran_seconds=0.0261)
    assert diagnosis is not None and diagnosis.kind == "not_iperf2_server"
    assert "after 0.0261 s of 1 s" in diagnosis.message
    assert "probably an iperf3 server" in diagnosis.message
    late = r.diagnose(text, ctx, ran_seconds=0.9)
    assert late is not None and late.kind == "reset"


def test_diagnose_timeout_and_exec() -> None:
    timeout = r.diagnose("", CLIENT3, timed_out=True, timeout=40.0)
    assert timeout is not None and timeout.kind == "timeout"
    assert "within timeout=40 s" in timeout.message and "do not interoperate" in timeout.message
    with_intervals = r.diagnose("", CLIENT3, timed_out=True, timeout=40.0, had_intervals=True)
    assert with_intervals is not None and "interoperate" not in with_intervals.message
    denied = r.diagnose("sh: 1: /opt/iperf/bin/iperf.copy: Permission denied\n", CLIENT2, rc=126)
    assert denied is not None and denied.kind == "exec_failed" and "execInstalledOnly" in denied.message
    assert r.diagnose("iperf3: getsockopt - Function not implemented\n", CLIENT3) is None


def test_diagnose_issue445_is_not_a_client_error() -> None:
    text = _fixture("iperf3-3.0or3.1-text-server-error-unable-to-receive-parameters-too-many-errors-issue445.txt")
    assert r.diagnose(text, SERVER3) is None


# ------------------------------------------------------------------------------------------
# Client output
# ------------------------------------------------------------------------------------------

GNU_CAPS = r.parse_caps(GNU_ENV)


def _client_sections(
    stdout: str, stderr: str = "", *, rc: int = 0, timed_out: bool = False, **extra: str
) -> list[r.Section]:
    parts: list[tuple[str, str, str]] = []
    if "barrier" in extra:
        parts.append(("barrier", extra["barrier"], ""))
    parts += [
        ("started_at", extra.get("started_at", "1471318776.500000123"), ""),
        ("exit", f"rc={rc} timedout={int(timed_out)}", ""),
        ("stdout", "", stdout),
        ("stderr", "", stderr),
        ("done", "", ""),
    ]
    sections: list[r.Section] = r.parse_sections(emit(TOKEN, *parts), TOKEN)
    return sections


def test_interpret_iperf3_json() -> None:
    sections = _client_sections(_fixture("iperf3-3.1.3-json-client-tcp-pscheduler.json"))
    info, diagnosis = r.interpret_client(
        sections, CLIENT3, caps=GNU_CAPS, timeout=40.0, start_at=None, labels={"pair": "a-b"}
    )
    assert diagnosis is None
    result = info["result"]
    assert result["sent"]["bytes"] == 486643200
    assert result["sent"]["retransmits"] == 159
    assert result["received"]["bytes"] == 485969880
    assert result["bits_per_second"] == pytest.approx(388736097.120548)
    assert result["labels"] == {"pair": "a-b"}
    assert info["started_at"] == pytest.approx(1471318776.500000123)
    assert (info["started_at_source"], info["started_at_resolution"]) == ("date +%s.%N", 1e-9)
    assert info["raw"].startswith("{")
    assert "barrier" not in info


def test_interpret_iperf2_text_fb_e() -> None:
    sections = _client_sections(_fixture("iperf2-2.1.9-text-client-udp-e-fb-i2-pscheduler.txt"))
    ctx = r.Context("client", "iperf2", server="localhost", port=5001, protocol="udp", duration=6.0)
    info, diagnosis = r.interpret_client(sections, ctx, caps=GNU_CAPS, timeout=36.0, start_at=None, labels={})
    assert diagnosis is None
    result = info["result"]
    assert result["received"]["bytes"] == 790860
    assert result["received"]["bits_per_second"] == 1052469.0
    assert result["udp"]["packets"] == 538 and result["udp"]["lost_packets"] == 0
    assert result["udp"]["jitter_ms"] == 0.013
    assert "labels" not in result


def test_interpret_esxi_getsockopt_drops_retransmits() -> None:
    # The JSON is a real 3.1.3 document; the stderr lines are what ESXi's iperf3 prints
    # (ESXI_67 in tests/unit/plugins/plugin_utils/iperf/test_iperf3_text.py, ESXi 6.7, [fs:62019052720]).
    stderr = "iperf3: getsockopt - Function not implemented\n" * 4
    sections = _client_sections(_fixture("iperf3-3.1.3-json-client-tcp-pscheduler.json"), stderr)
    info, diagnosis = r.interpret_client(sections, CLIENT3, caps=GNU_CAPS, timeout=40.0, start_at=None, labels={})
    assert diagnosis is None
    result = info["result"]
    assert result["sent"]["retransmits"] is None
    assert all(i["retransmits"] is None for i in result["intervals"])
    assert result["sent"]["bytes"] == 486643200  # the byte counts stay
    assert any("getsockopt" in w for w in result["warnings"])
    # the RTT the document carries (min 1875 us) comes from the same TCP_INFO: dropped too
    assert result["rtt"] is None and result["per_stream"][0]["rtt"] is None


def test_interpret_refused_iperf3_json() -> None:
    # observed: iperf3 3.12 -J against a closed port (exit status 0 all the same)
    doc = (
        '{\n\t"start":\t{\n\t\t"connected":\t[],\n\t\t"version":\t"iperf 3.12",\n\t\t"system_info":\t"Linux vm"\n\t},\n'
        '\t"intervals":\t[],\n\t"end":\t{\n\t},\n\t"error":\t"unable to connect to server: Connection refused"\n}\n'
    )
    info, diagnosis = r.interpret_client(
        _client_sections(doc), CLIENT3, caps=GNU_CAPS, timeout=40.0, start_at=None, labels={}
    )
    assert diagnosis is not None and diagnosis.kind == "refused"
    assert info["result"]["error"] == "unable to connect to server: Connection refused"
    assert info["rc"] == 0


def test_interpret_no_output() -> None:
    sections = _client_sections("", "sh: 1: iperf3: not found\n", rc=127)
    info, diagnosis = r.interpret_client(sections, CLIENT3, caps=GNU_CAPS, timeout=40.0, start_at=None, labels={})
    assert info["result"] is None
    assert diagnosis is not None and diagnosis.kind == "exec_failed"


def test_interpret_barrier_on_time_and_late() -> None:
    doc = _fixture("iperf3-3.1.3-json-client-tcp-pscheduler.json")
    on_time = _client_sections(doc, barrier="now_us=1471318770000000 target_us=1471318776500000")
    info, _diag = r.interpret_client(on_time, CLIENT3, caps=GNU_CAPS, timeout=40.0, start_at=1471318776.5, labels={})
    assert info["barrier"]["late_by"] == pytest.approx(0.0, abs=1e-6)
    assert info["barrier"]["arrived_at"] == 1471318770.0
    assert info["warnings"] == []
    late = _client_sections(
        doc, barrier="now_us=1471318778000000 target_us=1471318776500000", started_at="1471318778.000100"
    )
    info, _diag = r.interpret_client(late, CLIENT3, caps=GNU_CAPS, timeout=40.0, start_at=1471318776.5, labels={})
    assert info["barrier"]["late_by"] == pytest.approx(1.5001)
    assert "start_at had passed by 1.500 s" in info["warnings"][0]
    coarse = _client_sections(
        doc, barrier="now_us=1471318770000000 target_us=1471318776500000", started_at="1471318776"
    )
    caps = r.parse_caps(OLD_BUSYBOX_ENV)
    info, _diag = r.interpret_client(coarse, CLIENT3, caps=caps, timeout=40.0, start_at=1471318776.5, labels={})
    assert info["barrier"]["late_by"] is None  # a whole-second reading cannot tell
    assert (info["started_at_source"], info["started_at_resolution"]) == ("date +%s", 1.0)


# ------------------------------------------------------------------------------------------
# Scripts are valid sh
# ------------------------------------------------------------------------------------------

SHELLS = [pytest.param(["/bin/sh", "-n", "-c"], id="sh")]
if shutil.which("busybox"):
    SHELLS.append(pytest.param(["busybox", "sh", "-n", "-c"], id="busybox-ash"))
if shutil.which("bash"):
    SHELLS.append(pytest.param(["bash", "--posix", "-n", "-c"], id="bash-posix"))

ALL_CAPS = [
    r.HostCaps(clock=c, nap=n, gnu_timeout=t)
    for c in ("epochrealtime", "date_ns", "date_s")
    for n in ("fracsleep", "usleep", "none")
    for t in (True, False)
]


@pytest.mark.parametrize("shell", SHELLS)
def test_every_script_parses(shell: list[str]) -> None:
    argv = ["/usr/bin/iperf3", "-c", "h'o$st", "-p", "1", "--title", "a b; rm -rf /"]
    scripts = [r.build_probe_script(TOKEN, candidates=r.DEFAULT_BINARIES, state_dir="/tmp", pid=7)]
    for caps in ALL_CAPS:
        scripts.append(r.build_client_script(TOKEN, argv, caps=caps, timeout=12.5, start_at=1700000000.25))
        scripts.append(
            r.build_server_script(
                TOKEN,
                argv,
                caps=caps,
                state_dir="/tmp",
                stem="esxilab-iperf-1",
                server_timeout=60,
                meta={"tool": "iperf3", "binary": "/a\\nb'c"},
                port=5201,
                protocol="udp" if caps.gnu_timeout else "tcp",
                dry=caps.esxi,
            )
        )
        scripts.append(
            r.build_server_script(
                TOKEN, argv, caps=caps, state_dir="/tmp", stem="x", server_timeout=0, meta={}, port=1, dry=True
            )
        )
        target = r.read_pidfile("esxilab-iperf-1.pid", "pid=12\nguard=13\nbinary=/usr/bin/iperf3\n")
        assert target is not None
        scripts.append(r.build_stop_script(TOKEN, [target], caps=caps, state_dir="/tmp"))
    for script in scripts:
        subprocess.run([*shell, script], check=True, capture_output=True, timeout=10)


def test_client_script_timeout_wrapping() -> None:
    argv = ["/usr/bin/iperf3", "-c", "h"]
    gnu = r.build_client_script(TOKEN, argv, caps=r.HostCaps(gnu_timeout=True), timeout=40.2)
    assert "timeout -k 2 41 /usr/bin/iperf3 -c h" in gnu
    watchdog = r.build_client_script(TOKEN, argv, caps=r.HostCaps(gnu_timeout=False), timeout=40.2)
    assert "sleep 41 & _w=$!" in watchdog
    assert "timeout -k" not in watchdog


# ------------------------------------------------------------------------------------------
# The whole flow against a fake host
# ------------------------------------------------------------------------------------------


class FakeHost:
    """Answers the backend's scripts like a host would, from canned pieces."""

    def __init__(
        self,
        *,
        env: str = GNU_ENV,
        binaries: Mapping[str, str] | None = None,
        listing: tuple[str, str] = ("ss", ""),
        pidfiles: Sequence[tuple[bool, str]] = (),
        pid_alive: bool = False,
        started: tuple[str, str] = ("status=listening", "Server listening on 5201\n"),
        client: Sequence[tuple[str, str, str]] = (),
        stopped: str = "stopped",
        state: str = "status=ok error= uid=0",
    ) -> None:
        self.state = state
        self.env = env
        self.binaries = dict(binaries if binaries is not None else {"/usr/bin/iperf3": IPERF3_312_BANNER})
        self.listing = listing
        self.pidfiles = list(pidfiles)
        self.pid_alive = pid_alive
        self.started = started
        self.client = list(client)
        self.stopped = stopped
        self.scripts: list[str] = []

    def __call__(self, script: str) -> r.CommandOutput:
        self.scripts.append(script)
        match = re.search(r"@@ESXILAB:([0-9a-f]+)", script)
        assert match
        token = match.group(1)
        state = ("state", self.state, "")
        if '_isours "$_op"' in script:  # the server start (or its check-mode run)
            port = re.search(r'_isours "\$_op" "\$_ob" (\d+)', script)
            assert port
            for alive, content in self.pidfiles:
                if alive and f"port={port.group(1)}" in content:
                    busy = ("busy", "pid=4242", content)
                    return r.CommandOutput(0, emit(token, state, busy, ("done", "", "")), "")
            if "ss -lntu" in script and re.search(
                rf"[:.]{port.group(1)}\s.*LISTEN|LISTEN.*[:.]{port.group(1)}\s", self.listing[1]
            ):
                listing = ("listing", self.listing[0], self.listing[1])
                return r.CommandOutput(0, emit(token, state, listing, ("done", "", "")), "")
            if "esxilab-iperf-guard" not in script:
                return r.CommandOutput(0, emit(token, state, ("would", "", ""), ("done", "", "")), "")
            args, log = self.started
            return r.CommandOutput(
                0, emit(token, state, ("started", f"pid=4242 guard=4243 {args}", log), ("done", "", "")), ""
            )
        if " exit rc=" in script:
            return r.CommandOutput(0, emit(token, state, *self.client, ("done", "", "")), "")
        if " stopped pid=" in script:
            pids = re.findall(r"^_stop1 (\d+) ", script, re.MULTILINE)
            # a stopped server no longer runs: its pidfile no longer makes the port busy
            self.pidfiles = [(alive and not any(f"pid={p}\n" in c for p in pids), c) for alive, c in self.pidfiles]
            parts = [("stopped", f"pid={p} status={self.stopped}", "server log\n") for p in pids]
            return r.CommandOutput(0, emit(token, state, *parts, ("done", "", "")), "")
        parts = [("env", "", self.env)]
        loop = re.search(r"^for c in (.*); do$", script, re.MULTILINE)
        if loop:
            for candidate in shlex.split(loop.group(1)):
                path = candidate if "/" in candidate else f"/usr/bin/{candidate}"
                if path in self.binaries:
                    parts.append(("version", path, self.binaries[path]))
                else:
                    parts.append(("missing", candidate, ""))
        if "esxilab-iperf-*.pid" in script:
            parts.append(state)
            for alive, content in self.pidfiles:
                port = re.search(r"port=(\d+)", content)
                bind = re.search(r"bind=(\S+)", content)
                name = f"esxilab-iperf-{port.group(1) if port else 0}{'-' + bind.group(1) if bind else ''}.pid"
                pid = re.search(r"^pid=(\d+)$", content, re.MULTILINE)
                number = pid.group(1) if pid else ""
                cmdline = f"/usr/bin/iperf3 -s -p {port.group(1) if port else 0} --forceflush\n" if alive else ""
                parts.append(("pidfile", name, content))
                parts.append(("process", f"pid={number} alive={int(alive)}", cmdline))
        pid = re.search(r"kill -0 (\d+) 2>/dev/null; then a=1", script)
        if pid:
            parts.append(("pid", f"pid={pid.group(1)} alive={int(self.pid_alive)}", ""))
        parts.append(("done", "", ""))
        return r.CommandOutput(0, emit(token, *parts), "")


def run(host: FakeHost, *, check_mode: bool = False, **values: Any) -> dict[str, Any]:
    result: dict[str, Any] = r.run(
        params(**values), host, spec=SPEC, check_mode=check_mode, token=TOKEN, now=lambda: 1_700_000_000.0
    )
    return result


PIDFILE_15400 = "pid=4242\nguard=4243\ntool=iperf3\nport=15400\nbind=127.0.0.1\nbinary=/usr/bin/iperf3\n"


def test_flow_server_start() -> None:
    host = FakeHost()
    result = run(host, mode="server", port=15400, bind="127.0.0.1", server_timeout=120)
    assert result["changed"] is True
    assert (result["pid"], result["guard_pid"], result["status"]) == (4242, 4243, "listening")
    assert result["log"] == "/tmp/esxilab-iperf-0/esxilab-iperf-15400-127.0.0.1.log"  # the private directory
    assert result["command"] == "/usr/bin/iperf3 -s -p 15400 --forceflush -B 127.0.0.1"
    assert result["warnings"] == []
    start = host.scripts[-1]
    assert "trap '' HUP; exec $_ss /usr/bin/iperf3 -s -p 15400 --forceflush -B 127.0.0.1" in start
    assert "_ss=setsid" in start and "set -m" in start  # out of the ssh session's foreground group
    assert '_pf="$_pd/esxilab-iperf-15400-127.0.0.1.pid"' in start
    assert 'esxilab-iperf-guard "$p" "$_pf" 120' in start
    # each pidfile line is a printf argument, never part of the format
    printf = 'printf \'%s\\n\' "pid=$p" "guard=$g" tool=iperf3 port=15400 bind=127.0.0.1 binary=/usr/bin/iperf3'
    assert printf in start


def test_flow_server_check_mode_runs_only_the_checks() -> None:
    host = FakeHost()
    result = run(host, check_mode=True, mode="server", port=15400)
    assert result["changed"] is True and result["pid"] is None
    assert "would start iperf3 server on port 15400" in result["msg"]
    assert len(host.scripts) == 2  # the probe, then the start script's checks only
    assert "esxilab-iperf-guard" not in host.scripts[-1] and "mkdir" not in host.scripts[-1].split("_ls()")[0]
    assert "_isours" in host.scripts[-1] and "ss -lntu" in host.scripts[-1]


def test_flow_with_a_given_probe_needs_one_session() -> None:
    host = FakeHost()
    probe = run(host, mode="probe")["probe"]
    assert probe["caps"] == {"clock": "date_ns", "nap": "fracsleep", "gnu_timeout": True, "esxi": False, "bash": ""}
    assert probe["candidates"] == list(r.DEFAULT_BINARIES)
    assert [b["path"] for b in probe["binaries"] if b["runnable"]] == ["/usr/bin/iperf3"]
    host.scripts.clear()
    assert run(host, mode="server", port=15400, probe=probe)["status"] == "listening"
    assert len(host.scripts) == 1 and "esxilab-iperf-guard" in host.scripts[0]
    # a port in use is still refused by the start script itself
    busy = FakeHost(listing=("ss", SS_OUTPUT))
    with pytest.raises(r.IperfRunError, match="port 15430 is already in use"):
        run(busy, mode="server", port=15430, probe=probe)
    assert len(busy.scripts) == 1
    # the stop of a port: one session, its script reads the pidfile (made for another binary: only the tools count)
    host.scripts.clear()
    other = probe | {"candidates": ["/opt/iperf3"]}
    assert run(host, mode="stop", port=15400, probe=other)["msg"] == "no server started by this module runs here"
    assert len(host.scripts) == 1 and '_pf="$_pd/esxilab-iperf-15400.pid"' in host.scripts[0]


@pytest.mark.parametrize(
    ("change", "needle"),
    [
        ({"caps": None}, "no caps"),
        ({"caps": {"clock": "sundial", "nap": "none", "gnu_timeout": False, "esxi": False}}, "probe.caps.clock"),
        ({"caps": {"clock": "date_s", "nap": "none", "gnu_timeout": 1, "esxi": False}}, "probe.caps.gnu_timeout"),
        ({"binaries": [{"path": "/x"}]}, "probe.binaries holds"),
        ({"candidates": ["/opt/iperf3"]}, "probe was made for the binaries"),
        (
            {"caps": {"clock": "date_ns", "nap": "none", "gnu_timeout": False, "esxi": False, "bash": "bash; rm"}},
            "probe.caps.bash",
        ),
    ],
)
def test_a_given_probe_is_checked(change: dict[str, Any], needle: str) -> None:
    probe = run(FakeHost(), mode="probe")["probe"] | change
    host = FakeHost()
    with pytest.raises(r.IperfRunError, match=needle):
        run(host, mode="server", port=15400, probe=probe)
    assert host.scripts == []


def test_flow_server_refuses_port_in_use() -> None:
    host = FakeHost(listing=("ss", SS_OUTPUT))
    with pytest.raises(r.IperfRunError) as err:
        run(host, mode="server", port=15430, bind="127.0.0.1")
    assert "port 15430 is already in use on this host (tcp 127.0.0.1:15430, seen by ss; held by:" in err.value.message
    assert "no server this collection started holds it" in err.value.message
    assert len(host.scripts) == 2  # the probe; the start script stopped at its check
    with pytest.raises(r.IperfRunError, match="port 15400 is held by a server of this collection"):
        run(FakeHost(pidfiles=[(True, PIDFILE_15400)]), mode="server", port=15400)  # no owner: cannot tell
    # a stale pidfile (process gone) does not block
    assert run(FakeHost(pidfiles=[(False, PIDFILE_15400)]), mode="server", port=15400)["changed"] is True


def test_flow_server_exits_on_esxi() -> None:
    log = "iperf3: error - unable to start listener for connections: Operation not permitted\niperf3: exiting\n"
    host = FakeHost(
        env=OLD_BUSYBOX_ENV,
        binaries={"/usr/lib/vmware/vsan/bin/iperf3": IPERF3_312_BANNER},
        listing=("esxcli", ""),
        started=("status=exited", log),
    )
    with pytest.raises(r.IperfRunError) as err:
        run(host, mode="server", port=5201)
    assert "use the copied binary /usr/lib/vmware/vsan/bin/iperf3.copy" in err.value.message
    assert err.value.result["raw"] == log
    assert err.value.result["pid"] is None
    assert "usleep 10000;" in host.scripts[-1]  # naps with busybox usleep


def test_flow_server_without_banner_warns() -> None:
    host = FakeHost(binaries={"/usr/bin/iperf3": "iperf 3.1.3\n"}, started=("status=running", ""))
    result = run(host, mode="server")
    assert result["port"] == 5201
    assert result["status"] == "running"
    assert "iperf3 before 3.1.5 buffers its log" in result["warnings"][0]


def test_flow_client() -> None:
    doc = _fixture("iperf3-3.1.3-json-client-tcp-pscheduler.json")
    host = FakeHost(
        client=[
            ("started_at", "1471318776.512345678", ""),
            ("exit", "rc=0 timedout=0", ""),
            ("stdout", "", doc),
            ("stderr", "", ""),
        ]
    )
    result = run(host, mode="client", server="192.0.2.10", duration=10, labels={"run": 1})
    assert result["changed"] is False
    assert result["command"] == "/usr/bin/iperf3 -c 192.0.2.10 -p 5201 -J -t 10"
    assert result["result"]["received"]["bytes"] == 485969880
    assert result["result"]["labels"] == {"run": 1}
    assert result["timeout"] == 40.0
    assert "timeout -k 2 40 /usr/bin/iperf3 -c 192.0.2.10 -p 5201 -J -t 10" in host.scripts[-1]


def test_flow_client_check_mode_is_skipped() -> None:
    host = FakeHost(binaries={"/usr/bin/iperf": IPERF2_218_BANNER})
    result = run(host, check_mode=True, mode="client", server="192.0.2.10", tool="iperf2", reverse=True)
    assert result["skipped"] is True and result["changed"] is False
    assert "not run" in result["skip_reason"]
    assert result["command"] == "/usr/bin/iperf -c 192.0.2.10 -p 5001 -f b -e -R"
    assert len(host.scripts) == 1
    # the probe still catches what the tool version lacks
    esxi = FakeHost(binaries={"/opt/iperf/bin/iperf.copy": IPERF2_205_BANNER})
    with pytest.raises(r.IperfRunError, match=re.escape("reverse needs iperf2 2.1")):
        run(esxi, check_mode=True, mode="client", server="192.0.2.10", reverse=True)


def test_flow_client_refused_keeps_everything() -> None:
    host = FakeHost(
        binaries={"/usr/bin/iperf": IPERF2_218_BANNER},
        client=[
            ("started_at", "1700000000.1", ""),
            ("exit", "rc=1", ""),
            ("stdout", "", ""),
            ("stderr", "", "tcp connect failed: Connection refused\n"),
        ],
    )
    with pytest.raises(r.IperfRunError) as err:
        run(host, mode="client", server="127.0.0.1", port=15499, duration=1)
    assert err.value.result["error_kind"] == "refused"
    assert err.value.result["stderr"] == "tcp connect failed: Connection refused\n"
    assert err.value.result["command"] == "/usr/bin/iperf -c 127.0.0.1 -p 15499 -f b -e -t 1"


def test_flow_stop() -> None:
    host = FakeHost(pidfiles=[(True, PIDFILE_15400)])
    result = run(host, mode="stop", port=15400)
    assert result["changed"] is True
    assert result["stopped"] == [
        {
            "pid": 4242,
            "port": 15400,
            "tool": "iperf3",
            "log": "/tmp/esxilab-iperf-0/esxilab-iperf-15400-127.0.0.1.log",
            "status": "stopped",
            "raw": "server log\n",
        }
    ]
    assert "\n_stop1 4242 4243 /usr/bin/iperf3 15400 esxilab-iperf-15400-127.0.0.1.pid\n" in host.scripts[-1]  # +guard


def test_flow_stop_check_mode_and_nothing() -> None:
    host = FakeHost(pidfiles=[(True, PIDFILE_15400)])
    result = run(host, check_mode=True, mode="stop")
    assert result["changed"] is True and "would stop pid 4242 (port 15400)" in result["msg"]
    assert len(host.scripts) == 1
    nothing = run(FakeHost(), mode="stop", port=15401)
    assert nothing["changed"] is False and nothing["stopped"] == []
    stale = run(FakeHost(pidfiles=[(False, PIDFILE_15400)], stopped="gone"), mode="stop", pid=4242)
    assert stale["changed"] is False and stale["stopped"][0]["status"] == "gone"


def test_flow_stop_refuses_foreign_pid() -> None:
    with pytest.raises(r.IperfRunError, match="refusing to kill it"):
        run(FakeHost(pid_alive=True), mode="stop", pid=1)
    assert run(FakeHost(pid_alive=False), mode="stop", pid=99999)["changed"] is False


def test_no_ansible_import() -> None:
    for path in Path(r.__file__).parent.glob("*.py"):
        source = path.read_text()
        assert "import ansible." not in source and "from ansible." not in source, path.name


def test_state_paths_keep_servers_on_one_port_but_different_addresses_apart() -> None:
    assert r.state_paths("/tmp", 5201) == ("/tmp/esxilab-iperf-5201.pid", "/tmp/esxilab-iperf-5201.log")
    assert r.state_paths("/tmp/", 5201, "198.18.0.11")[0] == "/tmp/esxilab-iperf-5201-198.18.0.11.pid"
    assert r.state_paths("/tmp", 5201, "fe80::1%eth0")[0] == "/tmp/esxilab-iperf-5201-fe80__1_eth0.pid"


# ------------------------------------------------------------------------------------------
# Private state, pidfile reading, process identity (issue 8)
# ------------------------------------------------------------------------------------------


def test_read_pidfile_takes_only_what_the_module_writes() -> None:
    planted = (
        "pid=4242\nguard=4243\npid=1\nalive=1\npath=/etc/shadow\nlog=/root/secret\ntool=iperf3\n"
        "port=22\nbinary=/usr/bin/iperf3\n"
    )
    entry = r.read_pidfile("esxilab-iperf-5201-198.18.0.11.pid", planted)
    assert entry is not None
    # the first pid line counts; path, alive and log are never read from the content
    assert (entry["pid"], entry["guard"], entry["port"]) == (4242, 4243, 5201)
    assert entry["alive"] is False and "path" not in entry
    assert (entry["name"], entry["log_name"]) == (
        "esxilab-iperf-5201-198.18.0.11.pid",
        "esxilab-iperf-5201-198.18.0.11.log",
    )
    assert entry["bind"] == "198.18.0.11"  # from the name: the content has none
    for name in ("../../etc/passwd", "esxilab-iperf-5201.pid.bak", "x.pid", "esxilab-iperf-5201-a/b.pid"):
        assert r.read_pidfile(name, planted) is None


def test_probe_alive_needs_the_server_command_line() -> None:
    content = "pid=4242\nguard=4243\ntool=iperf3\nport=5201\nbind=\nbinary=/usr/bin/iperf3\n"
    probe_out = emit(
        TOKEN,
        ("env", "", GNU_ENV),
        ("state", "status=ok error= uid=0", ""),
        ("pidfile", "esxilab-iperf-5201.pid", content),
        ("process", "pid=4242 alive=1", "/usr/sbin/sshd -D\n"),  # the pid now belongs to another process
        ("pidfile", "esxilab-iperf-5202.pid", content.replace("5201", "5202")),
        ("process", "pid=4242 alive=1", "/usr/bin/iperf3 -s -p 5202 --forceflush\n"),
        ("done", "", ""),
    )
    probe = r.parse_probe(r.CommandOutput(0, probe_out, ""), TOKEN)
    assert [(p["port"], p["alive"]) for p in probe.pidfiles] == [(5201, False), (5202, True)]


@pytest.mark.parametrize(
    ("cmdline", "ours"),
    [
        ("/usr/bin/iperf3 -s -p 5201 --forceflush -B 198.18.0.11", True),
        ("/usr/bin/iperf3 -s -p 52011", False),
        ("/usr/bin/iperf3 -s -p 5202", False),
        ("/usr/sbin/sshd -D", False),
        ("sleep 1000", False),
        # the ESXi stand-in's wrapper execs the real binary: an iperf name with the same arguments
        ("/usr/bin/iperf3 -s -p 5201 --forceflush", True),
        ("", False),
    ],
)
def test_is_our_server(cmdline: str, ours: bool) -> None:
    assert r.is_our_server(cmdline, "/opt/esx/usr/lib/vmware/vsan/bin/iperf3.copy", 5201) is ours


_SOCKETS_HEAD = "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n"


@pytest.mark.parametrize(
    ("tables", "taken"),
    [
        ({"tcp": "", "tcp6": "", "udp": "", "udp6": ""}, False),
        # 5201 = 0x1451: listening (0A) over IPv4, an established session on it (01) that does not hold the port
        ({"tcp": "   0: 0100007F:1451 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0\n"}, True),
        ({"tcp": "   0: 0100007F:1451 0100007F:D431 01 00000000:00000000 00:00000000 00000000     0\n"}, False),
        ({"tcp": "   0: 0100007F:1452 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0\n"}, False),
        (
            {
                "tcp": "",
                "udp6": "  12: 00000000000000000000000000000000:1451 00000000000000000000000000000000:0000 07 0\n",
            },
            True,
        ),
        ({}, True),  # no /proc/net/tcp (ESXi): the listing decides
    ],
    ids=["free", "tcp-listen", "tcp-session", "other-port", "udp6-bound", "no-proc"],
)
@pytest.mark.parametrize(
    "shell", [s for s in (["/bin/sh", "-c"], ["busybox", "sh", "-c"]) if shutil.which(s[0])], ids=lambda s: s[0]
)
def test_port_taken_reads_the_kernels_tables(
    tmp_path: Path, shell: list[str], tables: dict[str, str], taken: bool
) -> None:
    """The server's start lists the sockets with their processes (``ss -p``) only when the port is taken, or when the
    host has no table to tell."""
    (tmp_path / "net").mkdir()
    for name, lines in tables.items():
        (tmp_path / "net" / name).write_text(_SOCKETS_HEAD + lines)
    test = r.port_taken(5201, proc=str(tmp_path))
    done = subprocess.run([*shell, f"if {test}; then echo taken; else echo free; fi"], capture_output=True, text=True,
                          timeout=30, check=True)  # fmt: skip
    assert done.stdout.strip() == ("taken" if taken else "free")


def test_a_reading_rides_in_the_first_script_of_a_start_or_a_stop_or_after_a_client() -> None:
    """Option ``reading``: iperf_facts' script, in a subshell before the first script only, or after the client's
    (its variables do not reach the script; each script's output without the reading's); the result is
    iperf_facts' own, from this shell's /proc and ``lo``."""
    scripts: list[str] = []

    def execute(script: str) -> r.CommandOutput:
        scripts.append(script)
        done = subprocess.run(["sh", "-c", script], capture_output=True, text=True, timeout=60, check=False)
        return r.CommandOutput(done.returncode, done.stdout, done.stderr)

    rider = Rider({"nic_counters_of": ["127.0.0.1"], "cpu_times": True})
    assert rider.result() == {"failed": True, "msg": "the reading was not made: no script ran on the host"}
    ridden = rider.first(execute)
    main = f'printf "%s\\n" "{M} done i=${{_i-unset}}"'
    out = ridden(main)
    assert out.stdout == f"{M} done i=unset\n"
    assert ridden("true").stdout == "" and "ESXILAB_IPERF_" in scripts[0] and scripts[1] == "true"
    facts = rider.result()["ansible_facts"]
    assert facts["iperf_cpu_times"]["kind"] == "linux" and facts["iperf_nic_counters"]["127.0.0.1"]["interface"] == "lo"
    after = Rider({"cpu_times": True})  # in the script handed to the client's shell (exec sh -c)
    assert (
        after.seen(execute(r.in_shell(r.HostCaps(shell="/bin/sh"), after.after(main)))).stdout == f"{M} done i=unset\n"
    )
    assert after.result()["ansible_facts"]["iperf_cpu_times"]["kind"] == "linux"
    broken = Rider({"cpu_times": True})
    broken.first(lambda script: r.CommandOutput(255, "", "connection lost"))("true")
    assert broken.result() == {
        "failed": True,
        "msg": "the reading did not complete on the host (exit status 255): connection lost",
    }


def _process_shells() -> list[Any]:
    shells = [pytest.param(["/bin/sh", "-c"], None, id="sh-procps")]
    busybox = shutil.which("busybox")
    if busybox:
        shells.append(pytest.param([busybox, "sh", "-c"], busybox, id="busybox"))
    return shells


@pytest.mark.parametrize("use_proc", [True, False], ids=["proc", "ps"])
@pytest.mark.parametrize(("shell", "busybox"), _process_shells())
def test_isours_and_cmdline_in_the_shell(tmp_path: Path, shell: list[str], busybox: str | None, use_proc: bool) -> None:
    # a stand-in "server": a script named iperf3 run with the server's arguments (its command
    # line is then "/bin/sh <path> -s -p 15999", as with a wrapper); a victim that is not ours
    fake = tmp_path / "odd\\npid=1 dir" / "iperf3"
    fake.parent.mkdir()
    fake.write_text("#!/bin/sh\nsleep 30\n")
    fake.chmod(0o755)
    env = dict(os.environ)
    if busybox:
        applets = tmp_path / "applets"
        applets.mkdir()
        for applet in ("ps", "awk", "tr", "sed", "kill"):
            (applets / applet).symlink_to(busybox)
        env["PATH"] = f"{applets}:{env['PATH']}"
    server = subprocess.Popen([str(fake), "-s", "-p", "15999"], start_new_session=True)
    victim = subprocess.Popen(["sleep", "30"])
    try:
        # both have exec'd (a fixed sleep was too short on a loaded machine: the command line was still Python's)
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and not (
            b"15999" in Path(f"/proc/{server.pid}/cmdline").read_bytes()
            and b"sleep" in Path(f"/proc/{victim.pid}/cmdline").read_bytes()
        ):
            time.sleep(0.02)
        functions = "\n".join([r.cmdline_function("/proc" if use_proc else "/nonexistent"), r.ISOURS])
        binary = shlex.quote(str(fake))
        checks = (
            f"_isours {server.pid} {binary} 15999 && echo server-ours; "
            f"_isours {server.pid} {binary} 15998 || echo other-port-not-ours; "
            f"_isours {victim.pid} {binary} 15999 || echo victim-not-ours; "
            f"_cmdline {victim.pid} | grep -q sleep && echo cmdline-read"
        )
        out = subprocess.run(
            [*shell, f"{functions}\n{checks}"], env=env, capture_output=True, text=True, timeout=20, check=False
        )
        assert out.stdout.split() == ["server-ours", "other-port-not-ours", "victim-not-ours", "cmdline-read"], (
            out.stdout + out.stderr
        )
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(server.pid, 9)  # the fake server's sleep too
        for proc in (server, victim):
            proc.kill()
            proc.wait(timeout=10)


def _state(shell: list[str], state_dir: str, *, create: bool) -> dict[str, str]:
    script = r.state_snippet(TOKEN, state_dir, create=create)
    out = subprocess.run([*shell, script], capture_output=True, text=True, timeout=20, check=False)
    sections = r.parse_sections(out.stdout, TOKEN)
    return r.parse_kv(sections[0].args)


RUN_SHELLS = [shell for shell in (["/bin/sh", "-c"], ["busybox", "sh", "-c"]) if shutil.which(shell[0])]


@pytest.mark.parametrize("shell", RUN_SHELLS)
def test_state_snippet_creates_checks_and_refuses(tmp_path: Path, shell: list[str]) -> None:
    uid = os.getuid()
    base = tmp_path / "state"
    base.mkdir()
    base.chmod(0o1777)
    private = base / f"esxilab-iperf-{uid}"
    assert _state(shell, str(base), create=False)["status"] == "absent"
    assert not private.exists()  # the probe creates nothing
    assert _state(shell, str(base), create=True)["status"] == "ok"
    assert private.is_dir() and (private.stat().st_mode & 0o777) == 0o700
    assert _state(shell, str(base), create=False)["status"] == "ok"
    private.chmod(0o755)
    assert _state(shell, str(base), create=True)["error"] == "mode"
    private.rmdir()
    victim = tmp_path / "victim"
    victim.mkdir(mode=0o700)
    private.symlink_to(victim)
    assert _state(shell, str(base), create=True)["error"] == "symlink"
    private.unlink()
    private.write_text("")
    assert _state(shell, str(base), create=True)["error"] == "notdir"
    private.unlink()
    assert _state(shell, str(tmp_path / "nope"), create=True)["error"] == "missing"
    base.chmod(0o777)  # writable by all, no sticky bit
    assert _state(shell, str(base), create=True)["error"] == "open_parent"
    assert not private.exists()
    base.chmod(0o1777)
    if uid == 0:  # a state_dir that belongs to another user: its owner could rename our directory
        os.chown(base, 65534, -1)
        assert _state(shell, str(base), create=True)["error"] == "foreign_parent"
        assert not private.exists()


def test_state_errors_name_state_dir_and_the_fix() -> None:
    def message(args: str) -> str:
        error = r.state_error(r.Section("state", args, ""), "/var/tmp")
        assert error is not None and error.result["error_kind"] == "state_dir"
        return error.message

    assert r.state_error(r.Section("state", "status=ok error= uid=0", ""), "/tmp") is None
    assert "state_dir='/var/tmp' does not exist on the host; create it (mkdir -p /var/tmp)" in message(
        "status=error error=missing uid=0"
    )
    owned = message("status=error error=owner uid=0 owner=65534")
    assert "/var/tmp/esxilab-iperf-0" in owned and "belongs to uid 65534" in owned and "Set state_dir" in owned
    assert "symbolic link" in message("status=error error=symlink uid=0")
    assert "sticky bit" in message("status=error error=open_parent uid=0 mode=drwxrwxrwx")


def test_flow_missing_state_dir_says_so_and_starts_nothing() -> None:
    host = FakeHost(state="status=error error=missing uid=0")
    with pytest.raises(r.IperfRunError) as err:
        run(host, mode="server", port=15400, state_dir="/srv/nope")
    assert err.value.message.startswith("state_dir='/srv/nope' does not exist on the host")
    assert "exited right after start" not in err.value.message
    assert len(host.scripts) == 2  # the probe; the start script stopped at the state check
    with pytest.raises(r.IperfRunError, match="does not exist"):
        run(host, mode="client", server="192.0.2.10", state_dir="/srv/nope")


# ------------------------------------------------------------------------------------------
# Bad inputs (issue 8)
# ------------------------------------------------------------------------------------------


def test_extra_args_as_one_string_is_refused_with_the_list_form() -> None:
    with pytest.raises(r.IperfRunError) as err:
        r.check_raw_args({"mode": "client", "extra_args": "-w 256K --title 'a b'"})
    assert "extra_args must be a list" in err.value.message
    assert "['-w', '256K', '--title', 'a b']" in err.value.message
    r.check_raw_args({"mode": "client", "extra_args": ["-w", "256K"]})  # a list is fine


@pytest.mark.parametrize(
    "item",
    ["-D", "--daemon", "-I", "--pidfile=/tmp/x", "--logfile", "--log", "-F", "--file", "-F/etc/shadow", "-o", "-sD"],
)
def test_extra_args_that_break_the_module_files_are_refused(item: str) -> None:
    with pytest.raises(r.IperfRunError) as err:
        r.validate_params(params(mode="server", extra_args=[item, "/tmp/x"]), SPEC)
    assert f"extra_args item {item!r} is refused" in err.value.message
    assert "remove the item" in err.value.message


@pytest.mark.parametrize(
    "item", ["-d", "-V", "--forceflush", "--get-server-output", "-1", "-f", "--format", "-O", "-w256K", "-t10"]
)
def test_extra_args_others_pass(item: str) -> None:
    assert r.validate_params(params(mode="server", extra_args=[item]), SPEC) == "server"


@pytest.mark.parametrize("binary", ["/usr/bin/iperf3\npid=1", "/usr/bin/iperf3\r", " "])
def test_binary_with_line_breaks_is_refused(binary: str) -> None:
    with pytest.raises(r.IperfRunError, match="line break or another control character"):
        r.validate_params(params(mode="server", binary=binary), SPEC)
    # a backslash is a legal path character: written as a printf argument it is harmless
    assert r.validate_params(params(mode="server", binary="/opt/a\\npid=1/iperf3"), SPEC) == "server"


@pytest.mark.parametrize(
    ("text", "server", "bind", "kind", "needle"),
    [
        # iperf3 3.12, observed: the same words for the server and the bind name
        ("unable to connect to server: Name or service not known", "127.0.0.1", "nosuch.invalid", "bind_resolve",
         "bind='nosuch.invalid' (the client's source address, -B) cannot be resolved"),
        ("unable to connect to server: Name or service not known", "nosuch.invalid", "127.0.0.1", "resolve",
         "the server name 'nosuch.invalid' cannot be resolved"),
        ("unable to connect to server: Name or service not known", "a.invalid", "b.invalid", "resolve",
         "the server name 'a.invalid' or bind='b.invalid'"),
        # iperf 2.1.8, observed: the name leads the line
        ("nosuch.invalid: Unknown host", "a.invalid", "nosuch.invalid", "bind_resolve", "bind='nosuch.invalid'"),
        ("a.invalid: Unknown host", "a.invalid", "b.invalid", "resolve", "the server name 'a.invalid' cannot"),
    ],
)  # fmt: skip
def test_unresolvable_bind_is_blamed_on_the_bind(text: str, server: str, bind: str, kind: str, needle: str) -> None:
    ctx = r.Context("client", "iperf3", server=server, port=5201, bind=bind)
    diagnosis = r.diagnose(text, ctx)
    assert diagnosis is not None and diagnosis.kind == kind
    assert needle in diagnosis.message


# ------------------------------------------------------------------------------------------
# ESXi as the sender (issue 8)
# ------------------------------------------------------------------------------------------


def _reverse_from_esxi_server() -> str:
    """A real ``-R`` client document (3.17.1) as an ESXi server's sending shows it to the client.

    Without ``--get-server-output`` (removed here) the client cannot know the server is ESXi;
    the server's TCP_INFO garbage (8634728: what ESXi's bundled iperf3 prints as Retr, e.g. in
    issue Aquantia/AQtion-esxi#3) is put where the client's JSON carries the server's retransmits.
    """
    doc = json.loads(_fixture("iperf3-3.17.1-json-client-tcp-R-O2-b10M-get-server-output-masquerade.json"))
    del doc["server_output_json"]
    doc["end"]["sum_sent"]["retransmits"] = 8634728
    for stream in doc["end"]["streams"]:
        stream["sender"]["retransmits"] = 8634728
    return json.dumps(doc)


def test_esxi_server_sending_retransmits_are_dropped_with_peer_is_esxi() -> None:
    sections = _client_sections(_reverse_from_esxi_server())
    plain, _diag = r.interpret_client(sections, CLIENT3, caps=GNU_CAPS, timeout=40.0, start_at=None, labels={})
    assert plain["result"]["sent"]["retransmits"] == 8634728  # what was reported before, with no warning
    info, diagnosis = r.interpret_client(
        sections, CLIENT3, caps=GNU_CAPS, timeout=40.0, start_at=None, labels={}, peer_is_esxi=True
    )
    assert diagnosis is None
    result = info["result"]
    assert result["reverse"] is True
    assert result["sent"]["retransmits"] is None
    assert all(s["sent"]["retransmits"] is None for s in result["per_stream"])
    assert result["sent"]["bytes"] == 18743296  # the byte counts stay
    assert any("the server is an ESXi host (peer_is_esxi)" in w for w in result["warnings"])


def test_peer_is_esxi_leaves_the_client_sending_alone() -> None:
    # forward: the client sends; its own retransmits are trusted
    sections = _client_sections(_fixture("iperf3-3.1.3-json-client-tcp-pscheduler.json"))
    info, _diag = r.interpret_client(
        sections, CLIENT3, caps=GNU_CAPS, timeout=40.0, start_at=None, labels={}, peer_is_esxi=True
    )
    assert info["result"]["sent"]["retransmits"] is not None
    assert not any("peer_is_esxi" in w for w in info["result"]["warnings"])


def test_paired_test_role_passes_peer_is_esxi() -> None:
    tasks = yaml.safe_load((REPO / "roles/paired_test/tasks/series.yml").read_text())
    run = next(t for t in tasks if "esxilab.iperf.paired_test_host" in t)
    # read once from the hosts' probes of the preflight (the same uname check as host_is_esxi: the probe's caps.esxi,
    # tests/unit/plugins/action/test_paired_test_host.py); paired_test_host gives a client peer_is_esxi when its server
    # is one of them
    assert run["esxilab.iperf.paired_test_host"]["esxi_hosts"] == "{{ __paired_test_preflight.esxi_hosts }}"
    preflight = yaml.safe_load((REPO / "roles/paired_test/tasks/preflight.yml").read_text())
    (task,) = [t for t in preflight if "esxilab.iperf.paired_test_preflight" in t]
    assert task["esxilab.iperf.paired_test_preflight"]["probe"] is True
    assert task["register"] == "__paired_test_preflight"


@pytest.mark.parametrize("by", ["targets", "port"])
@pytest.mark.parametrize("shell", RUN_SHELLS)
def test_stop_script_kills_only_a_process_that_is_still_our_server(tmp_path: Path, shell: list[str], by: str) -> None:
    """``by``: the pidfile entries a probe read (build_stop_script), or the port, the script reading the pidfile
    itself (build_stop_port_script; a port without a pidfile stops nothing)."""
    base = tmp_path / "state"
    base.mkdir()
    base.chmod(0o1777)
    private = base / f"esxilab-iperf-{os.getuid()}"
    private.mkdir(mode=0o700)
    fake = tmp_path / "bin" / "iperf3"
    fake.parent.mkdir()
    fake.write_text("#!/bin/sh\nsleep 30\n")
    fake.chmod(0o755)
    server = subprocess.Popen([str(fake), "-s", "-p", "15997"], start_new_session=True)
    victim = subprocess.Popen(["sleep", "30"])  # a recorded pid that now belongs to someone else
    try:
        time.sleep(0.3)
        targets = []
        for port, pid in ((15997, server.pid), (15996, victim.pid)):
            content = f"pid={pid}\nguard=\ntool=iperf3\nport={port}\nbind=\nbinary={fake}\n"
            (private / f"esxilab-iperf-{port}.pid").write_text(content)
            (private / f"esxilab-iperf-{port}.log").write_text(f"log of {port}\n")
            entry = r.read_pidfile(f"esxilab-iperf-{port}.pid", content)
            assert entry is not None
            targets.append(entry)
        if by == "targets":
            scripts = [r.build_stop_script(TOKEN, targets, caps=GNU_CAPS, state_dir=str(base))]
        else:
            names = [f"esxilab-iperf-{port}.pid" for port in (15997, 15996, 15995)]
            scripts = [r.build_stop_port_script(TOKEN, name, caps=GNU_CAPS, state_dir=str(base)) for name in names]
        stopped: dict[str, tuple[str, str]] = {}
        for script in scripts:
            out = subprocess.run([*shell, script], capture_output=True, text=True, timeout=30, check=False)
            stopped |= {r.parse_kv(s.args)["pid"]: (r.parse_kv(s.args)["status"], s.text)
                        for s in r.parse_sections(out.stdout, TOKEN) if s.name == "stopped"}  # fmt: skip
        assert stopped == {
            str(server.pid): ("stopped", "log of 15997\n"),
            str(victim.pid): ("reused", "log of 15996\n"),
        }, out.stdout + out.stderr
        assert server.wait(timeout=10) is not None
        assert victim.poll() is None  # left alone
        assert list(private.glob("*.pid")) == []  # both stale pidfiles removed
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(server.pid, 9)  # the fake server's sleep too
        for proc in (server, victim):
            proc.kill()
            proc.wait(timeout=10)


#: An old busybox ls without -n (owners shown by name), for _wrap
NO_NUMERIC_IDS = 'case "$1" in *n*) echo "ls: invalid option -- n" >&2; exit 1 ;; esac'


def _wrap(fake_bin: Path, name: str, before: str) -> None:
    """A ``name`` in ``fake_bin`` that runs ``before``, then the real one."""
    fake_bin.mkdir(exist_ok=True)
    (fake_bin / name).write_text(f'#!/bin/sh\n{before}\nexec {shutil.which(name)} "$@"\n')
    (fake_bin / name).chmod(0o755)


def _state_of_snippet(tmp_path: Path, fake_bin: Path) -> dict[str, str]:
    """The ``state`` line of the state snippet (creating the private directory) run with ``fake_bin`` first in PATH,
    in a sticky state directory of ``tmp_path``."""
    base = tmp_path / "state"
    base.mkdir(mode=0o1777, exist_ok=True)
    base.chmod(0o1777)
    env = dict(os.environ, PATH=f"{fake_bin}:{os.environ['PATH']}")
    script = r.state_snippet(TOKEN, str(base), create=True)
    out = subprocess.run(["/bin/sh", "-c", script], env=env, capture_output=True, text=True, timeout=20, check=False)
    sections = r.parse_sections(out.stdout, TOKEN)
    assert sections, out.stdout + out.stderr
    return r.parse_kv(sections[0].args)


def test_state_snippet_with_an_ls_that_has_no_numeric_ids(tmp_path: Path) -> None:
    # an old busybox ls without -n: owners are compared by name (id -un)
    fake_bin = tmp_path / "bin"
    _wrap(fake_bin, "ls", NO_NUMERIC_IDS)
    for _when in ("created", "found again"):
        assert _state_of_snippet(tmp_path, fake_bin)["status"] == "ok"
    (tmp_path / "state" / f"esxilab-iperf-{os.getuid()}").chmod(0o750)
    assert _state_of_snippet(tmp_path, fake_bin)["error"] == "mode"


def test_state_snippet_reads_the_user_name_only_for_an_owner_shown_by_name(tmp_path: Path) -> None:
    # ls -n shows the owner's uid: one id (-u) a script; an owner name (an ls without -n) needs the user's name too
    fake_bin = tmp_path / "bin"
    log = tmp_path / "id.log"
    _wrap(fake_bin, "id", f'echo "$*" >> {log}')
    for _when in ("created", "found again"):
        assert _state_of_snippet(tmp_path, fake_bin)["status"] == "ok"
    assert log.read_text().split("\n") == ["-u", "-u", ""]
    _wrap(fake_bin, "ls", NO_NUMERIC_IDS)
    log.write_text("")
    assert _state_of_snippet(tmp_path, fake_bin)["status"] == "ok"
    assert log.read_text().split("\n") == ["-u", "-un", ""]  # once, for the two owners named


@pytest.mark.parametrize(
    "shell", [pytest.param(sh, id=sh[0]) for sh in (["/bin/sh", "-c"], ["busybox", "sh", "-c"]) if shutil.which(sh[0])]
)
@pytest.mark.parametrize(
    "content",
    [
        "pid=4242\nguard=4243\ntool=iperf3\nport=5201\nbind=\nbinary=/usr/bin/iperf3\n",
        "pid=12x\npid=77\nguard=\nbinary=\nbinary=/second\n",  # each key's first line: no pid, an empty binary
        "binary=/opt/a b/iperf3\nguard=9\npid=0123",  # a path with a space; no newline at the end
        "pidx=5\n pid=6\nguard=8 \n",  # not the key, not at the start of the line, not a number: none
        "",
    ],
)
def test_the_shell_reads_a_pidfile_as_read_pidfile_does(tmp_path: Path, shell: list[str], content: str) -> None:
    pidfile = tmp_path / "esxilab-iperf-5201.pid"
    pidfile.write_text(content)
    script = f'{r.PIDFILE_FIELDS}\n_pidf {shlex.quote(str(pidfile))}; printf "%s\\n" "$_fp" "$_fg" "$_fb"'
    out = subprocess.run([*shell, script], capture_output=True, text=True, timeout=20, check=True)
    entry = r.read_pidfile(pidfile.name, content)
    assert entry is not None
    pid, guard, binary = out.stdout.split("\n")[:3]
    assert (int(pid) if pid else None, int(guard) if guard else None) == (entry["pid"], entry["guard"]), out.stderr
    assert binary == (entry["binary"] or "")


@pytest.mark.parametrize(
    "shell", [pytest.param(sh, id=sh[0]) for sh in (["/bin/sh", "-c"], ["busybox", "sh", "-c"]) if shutil.which(sh[0])]
)
def test_the_listener_check_reads_the_socket_tables_without_ipv6(tmp_path: Path, shell: list[str]) -> None:
    # _lsn: 0 listening, 1 not listening, 2 cannot tell - a host without IPv6 has no tcp6 table: still a "no"
    net = tmp_path / "net"
    net.mkdir()
    (net / "tcp").write_text(
        "  sl  local_address rem_address   st\n   0: 00000000:0016 00000000:0000 0A 00000000:00000000\n"
    )
    function = r.listener_function(5201, "tcp").replace("/proc/net", str(net))
    checks = {22: 0, 5201: 1}  # port 0x0016 listens, 5201 does not
    for port, expected in checks.items():
        script = f"{function.replace(':1451 ', f':{port:04X} ')}\n_lsn; echo $?"
        out = subprocess.run([*shell, script], capture_output=True, text=True, timeout=20, check=False)
        assert out.stdout.strip() == str(expected), (port, out.stdout, out.stderr)
    (net / "tcp6").write_text("  sl  local_address\n")
    out = subprocess.run(
        [*shell, f"{function}\n_lsn; echo $?"], capture_output=True, text=True, timeout=20, check=False
    )
    assert out.stdout.strip() == "1", out.stderr


def test_peer_is_esxi_with_bidir_drops_only_the_server_sending() -> None:
    # --bidir: sent/received are client-to-server, reverse_* server-to-client (the ESXi server sends)
    result: dict[str, Any] = {
        "protocol": "tcp",
        "reverse": False,
        "bidir": True,
        "sent": {"bytes": 1000, "retransmits": 3},
        "per_stream": [{"sent": {"bytes": 1000, "retransmits": 3}}],
        "intervals": [{"retransmits": 3}],
        "reverse_sent": {"bytes": 2000, "retransmits": 8634728},
        "reverse_per_stream": [{"sent": {"bytes": 2000, "retransmits": 8634728}}],
        "reverse_intervals": [{"retransmits": None}],
        "warnings": [],
    }
    r.distrust_esxi_server_sending(result)
    assert result["reverse_sent"]["retransmits"] is None
    assert result["reverse_per_stream"][0]["sent"]["retransmits"] is None
    assert result["sent"]["retransmits"] == 3 and result["intervals"][0]["retransmits"] == 3  # the client's own
    assert len(result["warnings"]) == 1


def test_esxi_server_sending_rtt_is_dropped_with_peer_is_esxi() -> None:
    # -R with --get-server-output: the server's own document carries the RTT of its sending
    sections = _client_sections(_fixture("iperf3-3.17.1-json-client-tcp-R-O2-b10M-get-server-output-masquerade.json"))
    plain, _diag = r.interpret_client(sections, CLIENT3, caps=GNU_CAPS, timeout=40.0, start_at=None, labels={})
    assert plain["result"]["server_output"]["rtt"] == {"min_us": 1711, "mean_us": 1814, "max_us": 2153}
    info, diagnosis = r.interpret_client(
        sections, CLIENT3, caps=GNU_CAPS, timeout=40.0, start_at=None, labels={}, peer_is_esxi=True
    )
    assert diagnosis is None
    server = info["result"]["server_output"]
    assert server["rtt"] is None and all(item["rtt"] is None for item in server["per_stream"])
    assert any(w.startswith("rtt of the server's sending set to null") for w in info["result"]["warnings"])


_SHELLS = [s for s in (["/bin/sh", "-c"], ["busybox", "sh", "-c"]) if shutil.which(s[0])]


@pytest.mark.parametrize(
    "text",
    [
        "iperf 3.18 (cJSON 1.7.15)\nLinux h1 6.1\n\nOptional features: a*b [x]\nl5\nl6\nl7",
        "",
        "one",
        "a%sb\\n\\x",
        "\n\nx",
    ],
    ids=["seven-lines", "empty", "one-line", "format-chars", "leading-blanks"],
)
@pytest.mark.parametrize("shell", _SHELLS, ids=lambda s: s[0])
def test_the_probes_head5_prints_what_head_printed(shell: list[str], text: str) -> None:
    """The probe's first five lines of a binary's ``-v`` output come from the shell itself (``HEAD5``), byte for byte
    as ``printf '%s\\n' "$_v" | head -n 5`` printed them (empty lines counted, an empty output one empty line)."""
    ours = subprocess.run([*shell, f'{r.HEAD5}\n_head5 "$1"', "sh", text], capture_output=True, timeout=10, check=True)
    head = subprocess.run(
        [*shell, "printf '%s\\n' \"$1\" | head -n 5", "sh", text], capture_output=True, timeout=10, check=True
    )
    assert ours.stdout == head.stdout


@pytest.mark.parametrize(
    ("log", "seen"),
    [
        ("-----------------------------------------------------------\nServer listening on 5201 (test #1)\n---", True),
        ("Server listening on 5201", True),  # the last line, its line feed not written yet
        ("Server listen", False),
        ("iperf3: error - unable to start listener for connections: Address already in use\n", False),
        (None, False),  # no log
    ],
    ids=["banner", "unterminated", "partial", "error", "missing"],
)
@pytest.mark.parametrize("shell", _SHELLS, ids=lambda s: s[0])
def test_the_server_start_sees_the_banner_without_grep(
    tmp_path: Path, shell: list[str], log: str | None, seen: bool
) -> None:
    """``BANNER_SEEN``: the server start's poll finds iperf's ``listening`` banner in its log by the shell's ``read``,
    also on a last line without its line feed; nothing on stderr when the log is missing."""
    lf = tmp_path / "server.log"
    if log is not None:
        lf.write_text(log)
    done = subprocess.run([*shell, f'_lf="$1"; _bn=0; {r.BANNER_SEEN}\n_lsb; echo "bn=$_bn"', "sh", str(lf)],
                          capture_output=True, text=True, timeout=10, check=True)  # fmt: skip
    assert done.stdout.strip() == f"bn={int(seen)}"
    assert done.stderr == ""
    assert "grep -q 'listening'" not in r.build_server_script(
        "T",
        ["iperf3", "-s"],
        caps=r.parse_caps(GNU_ENV),
        state_dir="/tmp",
        stem="s",
        server_timeout=60,
        meta={},
        port=5201,
    )


@pytest.mark.parametrize("check_mode", [False, True], ids=["run", "check"])
def test_a_probe_reads_the_link_speeds_in_its_own_session(check_mode: bool) -> None:
    """``mode=probe`` with ``reading.link_speed_of``: iperf_facts' link speed reading before the probe's script, in
    the same session (one script), also in check mode (both only read); the result is iperf_facts' own, from this
    machine's ``lo``."""
    scripts: list[str] = []

    def execute(script: str) -> r.CommandOutput:
        scripts.append(script)
        done = subprocess.run(["sh", "-c", script], capture_output=True, text=True, timeout=60, check=False)
        return r.CommandOutput(done.returncode, done.stdout, done.stderr)

    result = r.run(
        params(mode="probe", reading={"link_speed_of": ["127.0.0.1"]}),
        execute,
        spec=SPEC,
        check_mode=check_mode,
        token=TOKEN,
        now=time.time,
    )
    assert len(scripts) == 1 and "ESXILAB_IPERF_" in scripts[0]
    assert isinstance(result["probe"]["caps"], dict)
    speeds = result["reading"]["ansible_facts"]["iperf_link_speeds"]
    assert list(speeds) == ["127.0.0.1"] and speeds["127.0.0.1"]["interface"] == "lo"
