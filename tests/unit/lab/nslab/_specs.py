# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Lab specs the unit tests of lab/nslab/ build (nothing is built on the machine): one helper per kind of lab."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from lab.nslab.options import build_spec
from lab.nslab.spec import LabSpec


def flow_spec(tmp_path: Path, **kwargs: Any) -> LabSpec:
    """Two hosts (--flow-rate tests)."""
    return build_spec(name="fu3unit", hosts=2, state_dir=tmp_path / "s", subnet="198.19.112.0/24", **kwargs)


def rate_spec(tmp_path: Path, *host_rate: str, **options: Any) -> LabSpec:
    """Four hosts with --host-rate items."""
    return build_spec(
        name="lblunit", hosts=4, state_dir=tmp_path / "state", subnet="198.19.179.0/24", host_rate=host_rate, **options
    )


def host_spec(tmp_path: Path, env: tuple[str, ...] = (), binds: tuple[str, ...] = ()) -> LabSpec:
    """Two hosts with --host-env / --host-bind items."""
    return build_spec(
        name="eltunit", hosts=2, state_dir=tmp_path / "state", subnet="198.19.249.0/24", host_env=env, host_bind=binds
    )
