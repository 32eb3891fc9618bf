# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Action plugin ``esxilab.iperf.guest_network``: validate the options, run the backend.

The work is in ``plugins/plugin_utils/guest/run.py``; the journal base (``plugin_utils/esxi/action.py``)
lends it the connection's plain shell and the restore journal. Documentation: the module file of the
same name.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ansible_collections.esxilab.iperf.plugins.modules.guest_network import DOCUMENTATION
from ansible_collections.esxilab.iperf.plugins.plugin_utils.common.argspec import argument_spec
from ansible_collections.esxilab.iperf.plugins.plugin_utils.esxi.action import EsxiHostAction
from ansible_collections.esxilab.iperf.plugins.plugin_utils.guest import run as backend
from ansible_collections.esxilab.iperf.plugins.plugin_utils.guest.request import GuestNetworkError, option

ARGUMENT_SPEC = argument_spec(DOCUMENTATION)  # the options of the module's DOCUMENTATION


class ActionModule(EsxiHostAction):
    """Find a guest's test vNIC by its MAC and give it its address and MTU, journaled first."""

    NAME = "esxilab.iperf.guest_network"
    ARGUMENT_SPEC = ARGUMENT_SPEC

    def work(self, args: dict[str, Any], task_vars: Mapping[str, Any]) -> dict[str, Any]:
        journal = self.journal(args, task_vars)
        if journal is None:
            raise GuestNetworkError(
                f"{option('journal_dir')} is empty: the change would not be put back after a killed run. Fix: give a"
                " directory on the guest such as /var/lib/esxilab-iperf"
            )
        return backend.run(args, self.execute, journal, check_mode=self.check_mode)
