# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Action plugin ``esxilab.iperf.iperf_run``: validate the options, run the backend's scripts.

The work (scripts, parsing, diagnosis) is in the ``plugin_utils/iperf_run/`` package; the
shared ``HostAction`` base (``plugin_utils/host/``) validates the task arguments and lends the
backend a way to run a script on the host over the connection's plain shell (no Python is
needed on the host). Documentation: the module file of the same name.
"""

from __future__ import annotations

import secrets
import time
from collections.abc import Mapping
from typing import Any

from ansible_collections.esxilab.iperf.plugins.modules.iperf_run import DOCUMENTATION
from ansible_collections.esxilab.iperf.plugins.plugin_utils import iperf_run as backend
from ansible_collections.esxilab.iperf.plugins.plugin_utils.common.argspec import argument_spec
from ansible_collections.esxilab.iperf.plugins.plugin_utils.host.action import HostAction
from ansible_collections.esxilab.iperf.plugins.plugin_utils.iperf_run.leftover import this_run

ARGUMENT_SPEC = argument_spec(DOCUMENTATION)  # the options of the module's DOCUMENTATION


class ActionModule(HostAction):
    """Run iperf2/iperf3 as server, client or stop it, over the host's shell."""

    NAME = "esxilab.iperf.iperf_run"
    ARGUMENT_SPEC = ARGUMENT_SPEC
    MUTUALLY_EXCLUSIVE = backend.MUTUALLY_EXCLUSIVE
    REQUIRED_IF = backend.REQUIRED_IF
    # a lost connection leaves the host unreachable, as for any module; stderr is iperf's, as it came
    CONNECTION_LOSS_AS_OUTPUT = False
    DROP_SSH_NOTICE = False

    def validate(self) -> dict[str, Any]:
        # before the conversion: Ansible would turn a string extra_args into a list silently
        backend.check_raw_args(self._task.args)
        return super().validate()

    def work(self, args: dict[str, Any], task_vars: Mapping[str, Any]) -> dict[str, Any]:
        started = round(time.time(), 3)  # a probe says when Ansible handed it over (the role's first start delay)
        result = backend.run(
            args,
            self.execute,
            spec=self.ARGUMENT_SPEC,
            check_mode=self.check_mode,
            token=secrets.token_hex(8),
            now=time.time,
            sleep=time.sleep,
            run_id=this_run(),  # this ansible process: a later run tells the servers it left when interrupted
        )
        if args["mode"] == "probe":
            result["probe_started_at"] = started
        return result
