# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The path_mtu_parse filter over recorded vmkping and iputils ping outputs."""

from __future__ import annotations

import pytest
import yaml
from ansible.errors import AnsibleFilterError

from ansible_collections.esxilab.iperf.plugins.filter import path_mtu_parse as plugin
from ansible_collections.esxilab.iperf.plugins.filter.path_mtu_parse import path_mtu_parse
from tests.collection_path import ESXI_RECORDINGS

FIXTURES = ESXI_RECORDINGS


def fx(name: str) -> str:
    return (FIXTURES / name).read_text()


def test_registered_and_documented() -> None:
    assert plugin.FilterModule().filters() == {"path_mtu_parse": path_mtu_parse}
    doc = yaml.safe_load(plugin.DOCUMENTATION)
    assert doc["name"] == "path_mtu_parse"
    assert set(doc["options"]["tool"]["choices"]) == {"auto", "vmkping", "ping"}
    returned = yaml.safe_load(plugin.RETURN)["_value"]["contains"]
    verdict = path_mtu_parse(fx("linux-iputils20221126__ping-M-do__ok-1472.txt"))
    assert set(verdict) == set(returned) - {"check"}


def test_linux_ok_1472() -> None:
    verdict = path_mtu_parse(fx("linux-iputils20221126__ping-M-do__ok-1472.txt"))
    assert (verdict["ok"], verdict["reason"], verdict["tool"]) == (True, "ok", "ping")
    assert (verdict["target"], verdict["payload_size"], verdict["reply_bytes"]) == ("198.51.100.2", 1472, 1480)
    assert (verdict["transmitted"], verdict["received"], verdict["loss_percent"]) == (3, 3, 0.0)
    assert (verdict["rtt_min_ms"], verdict["rtt_avg_ms"], verdict["rtt_max_ms"]) == (0.045, 0.049, 0.053)


def test_linux_silent_drop() -> None:
    verdict = path_mtu_parse(fx("linux-iputils20221126__ping-M-do__silent-drop.txt"))
    assert (verdict["ok"], verdict["reason"], verdict["payload_size"]) == (False, "no_reply", 8972)
    assert verdict["loss_percent"] == 100.0
    assert "drops frames of this size (check switch MTU)" in verdict["message"]


def test_linux_local_message_too_long_from_a_registered_result() -> None:
    registered = {
        "rc": 1,
        "stdout": fx("linux-iputils20221126__ping-M-do__local-message-too-long.stdout.txt"),
        "stderr": fx("linux-iputils20221126__ping-M-do__local-message-too-long.stderr.txt"),
        "item": {"target": "198.51.100.1", "mtu": 9000},
    }
    verdict = path_mtu_parse(registered)
    assert (verdict["reason"], verdict["mtu_reported"]) == ("message_too_long", 1500)
    assert verdict["check"] == {"target": "198.51.100.1", "mtu": 9000}
    assert verdict["errors"] == ["ping: local error: message too long, mtu=1500"] * 3


def test_linux_router_frag_needed() -> None:
    verdict = path_mtu_parse(fx("linux-iputils20221126__ping-M-do__frag-needed-merged.txt"), tool="ping")
    assert (verdict["reason"], verdict["mtu_reported"]) == ("fragmentation_needed", 1500)
    assert "a router on the path has MTU 1500" in verdict["message"]


def test_vmkping_message_too_long() -> None:
    verdict = path_mtu_parse(fx("unknown__vmkping__message-too-long.txt"))
    assert (verdict["tool"], verdict["reason"], verdict["payload_size"]) == ("vmkping", "message_too_long", 1500)
    assert verdict["errors"] == ["sendto() failed (Message too long)"] * 3
    assert "raise the vmk/vSwitch MTU" in verdict["message"]


def test_vmkping_ok_9008() -> None:
    verdict = path_mtu_parse(fx("unknown__vmkping__jumbo-ok-9008-vsan-doc.txt"), tool="vmkping")
    assert (verdict["ok"], verdict["reply_bytes"], verdict["target"]) == (True, 9008, "172.32.0.3")
    assert (verdict["rtt_min_ms"], verdict["rtt_avg_ms"], verdict["rtt_max_ms"]) == (0.533, 0.575, 0.638)


@pytest.mark.parametrize(
    ("data", "kwargs", "message"),
    [
        (42, {}, "expected ping output text or a registered result, got int"),
        ({"rc": 0}, {}, "the registered result has no stdout text"),
        ("PING", {"tool": "fping"}, "tool must be auto, vmkping or ping"),
    ],
)
def test_refusals(data: object, kwargs: dict[str, str], message: str) -> None:
    with pytest.raises(AnsibleFilterError, match=message):
        path_mtu_parse(data, **kwargs)
