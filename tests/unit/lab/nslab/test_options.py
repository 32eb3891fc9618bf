# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""lab/nslab/options.py without building anything: --flow-rate, --host-rate and --hosts validated into a lab
spec (each refusal names the option and the fix), and where the flow rate goes (inventory, lab.json).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from lab.nslab.common import LabError
from lab.nslab.options import build_spec
from lab.nslab.state import inventory_text, state_doc
from tests.unit.lab.nslab._specs import flow_spec, rate_spec


def test_flow_rate_goes_on_what_each_host_sends(tmp_path: Path) -> None:
    spec = flow_spec(tmp_path, rate="1gbit", flow_rate="300mbit")
    host = spec.hosts[0]
    assert host.egress.flow_rate_bps == 300_000_000 and host.egress.rate_bps == 1_000_000_000
    assert host.ingress.flow_rate_bps is None  # the receiving side keeps the plain link (tbf)
    assert spec.flow_rate_bps == 300_000_000
    assert 'lab_flow_rate: "300mbit"' in inventory_text(spec)
    assert state_doc(spec)["options"]["flow_rate"] == "300mbit"
    assert "flow_rate" not in state_doc(flow_spec(tmp_path, rate="1gbit"))["options"]


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
    with pytest.raises(LabError, match=message.replace("-", r"\-")):
        flow_spec(tmp_path, **kwargs)


def test_without_rate_only_the_named_host_is_shaped(tmp_path: Path) -> None:
    spec = rate_spec(tmp_path, "h2=100mbit")
    assert [h.egress.rate_bps for h in spec.hosts] == [None, 100 * 10**6, None, None]


@pytest.mark.parametrize(
    ("items", "options", "message"),
    [
        (("h4:300mbit",), {}, "--host-rate 'h4:300mbit': use HOST=RATE, e.g. h4=300mbit"),
        (("h9=300mbit",), {}, "--host-rate 'h9=300mbit': the lab has only h1..h4"),
        (("h2=fast",), {}, "rate 'fast': use a tc rate such as 100mbit, 1gbit, 500kbit"),
        (("h2=200mbit",), {"rate": "1gbit", "flow_rate": "300mbit"}, "must be above --flow-rate 300mbit"),
    ],
)
def test_bad_host_rates_are_refused(tmp_path: Path, items: tuple[str, ...], options: Any, message: str) -> None:
    with pytest.raises(LabError) as caught:
        rate_spec(tmp_path, *items, **options)
    assert message in str(caught.value)


def test_up_to_64_hosts_fit_subnet_and_interface_names(tmp_path: Path) -> None:
    spec = build_spec(name="abcdefghijk", hosts=64, state_dir=tmp_path, subnet="198.19.249.0/24")
    assert len(spec.hosts) == 64 and spec.hosts[-1].veth == "abcdefghijk-v64"
    assert max(len(h.veth) for h in spec.hosts) <= 15 and len(spec.bridge) <= 15  # IFNAMSIZ - 1
    assert str(spec.hosts[-1].address.ip) == "198.19.249.74"
    assert len({h.mac for h in spec.hosts}) == 64
    with pytest.raises(LabError, match="--hosts 65: must be between 2 and 64"):
        build_spec(name="x", hosts=65, state_dir=tmp_path, subnet="198.19.249.0/24")
    with pytest.raises(LabError, match="too small for the controller and 64 hosts"):
        build_spec(name="x", hosts=64, state_dir=tmp_path, subnet="198.19.249.0/26")
