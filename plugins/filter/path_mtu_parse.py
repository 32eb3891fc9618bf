# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Filter ``esxilab.iperf.path_mtu_parse``: a don't-fragment ping (vmkping or Linux ping) -> verdict."""

from __future__ import annotations

DOCUMENTATION = r"""
name: path_mtu_parse
short_description: Read a don't-fragment ping (ESXi vmkping or Linux ping) as a path MTU verdict
version_added: "1.0.0"
author:
  - esxilab.iperf contributors (@esxilab)
description:
  - Reads the output of C(vmkping -d -s SIZE) (ESXi) or C(ping -M do -s SIZE) (Linux iputils) and says whether
    packets of that size cross the path, and if not, why.
  - A payload of MTU - 28 bytes (IPv4 20 + ICMP 8) fills a packet of the MTU, for example C(-s 8972) for 9000.
  - 'Reasons: C(ok) (every reply came back), C(partial_loss) (some did), C(message_too_long) (the sending
    interface''s MTU is smaller), C(fragmentation_needed) (a router reported a smaller MTU, see
    RV(_value.mtu_reported)), C(no_reply) (nothing came back and no error was printed - a device on the path drops
    frames of this size, or the target does not answer at all; ping it with a small payload to tell the two apart),
    C(send_failed) (another send error), C(tool_missing) (the shell found no such program - the message names the
    package to install) and C(unrecognized) (the message quotes the output''s first line).'
  - Every figure is read from the output or is C(null). Used by the C(esxilab.iperf.path_mtu) role.
options:
  _input:
    description:
      - The ping output as text, or the registered result of a task that ran the ping (for example
        M(ansible.builtin.raw) in a loop); then C(stdout) and C(stderr) are read and the loop item is returned in
        RV(_value.check).
    type: raw
    required: true
  tool:
    description:
      - Which program printed the output.
    type: str
    choices:
      auto: Tell by the output (C(N data bytes) is vmkping, C(N(M) bytes of data) is iputils ping).
      vmkping: ESXi C(vmkping).
      ping: Linux iputils C(ping).
    default: auto
"""

EXAMPLES = r"""
---
- name: Jumbo path check from an ESXi host (9000 - 28 = 8972 bytes, don't fragment)
  ansible.builtin.raw: vmkping -I vmk1 -d -s 8972 -c 3 198.18.1.12
  register: jumbo
  changed_when: false
  failed_when: false

- name: Stop when jumbo frames do not cross the path
  ansible.builtin.assert:
    that: verdict.ok
    fail_msg: "{{ verdict.message }}"
  vars:
    verdict: "{{ jumbo | esxilab.iperf.path_mtu_parse }}"
"""

RETURN = r"""
_value:
  description: The verdict.
  type: dict
  contains:
    ok:
      description: At least one reply of the full size came back.
      type: bool
    reason:
      description: Why, see the description.
      type: str
      choices:
        - ok
        - partial_loss
        - message_too_long
        - fragmentation_needed
        - no_reply
        - send_failed
        - tool_missing
        - unrecognized
    message:
      description: The verdict in words, naming the size, the target and the likely cause.
      type: str
    tool:
      description: C(vmkping) or C(ping).
      type: str
    target:
      description: The address pinged, as printed.
      type: str
    payload_size:
      description: The ICMP payload size (C(-s)), as printed.
      type: int
    transmitted:
      description: Packets sent, from the summary line.
      type: int
    received:
      description: Replies received, from the summary line.
      type: int
    loss_percent:
      description: Packet loss in percent, from the summary line.
      type: float
    reply_bytes:
      description: Size of the first reply as printed (C(8980 bytes from ...)).
      type: int
    rtt_min_ms:
      description: Minimum round-trip time in milliseconds.
      type: float
    rtt_avg_ms:
      description: Average round-trip time in milliseconds.
      type: float
    rtt_max_ms:
      description: Maximum round-trip time in milliseconds.
      type: float
    mtu_reported:
      description: The MTU named in the error (Linux C(mtu=1500), or a router's C(Frag needed ... (mtu = 1500))).
      type: int
    errors:
      description: The error lines printed.
      type: list
      elements: str
    raw:
      description: The text that was read.
      type: str
    check:
      description: The loop item of the registered result given as input; absent for text input.
      type: raw
      returned: when the input is a registered loop result
"""

# Ansible's layout puts DOCUMENTATION, EXAMPLES and RETURN above the imports.
# ruff: noqa: E402

from collections.abc import Callable, Mapping
from typing import Any

from ansible.errors import AnsibleFilterError

from ansible_collections.esxilab.iperf.plugins.plugin_utils.esxi.ping import parse_linux_ping, parse_vmkping
from ansible_collections.esxilab.iperf.plugins.plugin_utils.esxi.steps import to_dict

_NAME = "esxilab.iperf.path_mtu_parse"


def path_mtu_parse(data: Any, tool: str = "auto") -> dict[str, Any]:
    """Verdict of one don't-fragment ping."""
    if tool not in ("auto", "vmkping", "ping"):
        raise AnsibleFilterError(f"{_NAME}: tool must be auto, vmkping or ping, got {tool!r}")
    check: Any = None
    has_check = False
    if isinstance(data, Mapping):
        stdout, stderr = data.get("stdout"), data.get("stderr") or ""
        if not isinstance(stdout, str):
            raise AnsibleFilterError(
                f"{_NAME}: the registered result has no stdout text; pass the result of a task that ran the ping"
            )
        if "item" in data:
            check, has_check = data["item"], True
    elif isinstance(data, str):
        stdout, stderr = data, ""
    else:
        raise AnsibleFilterError(
            f"{_NAME}: expected ping output text or a registered result, got {type(data).__name__}"
        )
    text = stdout if not stderr else f"{stdout}\n{stderr}"
    if tool == "auto":
        tool = "ping" if " bytes of data" in text else "vmkping"
    result = to_dict(parse_linux_ping(stdout, stderr) if tool == "ping" else parse_vmkping(text))
    if has_check:
        result["check"] = check
    return result


class FilterModule:
    """The path_mtu_parse filter."""

    def filters(self) -> dict[str, Callable[..., Any]]:
        return {"path_mtu_parse": path_mtu_parse}
