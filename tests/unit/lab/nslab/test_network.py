# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""lab/nslab/network.py without building anything: the neighbour flushes of a build (the commands recorded,
none run). Built for real in tests/integration/test_lab.py.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from lab.nslab import network
from lab.nslab.options import build_spec


def test_a_fresh_host_is_flushed_only_from_namespaces_older_than_this_up(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    spec = build_spec(name="eltunit", hosts=4, state_dir=tmp_path, subnet="198.19.249.0/24")
    commands: list[list[str]] = []
    monkeypatch.setattr(network, "run", lambda argv, **_kw: commands.append(list(argv)))
    monkeypatch.setattr(network, "list_netns", lambda: {h.netns for h in spec.hosts} | {"other-h1"})
    h4 = spec.hosts[3]
    network.flush_neighbors(spec, h4.address.ip, {"eltunit-h1", "eltunit-h4", "other-h1"})
    flush = ["neigh", "flush", "to", "198.19.249.14"]
    assert commands == [["ip", *flush, "dev", "eltunit-br0"], ["ip", "-n", "eltunit-h1", *flush]]
    commands.clear()
    network.flush_neighbors(spec, h4.address.ip)  # a MAC change: every lab namespace but the host's own
    assert [c[2] for c in commands[1:]] == ["eltunit-h1", "eltunit-h2", "eltunit-h3"]
