# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""lab/nslab/state.py without building anything: what the inventory and lab.json say of each host's rate."""

from __future__ import annotations

from pathlib import Path

import yaml

from lab.nslab.state import inventory_text, state_doc
from tests.unit.lab.nslab._specs import rate_spec


def test_inventory_and_lab_json_say_the_host_rate(tmp_path: Path) -> None:
    spec = rate_spec(tmp_path, "h4=300mbit", rate="1gbit")
    inventory = yaml.safe_load(inventory_text(spec))["all"]["children"]["lab"]
    assert inventory["vars"]["lab_rate_bps"] == 10**9
    assert (inventory["hosts"]["h4"]["lab_rate"], inventory["hosts"]["h4"]["lab_rate_bps"]) == ("300mbit", 3 * 10**8)
    assert "lab_rate" not in inventory["hosts"]["h3"]
    # the line rate paired_test takes for each shaped host (a veth reports 10000 Mb/s whatever the shaping)
    speeds = {name: host.get("paired_test_link_speed_mbps") for name, host in inventory["hosts"].items()}
    assert speeds == {"h1": 1000.0, "h2": 1000.0, "h3": 1000.0, "h4": 300.0}
    unshaped = yaml.safe_load(inventory_text(rate_spec(tmp_path, "h2=100mbit")))["all"]["children"]["lab"]
    assert {name: host.get("paired_test_link_speed_mbps") for name, host in unshaped["hosts"].items()} == {
        "h1": None,
        "h2": 100.0,
        "h3": None,
        "h4": None,
    }
    assert state_doc(spec)["options"]["host_rate"] == ["h4=300mbit"]
    assert "host_rate" not in state_doc(rate_spec(tmp_path, rate="1gbit"))["options"]  # other labs: as before
