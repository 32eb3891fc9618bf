# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The local lab (``lab/esxilab_lab.py``) built for real: namespaces, bridge, sshd, iperf3, tc.

Needs root and ``ip netns``. Uses its own prefix (``eltest``), its own subnet inside the
RFC 2544 range (198.19.250.0/24, so a running ``esxilab`` demo lab is not disturbed; both
overridable with ESXILAB_LAB_PREFIX / ESXILAB_LAB_SUBNET, e.g. ``fbn`` / ``198.19.108``) and a
temporary state dir. The fixture's finalizer runs ``down --purge`` and checks that no
namespace, link or process of the prefix is left, even when a step fails.
"""

from __future__ import annotations

import dataclasses
import errno
import json
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.integration import labkit
from tests.integration.labkit import LAB_SCRIPT as SCRIPT
from tests.integration.labkit import ip_json as _ip_json
from tests.integration.labkit import skip_if

pytestmark = [pytest.mark.lab, pytest.mark.slow]

ANSIBLE = Path(sys.executable).parent / "ansible"
PREFIX = os.environ.get("ESXILAB_LAB_PREFIX", "eltest")
NET = os.environ.get("ESXILAB_LAB_SUBNET", "198.19.250")  # the first three octets of a /24
SUBNET = f"{NET}.0/24"
H1, H2, H3, H4 = (f"{NET}.{10 + i}" for i in range(1, 5))
RATE_BPS = 50_000_000


def _lab_unavailable() -> str | None:
    return labkit.lab_unavailable(("ip", "tc", "ssh", "ssh-keygen", "iperf3", "iperf"), ansible=False, probe_netns=True)


@dataclass(frozen=True)
class Lab(labkit.Lab):
    """A lab whose commands but ``down`` get the same options (``base_args``)."""

    timeout: float = 60
    base_args: tuple[str, ...] = ()

    def cli(self, command: str, *args: str, expect_rc: int = 0) -> dict[str, Any]:
        """Run the lab script with --json and return its document."""
        base = self.base_args if command != "down" else ()
        return super().cli(command, *base, *args, expect_rc=expect_rc)


def _lab_namespaces() -> list[str]:
    return sorted(str(n["name"]) for n in _ip_json("netns", "list") if str(n["name"]).startswith(f"{PREFIX}-"))


def _lab_links() -> list[str]:
    return sorted(str(n["ifname"]) for n in _ip_json("link", "show") if str(n["ifname"]).startswith(f"{PREFIX}-"))


def _processes_mentioning(needles: Sequence[str]) -> list[str]:
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
            state = (entry / "stat").read_text().rpartition(")")[2].split()[0]
        except OSError:
            continue
        if state != "Z" and any(n in cmdline for n in needles):
            found.append(f"{entry.name}: {cmdline.strip()}")
    return found


def _assert_nothing_left(state_dir: Path) -> None:
    assert _lab_namespaces() == []
    assert _lab_links() == []
    needles = [str(state_dir), f"{NET}."]
    deadline = time.monotonic() + 10
    while _processes_mentioning(needles) and time.monotonic() < deadline:
        time.sleep(0.1)  # ssh ControlPersist masters exit once their server is gone
    assert _processes_mentioning(needles) == []


@pytest.fixture
def lab(tmp_path: Path) -> Iterator[Lab]:
    skip_if(_lab_unavailable())
    the_lab = Lab(PREFIX, tmp_path / "state", base_args=("--hosts", "4", "--subnet", SUBNET))
    try:
        with the_lab.session():
            yield the_lab
    finally:
        _assert_nothing_left(the_lab.state_dir)


def _iperf3(lab: Lab, server: str, client: str, extra: str = "", *, bind: bool = True) -> dict[str, Any]:
    """iperf3 from client to server; bind=False connects unbound (even ports a few apart: see --flow-rate)."""
    started = lab.ssh(server, f"iperf3 -s -1 -D -B {server}")
    assert started.returncode == 0, started.stderr
    deadline = time.monotonic() + 5
    while True:  # -D returns before the listener is bound
        source = f"-B {client} " if bind else ""
        proc = lab.ssh(client, f"iperf3 -c {server} {source}-t 2 -J {extra}", timeout=30)
        doc = json.loads(proc.stdout)
        assert isinstance(doc, dict)
        if "error" not in doc or time.monotonic() > deadline:
            break
        time.sleep(0.2)
    assert proc.returncode == 0, proc.stdout[-500:] + proc.stderr
    return doc


def test_lab_lifecycle(lab: Lab, tmp_path: Path) -> None:
    # check mode on nothing: reports the whole build, creates nothing
    check = lab.cli("up", "--check")
    assert check["changed"] is True and check["check"] is True
    assert f"create bridge {PREFIX}-br0 mtu 1500 with {NET}.1/24" in check["actions"]
    assert f"create namespace {PREFIX}-h4" in check["actions"]
    assert _lab_namespaces() == [] and _lab_links() == []
    assert not (lab.state_dir / "inventory.yml").exists()

    # up, then up again: nothing to do
    up = lab.cli("up")
    assert up["changed"] is True
    assert [h["address"] for h in up["hosts"]] == [H1, H2, H3, H4]
    assert _lab_namespaces() == [f"{PREFIX}-h{i}" for i in range(1, 5)]
    assert _lab_links() == [f"{PREFIX}-br0"] + [f"{PREFIX}-v{i}" for i in range(1, 5)]
    again = lab.cli("up")
    assert again["changed"] is False and again["actions"] == []
    assert lab.cli("up", "--check")["changed"] is False

    # every host answers on ssh with the generated key and knows its own address
    for index, address in enumerate((H1, H2, H3, H4), start=1):
        proc = lab.ssh(address, "uname -n; ip -4 -o addr show dev eth0; ip -o link show lo")
        assert proc.returncode == 0, proc.stderr
        lines = proc.stdout.splitlines()
        assert lines[0] == f"{PREFIX}-h{index}"
        assert f"inet {address}/24" in lines[1]
        assert "UP" in lines[2]

    # iperf3 between h1 and h2 over the lab addresses (unshaped)
    doc = _iperf3(lab, H2, H1)
    assert doc["start"]["connecting_to"] == {"host": H2, "port": 5201}
    assert doc["end"]["sum_received"]["bytes"] > 0
    assert doc["end"]["sum_received"]["seconds"] == pytest.approx(2.0, abs=0.2)

    # shaping in place: 50mbit tbf on both ends of every veth. TCP goodput at MTU 1500 is the
    # rate times payload/frame = 1448/1514 (tbf charges L2 frames without preamble/FCS/gap).
    shaped = lab.cli("up", "--rate", "50mbit")
    assert f"shape {PREFIX}-h1:eth0: none -> tbf rate 50mbit burst 31250 limit 1048576" in shaped["actions"]
    assert f"shape {PREFIX}-v2: none -> tbf rate 50mbit burst 31250 limit 1048576" in shaped["actions"]
    assert lab.cli("up", "--rate", "50mbit")["changed"] is False
    expected = RATE_BPS * 1448 / 1514
    for extra in ("", "-R"):
        end = _iperf3(lab, H2, H1, extra)["end"]
        bps = end["sum_received"]["bits_per_second"]
        assert 0.92 * expected < bps < 1.01 * expected, f"{extra or 'forward'}: {bps / 1e6:.2f} Mbit/s"
        # the sender's own tbf queue (1 MiB) is deep enough that TCP never drops its own packets
        assert end["sum_sent"]["retransmits"] == 0

    # change one host's MTU in place: links change, sshd keeps running (same pid)
    pid_before = (lab.state_dir / "hosts" / "h2" / "sshd.pid").read_text()
    mtu = lab.cli("up", "--rate", "50mbit", "--host-mtu", "h2=9000")
    assert mtu["changed"] is True
    assert f"set mtu 1500 -> 9000 on {PREFIX}-v2" in mtu["actions"]
    assert f"set mtu 1500 -> 9000 on {PREFIX}-h2:eth0" in mtu["actions"]
    assert not any("sshd" in action for action in mtu["actions"])
    assert (lab.state_dir / "hosts" / "h2" / "sshd.pid").read_text() == pid_before
    assert _ip_json("-n", f"{PREFIX}-h2", "link", "show", "dev", "eth0")[0]["mtu"] == 9000
    assert _ip_json("link", "show", "dev", f"{PREFIX}-v2")[0]["mtu"] == 9000
    assert _ip_json("link", "show", "dev", f"{PREFIX}-br0")[0]["mtu"] == 1500
    assert lab.cli("up", "--rate", "50mbit", "--host-mtu", "h2=9000")["changed"] is False
    assert "lab_mtu: 9000" in (lab.state_dir / "inventory.yml").read_text()

    # Ansible through the generated inventory only (no ansible.cfg): raw and a Python module
    if ANSIBLE.exists():
        home = tmp_path / "ah"
        env = dict(os.environ, ANSIBLE_HOME=str(home), ANSIBLE_CONFIG=str(home / "none.cfg"), ANSIBLE_NOCOLOR="1")
        inventory = str(lab.state_dir / "inventory.yml")
        for module, args in (("ansible.builtin.raw", "uname -n"), ("ansible.builtin.ping", "")):
            argv = [str(ANSIBLE), "-i", inventory, "lab", "-m", module] + (["-a", args] if args else [])
            proc = subprocess.run(argv, capture_output=True, text=True, timeout=90, check=False, cwd=tmp_path, env=env)
            assert proc.returncode == 0, proc.stdout + proc.stderr
            for index in range(1, 5):
                if module.endswith("raw"):
                    assert f"h{index} | CHANGED | rc=0" in proc.stdout
                    assert f"{PREFIX}-h{index}" in proc.stdout
                else:
                    assert f"h{index} | SUCCESS" in proc.stdout
            assert proc.stdout.count('"ping": "pong"') == (4 if module.endswith("ping") else 0)

    # leave servers running: down must stop them
    assert lab.ssh(H3, f"iperf3 -s -D -B {H3}").returncode == 0
    assert lab.ssh(H4, f"iperf -s -D -B {H4} >/dev/null 2>&1").returncode == 0
    assert lab.ssh(H4, "iperf -v 2>&1").stdout.startswith("iperf version 2.")

    down = lab.cli("down")
    assert down["changed"] is True
    assert f"delete namespace {PREFIX}-h3" in down["actions"]
    assert f"delete bridge {PREFIX}-br0" in down["actions"]
    _assert_nothing_left(lab.state_dir)
    assert (lab.state_dir / "id_ed25519").exists()  # keys are kept for the next up (--purge removes them)
    assert not (lab.state_dir / "inventory.yml").exists()
    again_down = lab.cli("down")
    assert again_down["changed"] is False and again_down["actions"] == []

    # the safety net stays: a packet for the vanished h2 fails here instead of leaving the machine
    assert _safety_net_present()
    probe = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    probe.settimeout(2)
    with probe, pytest.raises(OSError) as refused:
        probe.connect((H2, 5201))
    assert refused.value.errno == errno.EHOSTUNREACH


@pytest.mark.parametrize("count", [8, pytest.param(64, marks=pytest.mark.full)])
def test_lab_of_many_hosts(lab: Lab, count: int) -> None:
    """A lab of ``count`` hosts (make test: 8; make test-full: 64, beyond the 32 the paired_test benchmark
    needs for 16 pairs on their own hosts): up, idempotent up, status, ssh to each, down."""
    lab = dataclasses.replace(lab, timeout=max(lab.timeout, 5.0 * count))  # a bound per command, not a timing check
    hosts = [f"{NET}.{10 + i}" for i in range(1, count + 1)]
    started = time.monotonic()
    up = lab.cli("up", "--hosts", str(count))
    built = time.monotonic() - started
    assert [h["address"] for h in up["hosts"]] == hosts
    assert _lab_namespaces() == sorted(f"{PREFIX}-h{i}" for i in range(1, count + 1))
    assert lab.cli("up", "--hosts", str(count))["changed"] is False
    status = lab.cli("status", "--hosts", str(count))
    assert status["healthy"] is True, status
    assert [h["name"] for h in status["hosts"]] == [f"h{i}" for i in range(1, count + 1)]
    assert all(h["ssh_banner"] and h["sshd_pid"] for h in status["hosts"])
    for index, address in enumerate(hosts, start=1):
        # SHLVL=2: the session's bash is a nested shell, so it read no ~/.bashrc (as ESXi's sh reads no rc file)
        proc = lab.ssh(address, 'uname -n; echo "$SHLVL"')
        assert proc.returncode == 0, proc.stderr
        assert proc.stdout.split() == [f"{PREFIX}-h{index}", "2"]
    down = lab.cli("down")
    assert f"delete namespace {PREFIX}-h{count}" in down["actions"]
    _assert_nothing_left(lab.state_dir)
    print(f"{count}-host lab built in {built:.1f} s")  # shown with -s; no timed assertion


def _safety_net_present() -> bool:
    return any(
        route.get("type") == "unreachable" and route.get("dst") == "198.18.0.0/15"
        for route in _ip_json("-4", "route", "show", "table", "main")
    )


def test_up_installs_the_safety_net_and_still_refuses_real_overlaps(tmp_path: Path) -> None:
    skip_if(_lab_unavailable())
    argv = [sys.executable, str(SCRIPT), "up", "--check", "--json", "--state-dir", str(tmp_path / "s")]
    argv += ["--name", "elnet", "--hosts", "2", "--subnet", "198.19.253.0/24"]
    subprocess.run(["ip", "route", "replace", "unreachable", "198.18.0.0/15"], check=True, timeout=10)
    accepted = subprocess.run(argv, capture_output=True, text=True, timeout=30, check=False)
    assert accepted.returncode == 0, accepted.stderr  # the lab's own safety net is no overlap
    assert not any("unreachable" in action for action in json.loads(accepted.stdout)["actions"])
    # a route the lab does not own over its subnet is still refused (a blackhole: sends nothing)
    subprocess.run(["ip", "route", "add", "blackhole", "198.19.253.128/25"], check=True, timeout=10)
    try:
        refused = subprocess.run(argv, capture_output=True, text=True, timeout=30, check=False)
    finally:
        subprocess.run(["ip", "route", "del", "blackhole", "198.19.253.128/25"], check=True, timeout=10)
    assert refused.returncode == 2
    assert "overlaps route blackhole 198.19.253.128/25;" in refused.stdout + refused.stderr
    assert _safety_net_present()


def test_down_on_nothing_changes_nothing(tmp_path: Path) -> None:
    skip_if(_lab_unavailable())
    state = tmp_path / "never-built"
    argv = [sys.executable, str(SCRIPT), "down", "--name", "elnone", "--state-dir", str(state), "--json"]
    proc = subprocess.run(argv, capture_output=True, text=True, timeout=30, check=False)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["changed"] is False
    assert not state.exists()


@pytest.mark.parametrize(
    ("options", "message"),
    [
        (["--subnet", "10.0.0.0/24"], "must lie inside 198.18.0.0/15"),
        (["--hosts", "65"], "--hosts 65: must be between 2 and 64"),
        (["--host-mtu", "h5=9000"], "the lab has only h1..h4"),
        (["--rate", "fast"], "use a tc rate such as 100mbit"),
        (["--name", "UPPER"], "use 1-11 lowercase letters/digits"),
        (["--flow-rate", "100mbit"], "--flow-rate 100mbit: needs --rate"),
        (["--rate", "1gbit", "--flow-rate", "1gbit"], "--flow-rate 1gbit: must be below --rate 1gbit"),
        (["--rate", "1gbit", "--flow-rate", "300mbit", "--delay", "1ms"], "cannot be combined with --delay"),
    ],
)
def test_up_refuses_bad_options(tmp_path: Path, options: list[str], message: str) -> None:
    skip_if(_lab_unavailable())
    argv = [sys.executable, str(SCRIPT), "up", "--check", "--state-dir", str(tmp_path / "s"), *options]
    proc = subprocess.run(argv, capture_output=True, text=True, timeout=30, check=False)
    assert proc.returncode == 2
    assert message in proc.stderr
    assert not (tmp_path / "s").exists()


FLOW_PREFIX = os.environ.get("ESXILAB_LAB_FLOW_PREFIX", "fu2")
FLOW_NET = os.environ.get("ESXILAB_LAB_FLOW_SUBNET", "198.19.111")  # the first three octets of a /24
FLOW_SUBNET = f"{FLOW_NET}.0/24"
FLOW_H1, FLOW_H2 = f"{FLOW_NET}.11", f"{FLOW_NET}.12"
LINK_MBPS, FLOW_MBPS = 200, 60


def test_flow_rate_limits_each_flow_and_streams_add_up_to_the_link(tmp_path: Path) -> None:
    """--flow-rate is real: 1 stream gets the flow rate, 2 twice that, 4 the link rate."""
    skip_if(_lab_unavailable())
    base = ("--hosts", "2", "--subnet", FLOW_SUBNET, "--rate", f"{LINK_MBPS}mbit", "--flow-rate", f"{FLOW_MBPS}mbit")
    the_lab = Lab(FLOW_PREFIX, tmp_path / "state", base_args=base)
    the_lab.cli("down", "--purge")
    try:
        assert the_lab.cli("up")["changed"] is True
        assert the_lab.cli("up")["changed"] is False  # the htb layout is read back as what was asked
        status = the_lab.cli("status")
        egress = {h["name"]: h["egress"] for h in status["hosts"]}
        assert egress["h1"] == f"htb rate {LINK_MBPS}mbit burst 125000 with 64 flow classes of {FLOW_MBPS}mbit", status
        inventory = (the_lab.state_dir / "inventory.yml").read_text()
        assert f"lab_flow_rate_bps: {FLOW_MBPS * 1_000_000}" in inventory
        got = {}
        for streams in (1, 2, 4):
            # unbound: a bound socket gets a random port, and two streams share a flow class 1 time in 64
            doc = _iperf3(the_lab, FLOW_H2, FLOW_H1, f"-P {streams}", bind=False)
            got[streams] = doc["end"]["sum_received"]["bits_per_second"] / 1e6
        print(f"flow limit {FLOW_MBPS} Mbit/s, link {LINK_MBPS} Mbit/s: Mbit/s by streams {got}")
        # one flow: the flow limit (htb meters the IP packet, iperf counts payload: ~ -5 %)
        assert 0.85 * FLOW_MBPS <= got[1] <= 1.02 * FLOW_MBPS, got
        assert 0.85 * 2 * FLOW_MBPS <= got[2] <= 1.02 * 2 * FLOW_MBPS, got
        # four flows would be 240 Mbit/s: the link caps them
        assert 0.85 * LINK_MBPS <= got[4] <= 1.02 * LINK_MBPS, got
        # back to the plain link: tbf again, one stream gets the link
        plain = Lab(FLOW_PREFIX, the_lab.state_dir, base_args=base[:-2])
        assert plain.cli("up")["changed"] is True
        one = _iperf3(plain, FLOW_H2, FLOW_H1)["end"]["sum_received"]["bits_per_second"] / 1e6
        assert one >= 0.85 * LINK_MBPS, one
    finally:
        the_lab.cli("down", "--purge")
