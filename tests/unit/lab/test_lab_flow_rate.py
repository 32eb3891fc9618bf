# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""lab/esxilab_lab.py --flow-rate without building anything: validation, the tc commands, and
reading the htb layout back (idempotence). Built and measured for real in
tests/integration/test_lab.py::test_flow_rate_limits_each_flow_and_streams_add_up_to_the_link.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from tests.collection_path import REPO


def _load() -> ModuleType:
    spec = importlib.util.spec_from_file_location("esxilab_lab_flow", REPO / "lab" / "esxilab_lab.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["esxilab_lab_flow"] = module
    spec.loader.exec_module(module)
    return module


lab = _load()


def _spec(tmp_path: Path, **kwargs: Any) -> Any:
    return lab.build_spec(name="fu3unit", hosts=2, state_dir=tmp_path / "s", subnet="198.19.112.0/24", **kwargs)


def _class_show(commands: list[list[str]]) -> str:
    """What ``tc class show`` prints for the classes the commands add (iproute2 6.1 text format)."""
    lines = []
    for argv in commands:
        if "class" not in argv:
            continue
        words = argv[argv.index("classid") + 1 :]
        opts = dict(zip(words[2::2], words[3::2], strict=False))
        rate, ceil = (int(opts[k].removesuffix("bit")) // 1_000_000 for k in ("rate", "ceil"))
        parent = argv[argv.index("parent") + 1]
        lines.append(
            f"class htb {words[0]} parent {parent} prio 0 rate {rate}Mbit ceil {ceil}Mbit"
            f" burst {opts['burst']}b cburst {opts['cburst']}b "
        )
    return "\n".join(lines) + "\n"


def test_flow_rate_goes_on_what_each_host_sends(tmp_path: Path) -> None:
    spec = _spec(tmp_path, rate="1gbit", flow_rate="300mbit")
    host = spec.hosts[0]
    assert host.egress.flow_rate_bps == 300_000_000 and host.egress.rate_bps == 1_000_000_000
    assert host.ingress.flow_rate_bps is None  # the receiving side keeps the plain link (tbf)
    assert spec.flow_rate_bps == 300_000_000
    assert 'lab_flow_rate: "300mbit"' in lab.inventory_text(spec)
    assert lab.state_doc(spec)["options"]["flow_rate"] == "300mbit"
    assert "flow_rate" not in lab.state_doc(_spec(tmp_path, rate="1gbit"))["options"]


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"flow_rate": "300mbit"}, "--flow-rate 300mbit: needs --rate"),
        ({"rate": "1gbit", "flow_rate": "2gbit"}, "must be below --rate 1gbit"),
        ({"rate": "1gbit", "flow_rate": "300mbit", "delay": "1ms"}, "cannot be combined with --delay"),
        ({"rate": "1gbit", "flow_rate": "300mbit", "ethernet_overhead": True}, "--ethernet-overhead"),
        ({"rate": "1gbit", "flow_rate": "fast"}, "use a tc rate such as 100mbit"),
    ],
)
def test_bad_flow_rates_are_refused(tmp_path: Path, kwargs: dict[str, Any], message: str) -> None:
    with pytest.raises(lab.LabError, match=message.replace("-", r"\-")):
        _spec(tmp_path, **kwargs)


def test_the_htb_layout_is_built_and_read_back(tmp_path: Path) -> None:
    desired = _spec(tmp_path, rate="1gbit", flow_rate="300mbit").hosts[0].egress
    commands = lab.shaping_commands("fu3unit-h1", "eth0", lab.Shaping(), desired)
    flat = [" ".join(c) for c in commands]
    assert flat[0] == "tc -n fu3unit-h1 qdisc add dev eth0 root handle 1: htb default 2"
    assert sum(" class add " in c for c in flat) == 2 + lab.FLOW_CLASSES
    assert sum(" flowid 1:" in c for c in flat) == lab.FLOW_CLASSES
    assert any("hashkey mask 0x007e0000 at 20 link 2:" in c for c in flat)
    # what tc prints for that layout is read back as the desired shaping: a second `up` changes nothing
    current = lab.observe_shaping(
        [{"kind": "htb", "handle": "1:", "root": True}], lab.parse_htb_classes(_class_show(commands))
    )
    assert current is not None and current.flow_rate_bps == 300_000_000
    assert lab.shaping_matches(current, desired)
    assert not lab.shaping_matches(current, _spec(tmp_path, rate="1gbit", flow_rate="200mbit").hosts[0].egress)
    assert not lab.shaping_matches(current, _spec(tmp_path, rate="1gbit").hosts[0].egress)
    assert "64 flow classes of 300mbit" in current.describe()


def test_an_htb_root_that_is_not_ours_is_foreign() -> None:
    classes = lab.parse_htb_classes("class htb 1:1 root prio 0 rate 1Gbit ceil 1Gbit burst 1600b cburst 1600b \n")
    assert lab.observe_shaping([{"kind": "htb", "handle": "1:", "root": True}], classes) is None
