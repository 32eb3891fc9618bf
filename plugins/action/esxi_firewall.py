# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Action plugin ``esxilab.iperf.esxi_firewall``: validate the options, run the backend.

The work is in ``plugin_utils/esxi/firewall_run.py`` (parsing and planning in
``plugin_utils/esxi/``); the ``EsxiHostAction`` base (``plugin_utils/esxi/action.py``) lends the
backend the connection's plain shell, so ESXi needs no Python. Documentation: the module file
of the same name.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ansible_collections.esxilab.iperf.plugins.modules.esxi_firewall import DOCUMENTATION
from ansible_collections.esxilab.iperf.plugins.plugin_utils.common.argspec import argument_spec
from ansible_collections.esxilab.iperf.plugins.plugin_utils.esxi import firewall_run as backend
from ansible_collections.esxilab.iperf.plugins.plugin_utils.esxi.action import EsxiHostAction

ARGUMENT_SPEC = argument_spec(DOCUMENTATION)  # the options of the module's DOCUMENTATION


class ActionModule(EsxiHostAction):
    """Set the ESXi firewall's enabled state, default action and rulesets with esxcli."""

    NAME = "esxilab.iperf.esxi_firewall"
    ARGUMENT_SPEC = ARGUMENT_SPEC
    MUTUALLY_EXCLUSIVE = backend.MUTUALLY_EXCLUSIVE

    def work(self, args: dict[str, Any], task_vars: Mapping[str, Any]) -> dict[str, Any]:
        return backend.run(args, self.execute, check_mode=self.check_mode, journal=self.journal(args, task_vars))
