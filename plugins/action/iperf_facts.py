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

The script, the split of its output and the NIC and CPU facts are ``plugin_utils/nic/facts_script.py``
(``iperf_run``'s client runs the reading part too), unit-tested without a connection.
"""

from __future__ import annotations

import ipaddress
import uuid
from collections.abc import Mapping, Sequence
from typing import Any

from ansible.errors import AnsibleActionFail

from ansible_collections.esxilab.iperf.plugins.modules.iperf_facts import DOCUMENTATION
from ansible_collections.esxilab.iperf.plugins.plugin_utils.common.argspec import argument_spec
from ansible_collections.esxilab.iperf.plugins.plugin_utils.host.action import HostAction
from ansible_collections.esxilab.iperf.plugins.plugin_utils.host.command import HostError
from ansible_collections.esxilab.iperf.plugins.plugin_utils.iperf.parse import parse_all
from ansible_collections.esxilab.iperf.plugins.plugin_utils.iperf.result import IperfParseError, Result
from ansible_collections.esxilab.iperf.plugins.plugin_utils.iperf.tools import describe_tool
from ansible_collections.esxilab.iperf.plugins.plugin_utils.nic.facts_script import (
    PATH_NAMES,
    FileRead,
    ProbeOutput,
    ToolProbe,
    build_script,
    has_glob,
    parse_probe_output,
    reading_facts,
    sh_glob_word,
)

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

# The options are those of the module's DOCUMENTATION (one declaration); ``src`` and ``paths``
# are taken as they come and checked by hand (``_check_str_list``) for clearer messages than the
# list type gives.
ARGUMENT_SPEC = _SPEC = argument_spec(
    DOCUMENTATION, validate_as={"paths": "raw", "src": "raw", "link_speed_of": "raw", "nic_counters_of": "raw"}
)
# How much of each source's text a result keeps under ``raw`` (the figures come from all of it).
DEFAULT_RAW_MAX_BYTES: int = ARGUMENT_SPEC["raw_max_bytes"]["default"]

_NAME = "esxilab.iperf.iperf_facts"


class OptionError(ValueError):
    """An option has a value this action cannot use; the message names the option."""


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
        facts.update(reading_facts(probe, args["nic_counters_of"], args["cpu_times"], args["link_speed_of"]))

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
