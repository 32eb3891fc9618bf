# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Filter ``esxilab.iperf.iperf_parse``: iperf2/iperf3 output -> normalized result."""

from __future__ import annotations

DOCUMENTATION = r"""
name: iperf_parse
short_description: Parse iperf2 or iperf3 output into a normalized result
version_added: "1.0.0"
author:
  - esxilab.iperf contributors (@esxilab)
description:
  - Turns the output of one iperf2 or iperf3 run into a normalized result (C(schema_version=1)) with numeric
    figures, whatever the version and format of the output.
  - 'Recognised outputs: iperf3 C(-J) JSON (3.0 to 3.21, also truncated documents and documents with an C(error)),
    iperf3 C(--json-stream) (3.17+), iperf3 text (client and server, C(-R), C(--bidir), UDP, C(-V), C(--timestamps)),
    iperf2 text (2.0.5 to 2.2, legacy and C(-e) enhanced reports) and iperf2 CSV (C(-y C), every layout).'
  - Rates are bits per second (1000-based), byte counts are bytes, times are seconds. A figure the output does not
    carry is C(null), never guessed.
  - The headline RV(_value.bits_per_second) is the receiver's total when the output has a usable one, else the
    sender's.
  - 'A server log holding several tests (one C(Server listening) banner per test, or one C(-J) document per test)
    gives the last test with figures and a warning saying how many tests it held; set O(all=true) to get every test.
    A banner followed by no test (the server stopped while idle: C(iperf3: interrupt - the server has terminated))
    is not a test; its message goes to the warnings of the test before it.'
  - 'iperf2 dual tests (C(-d), C(-r)) and C(--full-duplex): each direction is its own transfer, never merged with the
    other. In C(-y C) output the direction this host sends in is told by the C(-e) write and read columns, the
    C(::,0) end a 2.1 client prints for its receiving direction, or the server''s C(Client connecting to) banner;
    when nothing tells it (a 2.1.8 server''s plain full-duplex CSV), no direction is reported as sent or received
    and a warning lists each direction''s figures.'
  - Output of a failed run (for example C(unable to connect to server)) is not an error of the filter; it gives a
    result with RV(_value.error) set and the text kept in RV(_value.raw).
  - 'Input that is not iperf output is refused with an error that says what was expected and never quotes the
    input; this includes JSON that is not an iperf3 C(-J) document (an object without any of the members
    C(start), C(intervals), C(end), C(error)), for example C({"foo": [1, 2, 3]}).'
  - Runs on the controller. To read result files that are on a managed host, use M(esxilab.iperf.iperf_facts).
options:
  _input:
    description:
      - The output of C(iperf) or C(iperf3) as text (for example from P(ansible.builtin.file#lookup) or the
        C(stdout) of a task that ran iperf), or an iperf3 C(-J) document already decoded with
        P(ansible.builtin.from_json#filter).
    type: raw
    required: true
  all:
    description:
      - Return a list with one result per test instead of the last test only.
      - Useful for server logs holding several tests. Input holding one test gives a list of one result.
      - A boolean, or one of the strings Ansible reads as a boolean (V(yes), V(no), V(true), V(false), V(on),
        V(off), V(1), V(0)); any other value is refused.
    type: bool
    default: false
  keep_raw:
    description:
      - Keep the parsed text under RV(_value.raw).
      - The text is always kept when RV(_value.error) is set.
      - A boolean, or a string Ansible reads as a boolean, as for O(all).
    type: bool
    default: false
  labels:
    description:
      - Labels merged into RV(_value.labels), for example the host pair, the run number or the stream count of a
        sweep, so results can be grouped later.
    type: dict
seealso:
  - plugin: esxilab.iperf.iperf_stats
    plugin_type: filter
    description: Statistics over a list of results.
  - module: esxilab.iperf.iperf_facts
    description: Parse result files on a managed host (no Python needed there).
"""

EXAMPLES = r"""
---
- name: Parse a saved iperf3 -J result kept on the controller
  ansible.builtin.set_fact:
    run: "{{ lookup('ansible.builtin.file', 'results/esxi01-vmk1.json') | esxilab.iperf.iperf_parse }}"

- name: Show the headline in Gbit/s
  ansible.builtin.debug:
    msg: "{{ (run.bits_per_second / 1e9) | round(2) }} Gbit/s, complete={{ run.complete }}"

- name: Run iperf3 on a host and parse its text output, with labels for grouping
  ansible.builtin.command:
    cmd: iperf3 -c 192.0.2.10 -t 10 -P 4
  register: client
  changed_when: false

- name: Parse it
  ansible.builtin.set_fact:
    run: "{{ client.stdout | esxilab.iperf.iperf_parse(labels={'pair': 'esxi01-esxi02', 'streams': 4}) }}"

- name: Parse an already decoded JSON document
  ansible.builtin.set_fact:
    run: "{{ client_json.stdout | ansible.builtin.from_json | esxilab.iperf.iperf_parse }}"

- name: Every test of a server log, one result each
  ansible.builtin.set_fact:
    runs: "{{ lookup('ansible.builtin.file', 'logs/iperf3-server.log') | esxilab.iperf.iperf_parse(all=true) }}"
"""

RETURN = r"""
_value:
  description:
    - One normalized result (C(schema_version=1)); with O(all=true) a list of them.
    - Figures the output does not carry are C(null).
    - Some outputs add keys beyond the ones below, for example C(reverse_sent) and C(reverse_received) (the
      server-to-client totals of a C(--bidir) run) or C(server_output) (the server's result from
      C(--get-server-output)).
  type: dict
  contains:
    schema_version:
      description: Version of the result layout; always C(1).
      type: int
    tool:
      description: Which tool printed the output.
      type: str
      choices: [iperf2, iperf3]
    tool_version:
      description: Version printed in the output, for example C(3.9) or C(2.1.8); C(null) when not printed.
      type: str
    format:
      description: What was parsed.
      type: str
      choices: [json, text, csv]
    side:
      description: Whose output this is, when the output says so.
      type: str
      choices: [client, server]
    protocol:
      description: C(tcp) or C(udp).
      type: str
    reverse:
      description: The server sent and the client received (C(-R)).
      type: bool
    bidir:
      description: Both directions at once (iperf3 C(--bidir), iperf2 dual test).
      type: bool
    local:
      description: Local endpoint C({host, port}), or C(null).
      type: dict
    remote:
      description: Remote endpoint C({host, port}), or C(null).
      type: dict
    timestamp:
      description: Test start, ISO 8601 with offset, when the output carries it.
      type: str
    duration:
      description: Seconds covered by the totals the headline uses.
      type: float
    streams:
      description: Number of parallel streams seen.
      type: int
    sent:
      description:
        - Totals of the sending side C({bytes, bits_per_second, seconds, retransmits}).
        - With C(-R) the server is the sender. C(retransmits) is C(null) when unknown or untrustworthy.
      type: dict
    received:
      description: Totals of the receiving side C({bytes, bits_per_second, seconds, retransmits}).
      type: dict
    bits_per_second:
      description:
        - Headline rate in bit/s; the receiver's total when usable, else the sender's.
        - C(null) when neither exists.
      type: float
    udp:
      description:
        - UDP figures of the receiver C({jitter_ms, lost_packets, packets, lost_percent}); C(null) for TCP.
        - iperf2 with several streams prints one Server Report per stream and no sum; they are summed here
          (datagram counts added, C(lost_percent) recomputed from the sums, C(jitter_ms) the largest stream's),
          and RV(_value.received) is their summed bytes and rate.
      type: dict
    rtt:
      description:
        - TCP round-trip time in microseconds over the streams this host sent, C({min_us, mean_us, max_us}) (the
          smallest stream minimum, the unweighted mean of the stream means, the largest maximum), from iperf3 JSON.
        - C(null) when the output carries none (iperf3 text, iperf2, UDP, the receiving side) or when the sender's
          C(TCP_INFO) cannot be trusted (ESXi). Each stream's figures are in C(per_stream[].rtt)
          C({rtt_us, min_us, mean_us, max_us, var_us}).
      type: dict
    cpu:
      description: CPU use C({local_percent, remote_percent}) when printed (C(-V), or JSON).
      type: dict
    per_stream:
      description: One item per stream C({id, sent, received}); iperf3 JSON adds C(rtt) (see RV(_value.rtt)).
      type: list
      elements: dict
    intervals:
      description:
        - The summed series over all streams, oldest first
          C({start, end, bytes, bits_per_second, retransmits, omitted}).
      type: list
      elements: dict
    complete:
      description: False when the run was cut short, the output is truncated, or a side's totals are missing.
      type: bool
    warnings:
      description: Why figures are missing or were not trusted.
      type: list
      elements: str
    error:
      description: "The tool's own error message when the run failed, without the C(iperf3: error - ) prefix."
      type: str
    labels:
      description: The O(labels) given (an empty dictionary when none).
      type: dict
    raw:
      description: The parsed text; present with O(keep_raw=true) or when RV(_value.error) is set.
      type: str
      returned: when O(keep_raw=true) or RV(_value.error) is set
"""

# Ansible's layout puts DOCUMENTATION, EXAMPLES and RETURN above the imports.
# ruff: noqa: E402

from collections.abc import Callable, Mapping
from typing import Any

from ansible.errors import AnsibleFilterError
from ansible.module_utils.parsing.convert_bool import boolean

from ansible_collections.esxilab.iperf.plugins.plugin_utils.iperf.parse import parse, parse_all
from ansible_collections.esxilab.iperf.plugins.plugin_utils.iperf.result import IperfParseError, Result

_NAME = "esxilab.iperf.iperf_parse"


def _with_labels(result: Result, labels: Mapping[str, Any] | None) -> Result:
    merged = dict(result.get("labels") or {})
    if labels:
        merged.update(labels)
    result["labels"] = merged
    return result


def _flag(value: Any, option: str) -> bool:
    """A boolean option: ``True``/``False`` or a string Ansible reads as one; anything else is refused."""
    try:
        return bool(boolean(value, strict=True))
    except TypeError:
        raise AnsibleFilterError(
            f"{_NAME}: {option} must be true or false (or yes/no, on/off, 1/0), got {type(value).__name__} "
            f"{value!r}; write {option}=true or {option}=false"
        ) from None


def iperf_parse(
    data: Any,
    all: bool = False,
    keep_raw: bool = False,
    labels: Mapping[str, Any] | None = None,
) -> Result | list[Result]:
    """Parse iperf output (text, bytes or a decoded iperf3 JSON document) into a normalized result."""
    all = _flag(all, "all")
    keep_raw = _flag(keep_raw, "keep_raw")
    if labels is not None and not isinstance(labels, Mapping):
        raise AnsibleFilterError(
            f"{_NAME}: labels must be a dictionary such as {{'pair': 'esxi01-esxi02'}}, got {type(labels).__name__}"
        )
    if data is None or not isinstance(data, str | bytes | Mapping):
        raise AnsibleFilterError(
            f"{_NAME}: expected the text of iperf/iperf3 output or a decoded iperf3 -J document, "
            f"got {type(data).__name__}; pipe the output text itself (for example register.stdout or "
            "lookup('ansible.builtin.file', path)) into the filter"
        )
    if isinstance(data, str | bytes) and not data.strip():
        raise AnsibleFilterError(
            f"{_NAME}: the input is empty; check that the iperf run printed something "
            "(iperf2 prints its report on stdout, errors on stderr)"
        )
    try:
        if all:
            return [_with_labels(result, labels) for result in parse_all(data, keep_raw=keep_raw)]
        return _with_labels(parse(data, keep_raw=keep_raw), labels)
    except IperfParseError as exc:
        raise AnsibleFilterError(f"{_NAME}: {exc}") from exc


class FilterModule:
    """The iperf_parse filter."""

    def filters(self) -> dict[str, Callable[..., Any]]:
        return {"iperf_parse": iperf_parse}
