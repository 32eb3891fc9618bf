# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""lab/nslab/cli.py (the command line of lab/esxilab_lab.py) without building anything."""

from __future__ import annotations

from lab.nslab.cli import parser


def test_cli_accepts_the_options() -> None:
    args = parser().parse_args(["up", "--host-env", "h1=PATH=/x", "--host-bind", "h1=/a:/b", "--host-bind", "h2=/c:/d"])
    assert (args.host_env, args.host_bind) == (["h1=PATH=/x"], ["h1=/a:/b", "h2=/c:/d"])
