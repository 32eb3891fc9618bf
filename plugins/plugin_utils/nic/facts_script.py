# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The one plain ``sh`` command of ``iperf_facts`` and the split of its output (see the action's docstring for what
it reads), and the NIC and CPU readings of it as facts.

Plain data in, plain data out; no Ansible import, no I/O. Private module: not part of the collection's public API.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from ansible_collections.esxilab.iperf.plugins.plugin_utils.cpu.reading import CPU_SCRIPT, cpu_times_fact
from ansible_collections.esxilab.iperf.plugins.plugin_utils.esxi.paths import ESXI_IPERF_PATHS
from ansible_collections.esxilab.iperf.plugins.plugin_utils.host.framing import split_sections, undo_pty
from ansible_collections.esxilab.iperf.plugins.plugin_utils.host.pathwalk import PATH_WALK
from ansible_collections.esxilab.iperf.plugins.plugin_utils.nic.counters import NIC_SCRIPT, esxi_reading, linux_reading
from ansible_collections.esxilab.iperf.plugins.plugin_utils.nic.speed import esxcli_speed, sysfs_speed

__all__ = [
    "PATH_NAMES",
    "FileRead",
    "ProbeOutput",
    "ToolProbe",
    "build_script",
    "has_glob",
    "parse_probe_output",
    "reading_facts",
    "sh_glob_word",
]

# Names looked for in every $PATH directory.
PATH_NAMES = ("iperf", "iperf2", "iperf3", "iperf3.copy", "iperf.copy")
_SAFE_BRACKET = re.compile(r"\[!?[A-Za-z0-9._:,+@%=^-]+\]")

# --------------------------------------------------------------------------------------
# Shell script
# --------------------------------------------------------------------------------------


def has_glob(pattern: str) -> bool:
    """Whether the host's shell would expand ``pattern`` (``*``, ``?`` or a ``[...]`` class)."""
    return "*" in pattern or "?" in pattern or bool(_SAFE_BRACKET.search(pattern))


def sh_glob_word(pattern: str) -> str:
    """Quote ``pattern`` for ``sh`` leaving only ``*``, ``?`` and simple ``[...]`` active.

    Everything else is single-quoted, so ``$``, backquotes, ``;``, spaces and quotes in a
    path are literal. A leading ``~/`` becomes ``"$HOME"/``.
    """
    out: list[str] = []
    literal: list[str] = []

    def flush() -> None:
        if literal:
            out.append(shlex.quote("".join(literal)))
            literal.clear()

    rest = pattern
    if rest == "~" or rest.startswith("~/"):
        out.append('"$HOME"')
        rest = rest[1:]
    index = 0
    while index < len(rest):
        char = rest[index]
        if char in "*?":
            flush()
            out.append(char)
            index += 1
            continue
        if char == "[":
            match = _SAFE_BRACKET.match(rest, index)
            if match:
                flush()
                out.append(match.group(0))
                index = match.end()
                continue
        literal.append(char)
        index += 1
    flush()
    return "".join(out) or "''"


_SCRIPT_HEAD = r"""M=%(marker)s
printf '%%s START\n' "$M"
seen='
'
probe() {
  case $1 in */*) _d=${1%%/*}; _n=${1##*/} ;; *) _d=.; _n=$1 ;; esac
  [ -n "$_d" ] || _d=/
  _c=$(cd -P "$_d" 2>/dev/null && pwd -P) || _c=$_d
  case $_c in */) _c=$_c$_n ;; *) _c=$_c/$_n ;; esac
  case $seen in *"
$_c
"*) return 0 ;; esac
  seen=$seen$_c'
'
  if [ -d "$1" ]; then
    [ "$2" = 1 ] && printf '\n%%s TOOL %%s\n\n%%s TOOLEND directory\n' "$M" "$_c" "$M"
  elif [ ! -e "$1" ]; then
    [ "$2" = 1 ] && printf '\n%%s TOOL %%s\n\n%%s TOOLEND missing\n' "$M" "$_c" "$M"
  elif [ ! -x "$1" ]; then
    printf '\n%%s TOOL %%s\n\n%%s TOOLEND noexec\n' "$M" "$_c" "$M"
  else
    printf '\n%%s TOOL %%s\n' "$M" "$_c"
    "$1" -v </dev/null 2>&1
    printf '\n%%s TOOLEND %%s\n' "$M" "$?"
  fi
  return 0
}
readf() {
  if [ -d "$1" ]; then
    printf '\n%%s FILE %%s\n\n%%s FILEEND directory\n' "$M" "$1" "$M"
  elif [ ! -e "$1" ]; then
    printf '\n%%s FILE %%s\n\n%%s FILEEND missing\n' "$M" "$1" "$M"
  elif [ ! -r "$1" ]; then
    printf '\n%%s FILE %%s\n\n%%s FILEEND unreadable\n' "$M" "$1" "$M"
  else
    printf '\n%%s FILE %%s\n' "$M" "$1"
    cat <"$1" 2>&1
    printf '\n%%s FILEEND %%s\n' "$M" "$?"
  fi
  return 0
}
_ifof() {
  _i=$(ip -o addr show to "$1" 2>/dev/null) || _i=
  set -f; set -- $_i; set +f; _i=${2%%@*}
}
_ifs='
'
_ifset() {
  case $_ifs in *"
$1 "*) _i=${_ifs#*"
$1 "}; _i=${_i%%%%"
"*}; return 0 ;; esac
  _ifof "$1"
  _ifs="$_ifs$1 $_i
"
}
lspeed() {
  printf '\n%%s SPEED %%s\n' "$M" "$1"
  _ifset "$1"
  printf '%%s\n' "$_i"
  if [ -n "$_i" ]; then
    if { IFS= read -r _sp <"/sys/class/net/$_i/speed"; } 2>/dev/null; then printf '%%s\n' "$_sp"
    else cat "/sys/class/net/$_i/speed" 2>&1; fi
  fi
  printf '\n%%s SPEEDEND\n' "$M"
  return 0
}
_ex() {
  _k=$1; shift
  printf '\n%%s ESXCLI %%s\n' "$M" "$_k"
  ("$@") 2>&1
  printf '\n%%s ESXCLIEND %%s\n' "$M" "$?"
}
lspeed_esxi() {
  if esxcli network nic list >/dev/null 2>&1; then
    _ex nic esxcli network nic list
    _ex ipv4 esxcli network ip interface ipv4 list
    _ex interfaces esxcli network ip interface list
    printf '\n%%s ESXCLI vswitches\n' "$M"
    _vsl=$(esxcli network vswitch standard list 2>&1)
    _r=$?
    printf '%%s\n\n%%s ESXCLIEND %%s\n' "$_vsl" "$M" "$_r"
  fi
  return 0
}
"""

# Every file called one of PATH_NAMES in a (non-empty) $PATH directory, probed in $PATH order.
_SCRIPT_PATH_SCAN = (
    PATH_WALK + '\n_wp() { [ -n "$1" ] && [ -f "$1/$2" ] && probe "$1/$2" 0; return 1; }\n_pathwalk _wp '
)


def build_script(
    marker: str,
    *,
    gather_tools: bool = True,
    extra_paths: Sequence[str] = (),
    sources: Sequence[str] = (),
    link_speed_of: Sequence[str] = (),
    nic_counters_of: Sequence[str] = (),
    cpu_times: bool = False,
) -> str:
    """The POSIX ``sh`` script run on the host (see the module docstring for its output)."""
    if not re.fullmatch(r"[A-Za-z0-9_]+", marker):
        raise ValueError(f"marker must be alphanumeric: {marker!r}")
    parts = [_SCRIPT_HEAD % {"marker": marker}]
    if nic_counters_of:
        parts.append(NIC_SCRIPT % {})
    if cpu_times:
        parts.append(CPU_SCRIPT % {} + "cputimes\n")  # first: the CPU reading as near the run as the call allows
    if gather_tools:
        parts.append(_SCRIPT_PATH_SCAN + " ".join(PATH_NAMES) + "\n")
        parts.extend(f"probe {shlex.quote(path)} 0\n" for path in ESXI_IPERF_PATHS)
        parts.extend(f"probe {shlex.quote(path)} 1\n" for path in extra_paths)
    for index, pattern in enumerate(sources):
        parts.append(f"printf '\\n%s SRC %s\\n' \"$M\" {index}\n")
        parts.append(f'for _f in {sh_glob_word(pattern)}; do readf "$_f"; done\n')
    speed_of = list(dict.fromkeys([*link_speed_of, *nic_counters_of]))  # a NIC reading carries its link speed
    parts.extend(f"lspeed {shlex.quote(address)}\n" for address in speed_of)
    parts.extend(f"lnic {shlex.quote(address)}\n" for address in nic_counters_of)
    if speed_of:
        parts.append("lspeed_esxi\n")  # ESXi: no /sys, esxcli instead (nothing on a host without esxcli)
    if nic_counters_of:
        parts.append("nic_esxi\n")  # ESXi: nic get / nic stats get of the vSwitch uplinks
    parts.append("printf '\\n%s DONE\\n' \"$M\"\n")
    return "".join(parts)


# --------------------------------------------------------------------------------------
# Splitting the output
# --------------------------------------------------------------------------------------


@dataclass
class ToolProbe:
    """One binary the script looked at: its ``-v`` output and exit status, or why it was not run."""

    path: str
    output: str = ""
    rc: int | None = None
    problem: str | None = None


@dataclass
class FileRead:
    """One file (or an unmatched pattern) of ``src`` item ``src_index``."""

    src_index: int
    path: str
    content: str | None = None
    problem: str | None = None


@dataclass
class ProbeOutput:
    """The script's output, split into its sections."""

    tools: list[ToolProbe] = field(default_factory=list)
    files: list[FileRead] = field(default_factory=list)
    #: address -> (interface or "", what /sys/class/net/<interface>/speed held)
    speeds: dict[str, tuple[str, str]] = field(default_factory=dict)
    #: ESXi: esxcli network listings (nic, ipv4, interfaces, vswitches) that exited 0
    esxcli: dict[str, str] = field(default_factory=dict)
    #: ESXi: ``nicget <vmnic>`` / ``nicstats <vmnic>`` / ``privstats <vmnic>`` outputs with their exit status
    esxcli_nic: dict[str, tuple[str, int | None]] = field(default_factory=dict)
    #: Linux: address -> interface holding it ("" when none does)
    nic_interfaces: dict[str, str] = field(default_factory=dict)
    #: Linux: address -> {ipjson|iptext|ethtool: (output, exit status)}
    nic_outputs: dict[str, dict[str, tuple[str, int | None]]] = field(default_factory=dict)
    #: CPU: ``CPUSTAT`` / ``CPUUPTIME`` -> (output, status word as printed)
    cpu: dict[str, tuple[str, str]] = field(default_factory=dict)
    finished: bool = False
    tty: bool = False


_PROBLEMS = {
    "directory": "is a directory",
    "missing": "does not exist",
    "noexec": "is not executable",
    "unreadable": "is not readable by the connection user",
}


def _cat_message(body: str) -> str:
    """``: <cat's own message>`` from a failed ``cat``'s output, or ``""``.

    The output also holds whatever ``cat`` read before it failed: only a last line that
    ``cat`` itself printed is shown, so file content never reaches an error message.
    """
    lines = body.rstrip("\n").rsplit("\n", 1)
    last = lines[-1].strip()
    return f": {last[:200]}" if last.startswith("cat:") else ""


def _end_status(word: str) -> tuple[int | None, str | None]:
    if word.lstrip("-").isdigit():
        return int(word), None
    return None, _PROBLEMS.get(word, word)


def parse_probe_output(stdout: str, marker: str) -> ProbeOutput:
    """Split the script's stdout into tool probes and file contents.

    A pseudo-terminal (ssh ``-tt``, used with become) turns every ``\\n`` into ``\\r\\n``;
    it is detected from the ``START`` line and undone, so file content comes back exact.
    """
    out = ProbeOutput()
    start = stdout.find(f"{marker} START")
    if start < 0:
        return out
    _text, out.tty = undo_pty(stdout[start:])
    sections = split_sections(stdout[start:], marker)
    src_index = -1
    for number, section in enumerate(sections):
        kind, arg, body = section.name, section.args, section.text
        following = sections[number + 1] if number + 1 < len(sections) else None
        if kind == "SRC":
            src_index = int(arg)
        elif kind == "DONE":
            out.finished = True
        elif kind == "TOOL" and following is not None and following.name == "TOOLEND":
            rc, problem = _end_status(following.args)
            out.tools.append(ToolProbe(path=arg, output=body, rc=rc, problem=problem))
        elif kind == "SPEED" and following is not None and following.name == "SPEEDEND":
            interface, _nl, speed = body.lstrip("\n").partition("\n")
            out.speeds[arg] = (interface.strip(), speed)
        elif kind == "ESXCLI" and following is not None and following.name == "ESXCLIEND":
            if arg.startswith(("nicget ", "nicstats ", "privstats ")):
                out.esxcli_nic[arg] = (body, _end_status(following.args.strip())[0])
            elif following.args.strip() == "0":
                out.esxcli[arg] = body
        elif kind in ("CPUSTAT", "CPUUPTIME") and following is not None and following.name == f"{kind}END":
            out.cpu[kind] = (body, following.args.strip())
        elif kind == "NIC":
            address, _sep, interface = arg.partition(" ")
            out.nic_interfaces[address] = interface.strip()
        elif kind == "NICOUT" and following is not None and following.name == "NICOUTEND":
            address, _sep, what = arg.rpartition(" ")
            out.nic_outputs.setdefault(address, {})[what] = (body, _end_status(following.args.strip())[0])
        elif kind == "FILE" and following is not None and following.name == "FILEEND":
            rc, problem = _end_status(following.args)
            if problem is None and rc != 0:
                problem = f"could not be read (cat exit status {rc}{_cat_message(body)})"
            out.files.append(
                FileRead(src_index=src_index, path=arg, content=None if problem else body, problem=problem)
            )
    return out


# --------------------------------------------------------------------------------------
# The NIC and CPU readings
# --------------------------------------------------------------------------------------


def reading_facts(
    out: ProbeOutput, nic_counters_of: Sequence[str], cpu_times: bool, link_speed_of: Sequence[str] = ()
) -> dict[str, Any]:
    """``iperf_nic_counters`` (for ``nic_counters_of``), ``iperf_cpu_times`` (with ``cpu_times``) and
    ``iperf_link_speeds`` (for ``link_speed_of``) from the command's split output; an ESXi host (esxcli answered:
    it has no /sys) is read from the uplinks of its vmknic's vSwitch."""
    facts: dict[str, Any] = {}
    esxi = {"nic", "ipv4", "interfaces", "vswitches"} <= set(out.esxcli)
    if link_speed_of:
        facts["iperf_link_speeds"] = {
            address: (
                esxcli_speed(address, out.esxcli) if esxi else sysfs_speed(*out.speeds.get(address, ("", "")), address)
            )
            for address in link_speed_of
        }
    if nic_counters_of:
        facts["iperf_nic_counters"] = {
            address: esxi_reading(address, out.esxcli, out.esxcli_nic)
            if esxi
            else linux_reading(
                address,
                out.nic_interfaces.get(address, ""),
                out.speeds.get(address, ("", ""))[1],
                out.nic_outputs.get(address, {}),
            )
            for address in nic_counters_of
        }
    if cpu_times:
        facts["iperf_cpu_times"] = cpu_times_fact(out.cpu.get("CPUSTAT"), out.cpu.get("CPUUPTIME"))
    return facts
