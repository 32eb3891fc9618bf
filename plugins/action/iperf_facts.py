# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Action plugin of ``esxilab.iperf.iperf_facts`` (documentation: plugins/modules/iperf_facts.py).

Everything runs on the controller except **one** plain POSIX ``sh`` command per task on the
host (busybox ``ash`` on ESXi is enough; no Python there). That command:

1. lists every iperf binary -- the names ``iperf iperf2 iperf3 iperf3.copy iperf.copy`` in each
   ``$PATH`` directory (the host layer's ``$PATH`` walker, not ``command -v``, which stops at
   the first hit and is unreliable on old busybox), the ESXi locations and the user's
   ``paths`` -- probed with ``[ -x ]``, and runs ``<binary> -v`` for each (stderr merged:
   iperf2 prints its banner there);
2. expands the ``src`` globs in the host's shell and ``cat``s every file;
3. for each address of ``link_speed_of``: the interface that holds it (``ip -o addr show to``) and its
   ``/sys/class/net/<interface>/speed`` (read by ``speed.sysfs_speed``); on ESXi (where
   ``esxcli network nic list`` answers) the ``esxcli network`` listings instead
   (``speed.esxcli_speed``: the lowest active uplink of the vmknic's vSwitch);
4. for each address of ``nic_counters_of``: the same, plus that interface's counters and driver
   (``ip -s -s -j link``, ``ethtool -i``; on ESXi ``esxcli network nic stats get`` / ``nic get`` and
   ``localcli ... networkinternal nic privstats get`` of the vSwitch uplinks), read by ``nic/counters.py``
   into ``iperf_nic_counters``;
5. with ``cpu_times``: ``/proc/uptime`` and the ``cpu`` lines of ``/proc/stat`` (none on ESXi), read by
   ``cpu/reading.py`` into ``iperf_cpu_times``.

The sections of its output are framed by marker lines carrying a random token (the host
layer's framing, ``plugin_utils/host/framing.py``), so any file content passes through
unchanged and nothing needs a second round trip. The shared ``HostAction`` base validates the
options against the module's documentation and runs the command.

Pure helpers (script building, output splitting, glob quoting) are module-level functions,
unit-tested without a connection.
"""

from __future__ import annotations

import ipaddress
import re
import shlex
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ansible.errors import AnsibleActionFail

from ansible_collections.esxilab.iperf.plugins.modules.iperf_facts import DOCUMENTATION
from ansible_collections.esxilab.iperf.plugins.plugin_utils.common.argspec import argument_spec
from ansible_collections.esxilab.iperf.plugins.plugin_utils.cpu.reading import CPU_SCRIPT, cpu_times_fact
from ansible_collections.esxilab.iperf.plugins.plugin_utils.esxi.paths import ESXI_IPERF_PATHS
from ansible_collections.esxilab.iperf.plugins.plugin_utils.host.action import HostAction
from ansible_collections.esxilab.iperf.plugins.plugin_utils.host.command import HostError
from ansible_collections.esxilab.iperf.plugins.plugin_utils.host.framing import split_sections, undo_pty
from ansible_collections.esxilab.iperf.plugins.plugin_utils.host.pathwalk import PATH_WALK
from ansible_collections.esxilab.iperf.plugins.plugin_utils.iperf.parse import parse_all
from ansible_collections.esxilab.iperf.plugins.plugin_utils.iperf.result import IperfParseError, Result
from ansible_collections.esxilab.iperf.plugins.plugin_utils.iperf.tools import describe_tool
from ansible_collections.esxilab.iperf.plugins.plugin_utils.nic.counters import NIC_SCRIPT, esxi_reading, linux_reading
from ansible_collections.esxilab.iperf.plugins.plugin_utils.nic.speed import esxcli_speed, sysfs_speed

__all__ = [
    "ARGUMENT_SPEC",
    "DEFAULT_RAW_MAX_BYTES",
    "PATH_NAMES",
    "ActionModule",
    "FileRead",
    "ProbeOutput",
    "ToolProbe",
    "bound_raw",
    "build_script",
    "collect_results",
    "has_glob",
    "parse_probe_output",
    "sh_glob_word",
    "tool_facts",
]

# Names looked for in every $PATH directory.
PATH_NAMES = ("iperf", "iperf2", "iperf3", "iperf3.copy", "iperf.copy")

# The options are those of the module's DOCUMENTATION (one declaration); ``src`` and ``paths``
# are taken as they come and checked by hand (``_check_str_list``) for clearer messages than the
# list type gives.
ARGUMENT_SPEC = _SPEC = argument_spec(
    DOCUMENTATION, validate_as={"paths": "raw", "src": "raw", "link_speed_of": "raw", "nic_counters_of": "raw"}
)
# How much of each source's text a result keeps under ``raw`` (the figures come from all of it).
DEFAULT_RAW_MAX_BYTES: int = ARGUMENT_SPEC["raw_max_bytes"]["default"]

_NAME = "esxilab.iperf.iperf_facts"
_SAFE_BRACKET = re.compile(r"\[!?[A-Za-z0-9._:,+@%=^-]+\]")


class OptionError(ValueError):
    """An option has a value this action cannot use; the message names the option."""


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
  (ip -o addr show to "$1") 2>/dev/null | { read -r _n _d _r && printf '%%s' "${_d%%@*}"; }
}
lspeed() {
  printf '\n%%s SPEED %%s\n' "$M" "$1"
  _i=$(_ifof "$1")
  printf '%%s\n' "$_i"
  if [ -n "$_i" ]; then cat "/sys/class/net/$_i/speed" 2>&1; fi
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
# Facts
# --------------------------------------------------------------------------------------


def tool_facts(probes: Sequence[ToolProbe]) -> list[dict[str, Any]]:
    """``ansible_facts.iperf_tools`` from the probes (version parsing: ``iperf.tools.describe_tool``)."""
    return [describe_tool(p.path, p.output, p.rc, problem=p.problem) for p in probes]


def bound_raw(text: str | None, max_bytes: int) -> tuple[str | None, bool, int]:
    """``(kept, truncated, size)``: the first ``max_bytes`` bytes (UTF-8) of ``text``.

    The cut never splits a character; ``max_bytes=0`` keeps nothing (``None``). ``size`` is
    the length of the whole text in bytes.
    """
    if text is None:
        return None, False, 0
    encoded = text.encode("utf-8", errors="replace")
    if len(encoded) <= max_bytes:
        return text, False, len(encoded)
    if max_bytes <= 0:
        return None, bool(encoded), len(encoded)
    return encoded[:max_bytes].decode("utf-8", errors="ignore"), True, len(encoded)


def _set_raw(item: dict[str, Any], text: str | None, max_bytes: int) -> None:
    item["raw"], item["raw_truncated"], item["raw_bytes"] = bound_raw(text, max_bytes)


def _error_item(source: str, labels: Mapping[str, Any], raw: str | None, message: str) -> dict[str, Any]:
    return {
        "source": source,
        "labels": dict(labels),
        "raw": raw,
        "raw_truncated": False,
        "raw_bytes": 0,
        "tool": None,
        "bits_per_second": None,
        "complete": False,
        "warnings": [],
        "error": message,
        "parse_error": True,
    }


def _parse_text(data: str | Mapping[str, Any]) -> list[Result]:
    if isinstance(data, str) and not data.strip():
        raise IperfParseError("it is empty (no iperf output was written)")
    try:
        results: list[Result] = parse_all(data, keep_raw=True)
        return results
    except IperfParseError:
        raise
    except Exception as exc:  # a parser bug must not lose the file: report it like a parse error
        # The exception's text may quote the file: name only its type.
        raise IperfParseError(
            f"the parser failed ({type(exc).__name__}); this is a bug in {_NAME}, please report it with this file"
        ) from exc


def collect_results(
    items: Sequence[tuple[str, str | Mapping[str, Any] | None, str | None]],
    labels: Mapping[str, Any],
    *,
    keep_errors: bool = False,
    raw_max_bytes: int = DEFAULT_RAW_MAX_BYTES,
) -> tuple[list[dict[str, Any]], list[tuple[str, str | None, str]]]:
    """Parse ``(source, text_or_document, problem)`` items, in order.

    Returns the results (each with ``source``, ``labels``, ``raw``, ``raw_truncated`` and
    ``raw_bytes``; a multi-test log gives one result per test) and the failures as
    ``(source, raw, message)``. With ``keep_errors`` a failure also leaves an error item at
    its place among the results. Each ``raw`` is cut to ``raw_max_bytes`` (``bound_raw``);
    the figures are parsed from the whole text.
    """
    results: list[dict[str, Any]] = []
    failures: list[tuple[str, str | None, str]] = []
    for source, data, problem in items:
        raw = data if isinstance(data, str) else None
        if problem is not None or data is None:
            failure = (source, raw, problem or "no data")
        else:
            try:
                parsed = _parse_text(data)
            except IperfParseError as exc:
                failure = (source, raw, str(exc))
            else:
                for result in parsed:
                    result["source"] = source
                    result["labels"] = {**(result.get("labels") or {}), **labels}
                    _set_raw(result, result.get("raw", raw), raw_max_bytes)
                    results.append(result)
                continue
        failures.append(failure)
        if keep_errors:
            item = _error_item(failure[0], labels, None, failure[2])
            _set_raw(item, failure[1], raw_max_bytes)
            results.append(item)
    return results, failures


def _check_str_list(value: Any, option: str, example: str) -> list[str]:
    if value is None:
        return []
    if isinstance(value, str | bytes) or not isinstance(value, Sequence):
        sample = "/tmp/iperf/*.json" if option == "src" else "/opt/iperf/bin/iperf"
        raise OptionError(
            f"{option} must be a list of {example}, got {type(value).__name__} {value!r}; "
            f"write it as a YAML list, e.g. {option}: ['{sample}']"
        )
    items: list[str] = []
    for index, item in enumerate(value):
        if not isinstance(item, str) or not item.strip():
            raise OptionError(f"{option}[{index}] must be a non-empty string ({example}), got {item!r}")
        if "\n" in item or "\r" in item or "\0" in item:
            raise OptionError(f"{option}[{index}] must not contain line breaks or NUL: {item!r}")
        items.append(item)
    return items


# --------------------------------------------------------------------------------------
# The action
# --------------------------------------------------------------------------------------


class ActionModule(HostAction):
    """Gather ``iperf_tools`` and ``iperf_results`` with plain ``sh`` on the host."""

    NAME = _NAME
    ARGUMENT_SPEC = _SPEC
    MUTUALLY_EXCLUSIVE = (("src", "content"),)
    # a lost connection leaves the host unreachable, as for any module
    CONNECTION_LOSS_AS_OUTPUT = False
    DROP_SSH_NOTICE = False

    def run(self, tmp: Any = None, task_vars: dict[str, Any] | None = None) -> dict[str, Any]:
        result = super().run(tmp, task_vars)
        result.setdefault("changed", False)
        return result

    def validate(self) -> dict[str, Any]:
        try:
            args = super().validate()
        except AnsibleActionFail as exc:  # an option error is a failed task result, not an exception
            raise HostError(str(exc.result.get("msg", exc.message)), exc.result) from exc
        try:
            args["src"] = _check_str_list(args.get("src"), "src", "paths or globs on the host")
            args["paths"] = _check_str_list(args.get("paths"), "paths", "absolute paths of iperf binaries")
            args["link_speed_of"] = _check_str_list(args.get("link_speed_of"), "link_speed_of", "IP addresses")
            args["nic_counters_of"] = _check_str_list(args.get("nic_counters_of"), "nic_counters_of", "IP addresses")
        except OptionError as exc:
            raise HostError(f"{_NAME}: {exc}") from exc
        for option in ("link_speed_of", "nic_counters_of"):
            for index, address in enumerate(args[option]):
                try:
                    args[option][index] = ipaddress.ip_address(address.strip()).compressed
                except ValueError:
                    raise HostError(
                        f"{_NAME}: {option}[{index}] must be an IP address of the host, got {address!r}"
                    ) from None
        for index, path in enumerate(args["paths"]):
            if not path.startswith("/"):
                raise HostError(
                    f"{_NAME}: paths[{index}] must be an absolute path of a binary on the host, got {path!r}"
                )
        content = args.get("content")
        if content is not None and not isinstance(content, str | Mapping):
            raise HostError(
                f"{_NAME}: content must be the text of iperf output (or a decoded iperf3 -J document), "
                f"got {type(content).__name__}"
            )
        if args["raw_max_bytes"] < 0:
            raise HostError(
                f"{_NAME}: raw_max_bytes must be 0 (keep no raw text) or a positive number of bytes, "
                f"got {args['raw_max_bytes']}"
            )
        if self._task.args.get("src") is not None and not args["src"]:
            raise HostError(f"{_NAME}: src is empty; give at least one path or glob, or leave src out")
        if (
            not args["gather_tools"]
            and not args["src"]
            and content is None
            and not args["link_speed_of"]
            and not args["nic_counters_of"]
            and not args["cpu_times"]
        ):
            raise HostError(
                f"{_NAME}: nothing to do: gather_tools is false and neither src nor content is set; "
                "set src (files on the host) or content (text), or gather_tools=true"
            )
        return args

    def work(self, args: dict[str, Any], task_vars: Mapping[str, Any]) -> dict[str, Any]:
        labels: Mapping[str, Any] = args["labels"] or {}
        sources: list[str] = args["src"]
        facts: dict[str, Any] = {}
        warnings: list[str] = []

        probe = ProbeOutput(finished=True)
        if args["gather_tools"] or sources or args["link_speed_of"] or args["nic_counters_of"] or args["cpu_times"]:
            marker = f"ESXILAB_IPERF_{uuid.uuid4().hex}"
            script = build_script(
                marker,
                gather_tools=args["gather_tools"],
                extra_paths=args["paths"],
                sources=sources,
                link_speed_of=args["link_speed_of"],
                nic_counters_of=args["nic_counters_of"],
                cpu_times=args["cpu_times"],
            )
            res = self.execute(script)
            probe = parse_probe_output(res.stdout, marker)
            if not probe.finished:
                # stdout may hold file content once the script started reading files: show it only before.
                stdout = "" if f"{marker} START" in res.stdout else res.stdout
                shown = (res.stderr or stdout or "").strip()[-500:]
                raise HostError(
                    f"{_NAME}: the probe command did not complete on the host (exit status {res.rc}): "
                    f"{shown or 'no output'}. It needs a POSIX sh with printf, cat and test."
                )
        if args["gather_tools"]:
            facts["iperf_tools"] = tool_facts(probe.tools)
        # an ESXi host (esxcli answered) has no /sys: the vmknic's vSwitch uplinks instead
        esxi = {"nic", "ipv4", "interfaces", "vswitches"} <= set(probe.esxcli)
        if args["nic_counters_of"]:
            facts["iperf_nic_counters"] = {
                address: esxi_reading(address, probe.esxcli, probe.esxcli_nic)
                if esxi
                else linux_reading(
                    address,
                    probe.nic_interfaces.get(address, ""),
                    probe.speeds.get(address, ("", ""))[1],
                    probe.nic_outputs.get(address, {}),
                )
                for address in args["nic_counters_of"]
            }
        if args["cpu_times"]:
            facts["iperf_cpu_times"] = cpu_times_fact(probe.cpu.get("CPUSTAT"), probe.cpu.get("CPUUPTIME"))
        if args["link_speed_of"]:
            facts["iperf_link_speeds"] = {
                address: esxcli_speed(address, probe.esxcli)
                if esxi
                else sysfs_speed(*probe.speeds.get(address, ("", "")), address)
                for address in args["link_speed_of"]
            }

        if sources or args["content"] is not None:
            items: list[tuple[str, str | Mapping[str, Any] | None, str | None]] = []
            if args["content"] is not None:
                items.append(("content", args["content"], None))
            for file in probe.files:
                source, problem = file.path, file.problem
                if problem == "does not exist" and has_glob(file.path):
                    # the shell leaves a pattern that matched nothing as it is
                    pattern = sources[file.src_index] if 0 <= file.src_index < len(sources) else file.path
                    source, problem = f"src[{file.src_index}] {pattern!r}", "matched no file"
                items.append((source, file.content, problem))
            mode = args["on_parse_error"]
            results, failures = collect_results(
                items, labels, keep_errors=mode == "keep", raw_max_bytes=args["raw_max_bytes"]
            )
            if failures:
                described = "; ".join(f"{source}: {message}" for source, _raw, message in failures)
                if mode == "fail":
                    raise HostError(
                        f"{_NAME}: {len(failures)} source(s) could not be read as iperf output: {described}. "
                        "Fix the path or the file, or set on_parse_error=skip (leave them out) "
                        "or on_parse_error=keep (keep an item with error set)."
                    )
                done = "kept with error set in" if mode == "keep" else "left out of"
                warnings.append(f"{_NAME}: {done} iperf_results: {described}")
            facts["iperf_results"] = results

        out: dict[str, Any] = {"ansible_facts": facts, "changed": False}
        if warnings:
            out["warnings"] = warnings
        return out
