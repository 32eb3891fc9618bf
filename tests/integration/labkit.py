# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""What the integration tests share: the local lab, ansible-playbook, and govmomi's simulator.

* the lab (``lab/esxilab_lab.py``): :func:`lab_unavailable` (the skip reason; :func:`skip_if` skips for it),
  :class:`Lab` (``up``/``down``/``status`` with ``--json``, ssh into a lab host) and :meth:`Lab.session`, which
  purges leftovers of a crashed earlier session, brings the lab up and always takes it down again, asserting
  that no network namespace and no link of its prefix is left; :func:`ip_json` and :func:`left_over` read
  ``ip -j`` for the tests;
* ansible-playbook: :data:`ANSIBLE_PLAYBOOK`, :func:`ansible_env` (the checkout as the collection path),
  :func:`repo_ansible_env` (the repository's ``ansible.cfg`` decides, ``cwd=REPO``), :func:`isolated_ansible_env`
  (no ``ansible.cfg`` at all, the default callback printing JSON), :func:`run_playbook` (bounded in time) and
  :func:`printed` (the values the default callback printed after ``=>``);
* govmomi's simulator (``tests/vcsim``, built offline): the fixtures ``vcsim_binary`` and ``vcsim``, the context
  manager :func:`simulator`, and :func:`vcsim_service` / :func:`vcsim_vms` to read it with pyVmomi.

Each test file keeps its own lab prefix, subnet (and the environment variables overriding them), timeouts and
assertions; only the scaffolding lives here.
"""

from __future__ import annotations

import contextlib
import json
import os
import queue
import re
import shutil
import ssl
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from pyVim import connect
from pyVmomi import vim

from tests.collection_path import REPO, ensure_collection_path

LAB_SCRIPT = REPO / "lab" / "esxilab_lab.py"
ANSIBLE_PLAYBOOK = Path(sys.executable).parent / "ansible-playbook"
#: The play most lab tests run: the role ``esxilab.iperf.paired_test`` on the lab's inventory.
PAIRED_TEST_PLAYBOOK = REPO / "tests" / "integration" / "targets" / "paired_test" / "paired_test.yml"
LAB_CLI_TIMEOUT = 90

# --------------------------------------------------------------------------------------------
# The lab
# --------------------------------------------------------------------------------------------


def lab_unavailable(
    tools: Sequence[str],
    *,
    needs: str = "network namespaces, bridge, tc",
    sshd: bool = True,
    ansible: bool = True,
    probe_netns: bool = False,
) -> str | None:
    """Why the lab cannot run here (the skip reason), or None.

    ``tools`` must be on PATH; ``sshd``: openssh-server is installed; ``ansible``: ansible-playbook is next to
    this Python; ``probe_netns``: ``ip netns list`` works (a container may refuse it even to root).
    """
    if os.geteuid() != 0:
        return f"the lab needs root ({needs})"
    for tool in tools:
        if shutil.which(tool) is None:
            return f"{tool} is not installed"
    if sshd and not Path("/usr/sbin/sshd").exists():
        return "openssh-server (/usr/sbin/sshd) is not installed"
    if ansible and not ANSIBLE_PLAYBOOK.exists():
        return f"{ANSIBLE_PLAYBOOK} does not exist (run the tests with the venv's python)"
    if probe_netns:
        try:
            probe = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True, timeout=10, check=False)
        except (OSError, subprocess.TimeoutExpired) as exc:
            return f"`ip netns` is unavailable: {exc}"
        if probe.returncode != 0:
            return f"`ip netns` is unavailable: {probe.stderr.strip()}"
    return None


def skip_if(reason: str | None) -> None:
    """Skip the test (or the fixture's tests) for ``reason``, if there is one (:func:`lab_unavailable`)."""
    if reason:
        pytest.skip(reason)


def ip_json(*args: str) -> list[dict[str, Any]]:
    """``ip -j ARGS`` as a list (``ip`` prints nothing for an empty list)."""
    out = subprocess.run(["ip", "-j", *args], capture_output=True, text=True, timeout=10, check=True).stdout
    return list(json.loads(out)) if out.strip() else []


def left_over(prefix: str) -> list[str]:
    """The network namespaces and links named ``PREFIX-*`` (a lab's), sorted: [] once it is down."""
    names = [str(n["name"]) for n in ip_json("netns", "list")]
    names += [str(n["ifname"]) for n in ip_json("link", "show")]
    return sorted(name for name in names if name.startswith(f"{prefix}-"))


def netns_pids(netns: str) -> list[int]:
    """The pids in a network namespace (``ip netns pids``; [] when it is gone)."""
    proc = subprocess.run(["ip", "netns", "pids", netns], capture_output=True, text=True, timeout=10, check=False)
    return [int(p) for p in proc.stdout.split()]


def live_cmdline(pid: int) -> str | None:
    """The command line of a live (not zombie) process, or None."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()[0]
        cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace").strip()
    except (OSError, IndexError):
        return None
    return None if state == "Z" else cmdline


def listening(netns: str, port: int, protocol: str = "tcp") -> bool:
    """Whether a socket listens on ``port`` (``tcp`` or ``udp``) in the network namespace ``netns`` (``ss -l``)."""
    flag = "-ltn" if protocol == "tcp" else "-lun"
    argv = ["ip", "netns", "exec", netns, "ss", flag]
    out = subprocess.run(argv, capture_output=True, text=True, timeout=10, check=False).stdout
    return re.search(rf"[:.]{port}\s", out) is not None


def iperf_processes(prefix: str, hosts: Sequence[str]) -> list[str]:
    """Every live iperf process in the namespaces ``PREFIX-HOST`` of a lab, as ``HOST pid PID: CMDLINE``."""
    found = []
    for host in hosts:
        for pid in netns_pids(f"{prefix}-{host}"):
            cmdline = live_cmdline(pid)
            if cmdline and "iperf" in cmdline.split(" ", 1)[0]:
                found.append(f"{host} pid {pid}: {cmdline}")
    return found


def wait_no_iperf(prefix: str, hosts: Sequence[str], timeout: float = 10) -> list[str]:
    """:func:`iperf_processes` once none is left or ``timeout`` s have passed (what is left then)."""
    deadline = time.monotonic() + timeout
    left = iperf_processes(prefix, hosts)
    while left and time.monotonic() < deadline:
        time.sleep(0.1)
        left = iperf_processes(prefix, hosts)
    return left


def ssh_argv(state_dir: Path, address: str, command: str) -> list[str]:
    """ssh to a lab host as root with the lab's key and known_hosts only (no user config, no agent)."""
    return [
        "ssh", "-F", "/dev/null", "-i", str(state_dir / "id_ed25519"),
        "-o", f"UserKnownHostsFile={state_dir / 'known_hosts'}", "-o", "StrictHostKeyChecking=yes",
        "-o", "IdentitiesOnly=yes", "-o", "BatchMode=yes", "-o", "ConnectTimeout=5",
        f"root@{address}", command,
    ]  # fmt: skip


@dataclass(frozen=True)
class Lab:
    """One lab: its ``--name`` prefix and ``--state-dir`` (the inventory and the ssh key are written there)."""

    prefix: str
    state_dir: Path
    timeout: float = LAB_CLI_TIMEOUT

    def cli(self, command: str, *args: str, expect_rc: int = 0) -> dict[str, Any]:
        """``esxilab_lab.py COMMAND --json ARGS``; asserts the exit status and returns the JSON document."""
        argv = [sys.executable, str(LAB_SCRIPT), command, "--name", self.prefix, "--state-dir", str(self.state_dir)]
        proc = subprocess.run(
            [*argv, "--json", *args], capture_output=True, text=True, timeout=self.timeout, check=False
        )
        assert proc.returncode == expect_rc, f"{argv + list(args)}: rc={proc.returncode}\n{proc.stdout}\n{proc.stderr}"
        doc = json.loads(proc.stdout)
        assert isinstance(doc, dict)
        return doc

    @property
    def inventory(self) -> Path:
        return self.state_dir / "inventory.yml"

    def ssh(self, address: str, command: str, timeout: float = 30) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            ssh_argv(self.state_dir, address, command), capture_output=True, text=True, timeout=timeout, check=False
        )

    @contextlib.contextmanager
    def session(self, *up_args: str) -> Iterator[Lab]:
        """Purge leftovers, ``up UP_ARGS`` (none: the test brings it up), yield; always ``down --purge``.

        Afterwards no network namespace and no link of the prefix may be left.
        """
        self.cli("down", "--purge")  # leftovers of a crashed earlier session with the same prefix
        try:
            if up_args:
                self.cli("up", *up_args)
            yield self
        finally:
            self.cli("down", "--purge")
            assert left_over(self.prefix) == []


# --------------------------------------------------------------------------------------------
# ansible-playbook
# --------------------------------------------------------------------------------------------


def ansible_env(**extra: str) -> dict[str, str]:
    """This environment with the checkout as the collection path, no colour, no retry files, and ``extra``."""
    return {
        **os.environ,
        "ANSIBLE_COLLECTIONS_PATH": str(ensure_collection_path()),
        "ANSIBLE_NOCOLOR": "1",
        "ANSIBLE_RETRY_FILES_ENABLED": "false",
        **extra,
    }


def repo_ansible_env(**extra: str) -> dict[str, str]:
    """:func:`ansible_env` for a run in the repository (``cwd=REPO``) whose ``ansible.cfg`` decides the callbacks:
    no ``ANSIBLE_CONFIG``, ``ANSIBLE_STDOUT_CALLBACK`` or ``ANSIBLE_CALLBACKS_ENABLED`` from this environment
    (``extra`` may set them again)."""
    drop = ("ANSIBLE_CONFIG", "ANSIBLE_STDOUT_CALLBACK", "ANSIBLE_CALLBACKS_ENABLED")
    return {**{k: v for k, v in ansible_env().items() if k not in drop}, **extra}


def isolated_ansible_env(home: Path, **extra: str) -> dict[str, str]:
    """:func:`ansible_env` ignoring any ``ansible.cfg`` around, Ansible's files in ``home``, and the default
    callback printing results as JSON (read them with :func:`printed`)."""
    return ansible_env(
        ANSIBLE_HOME=str(home),
        ANSIBLE_LOCAL_TEMP=str(home / "tmp"),
        ANSIBLE_CONFIG=str(home / "none.cfg"),
        ANSIBLE_STDOUT_CALLBACK="ansible.builtin.default",
        ANSIBLE_CALLBACK_RESULT_FORMAT="json",
        **extra,
    )


def run_playbook(
    *args: str | Path, timeout: float, env: Mapping[str, str] | None = None, cwd: Path | None = None
) -> subprocess.CompletedProcess[str]:
    """``ansible-playbook ARGS`` (text output captured, any exit status), bounded by ``timeout`` seconds."""
    return subprocess.run(
        [str(ANSIBLE_PLAYBOOK), *(str(a) for a in args)],
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
        env=dict(ansible_env() if env is None else env),
        cwd=cwd,
    )


def printed(output: str) -> list[Any]:
    """Every JSON value the default callback printed after ``=>`` (debug tasks, ad-hoc results), in order."""
    decoder = json.JSONDecoder()
    found: list[Any] = []
    index = output.find("=> {")
    while index >= 0:
        value, end = decoder.raw_decode(output, index + 3)
        found.append(value)
        index = output.find("=> {", end)
    return found


_RESULT_LINE = re.compile(
    r"^(ok|changed|fatal|failed|skipping|included|unreachable|\.\.\.ignoring)\b|^(PLAY|TASK|RUNNING) "
)


def printed_text(output: str, task: str = "") -> list[list[str]]:
    """The text the actions printed themselves (``Display``; report tables, verdicts) during the tasks whose banner
    holds ``task``, one list of lines per task: what comes between a task's banner and its first result line."""
    blocks: list[list[str]] = []
    lines = output.splitlines()
    for index, line in enumerate(lines):
        if not line.startswith("TASK [") or task not in line:
            continue
        block: list[str] = []
        for text in lines[index + 1 :]:
            if _RESULT_LINE.match(text):
                break
            block.append(text)
        while block and not block[0].strip():
            block.pop(0)
        while block and not block[-1].strip():
            block.pop()
        if block:
            blocks.append(block)
    return blocks


def paired_test_vars(tmp: Path, tests: Sequence[Mapping[str, Any]], **settings: Any) -> Path:
    """Write the variables of :data:`PAIRED_TEST_PLAYBOOK` for the lab's inventory to ``tmp/vars.json``: ``tests``,
    the address in ``lab_address``, the hosts' state in ``tmp/remote`` and the report ``report`` in ``tmp/reports``
    without plots, HTML page, history or the hosts' CPU reads (plays do only what they check: a test of those sets
    ``report_plots`` / ``report_html`` / ``report_history`` / ``paired_test_host_cpu``), then ``settings``
    (``paired_test_*``/``report_*`` variables) over them. Returns the file's path."""
    (tmp / "remote").mkdir(exist_ok=True)
    variables = {
        "paired_test_tests": list(tests),
        "paired_test_address_var": "lab_address",
        "paired_test_state_dir": str(tmp / "remote"),
        "paired_test_report_dir": str(tmp / "reports"),
        "paired_test_report_name": "report",
        "report_plots": False,
        "report_html": False,
        "report_history": "none",
        "paired_test_host_cpu": False,
        **settings,
    }
    path = tmp / "vars.json"
    path.write_text(json.dumps(variables))
    return path


# --------------------------------------------------------------------------------------------
# govmomi's simulator (tests/vcsim)
# --------------------------------------------------------------------------------------------

GOVMOMI = Path("/usr/share/gocode/src/github.com/vmware/govmomi/simulator")
GO = shutil.which("go")
VCSIM_BUILD_TIMEOUT = 480  # a cold build compiles the standard library with CGO off: ~100 s on 2 cores
VCSIM_START_TIMEOUT = 30
VCSIM_USERNAME = "root"
VCSIM_PASSWORD = "vcsim-test-password"


def vcsim_unavailable() -> str | None:
    """Why the simulator cannot be built here (the skip reason), or None."""
    if GO is None:
        return "go is not installed (apt-get install -y golang-go)"
    if not GOVMOMI.is_dir():
        return f"{GOVMOMI} is missing (apt-get install -y golang-github-vmware-govmomi-dev)"
    if not ANSIBLE_PLAYBOOK.exists():
        return f"ansible-playbook is not next to {sys.executable}"
    return None


def build_vcsim(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """``tests/vcsim`` built offline against Debian's govmomi sources (GOPATH mode, CGO off, -trimpath)."""
    reason = vcsim_unavailable()
    if reason:
        pytest.skip(reason)
    assert GO is not None
    output = tmp_path_factory.mktemp("vcsim") / "vcsim-esx"
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(tmp_path_factory.getbasetemp()),
        "GO111MODULE": "off",  # GOPATH mode against Debian's packaged sources: no module download
        "GOPATH": "/usr/share/gocode",
        "GOFLAGS": "",
        "GOPROXY": "off",
        "CGO_ENABLED": "0",
        # Kept between runs so only the first build compiles the standard library.
        "GOCACHE": str(Path(tempfile.gettempdir()) / f"esxilab-vcsim-gocache-{os.getuid()}"),
    }
    build = subprocess.run(
        [GO, "build", "-trimpath", "-o", str(output), "./tests/vcsim"],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=VCSIM_BUILD_TIMEOUT,
        check=False,
    )
    if build.returncode != 0:
        pytest.fail(f"go build of tests/vcsim failed ({build.returncode}):\n{build.stderr}")
    return output


@contextlib.contextmanager
def simulator(vcsim_binary: Path, *extra: str) -> Iterator[dict[str, Any]]:
    """Start the simulator on a free loopback port; yield the connection variables; always stop it."""
    log = (vcsim_binary.parent / f"vcsim{'-'.join(extra)}.log").open("w")  # stderr: read when something fails
    process = subprocess.Popen(
        [
            str(vcsim_binary),
            *("-listen", "127.0.0.1:0", "-username", VCSIM_USERNAME, "-password", VCSIM_PASSWORD),
            *("-lifetime", "10m"),
            *extra,
        ],
        stdin=subprocess.PIPE,  # closing it stops the simulator
        stdout=subprocess.PIPE,
        stderr=log,
        text=True,
    )
    lines: queue.Queue[str] = queue.Queue()

    def read_stdout() -> None:
        for line in process.stdout or []:
            lines.put(line)

    threading.Thread(target=read_stdout, daemon=True).start()
    try:
        try:
            first = lines.get(timeout=VCSIM_START_TIMEOUT)
        except queue.Empty:
            pytest.fail(f"vcsim printed no URL within {VCSIM_START_TIMEOUT} s")
        assert first.startswith("VCSIM_URL=https://127.0.0.1:"), first
        port = int(first.strip().rsplit(":", 1)[1].split("/", 1)[0])
        yield {"vcsim_port": port, "vcsim_user": VCSIM_USERNAME, "vcsim_password": VCSIM_PASSWORD}
    finally:
        if process.stdin is not None:
            process.stdin.close()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=10)
        log.close()


@contextlib.contextmanager
def vcsim_service(port: int) -> Iterator[Any]:
    """pyVmomi's service instance of the simulator on ``port``, logged in as the tests' user (logged out after)."""
    smart_connect: Any = connect.SmartConnect  # pyVim's connect functions are untyped
    disconnect: Any = connect.Disconnect
    context = ssl._create_unverified_context()  # the simulator's self-signed certificate
    si = smart_connect(host="127.0.0.1", port=port, user=VCSIM_USERNAME, pwd=VCSIM_PASSWORD, sslContext=context)
    try:
        yield si
    finally:
        disconnect(si)


def vcsim_vms(si: Any) -> list[Any]:
    """Every VM the simulator holds (pyVmomi objects)."""
    content = si.RetrieveContent()
    return list(content.viewManager.CreateContainerView(content.rootFolder, [vim.VirtualMachine], True).view)
