# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Action plugin ``esxilab.iperf.esxi_iperf_install``: validate the options, run the backend.

The work is in ``plugins/plugin_utils/esxi/install_run.py`` (parsing and planning in
``plugin_utils/esxi/``); the ``EsxiHostAction`` base (``plugin_utils/esxi/action.py``) lends the
backend the connection's plain shell, and this file adds, for ``vib_upload``, an upload into a
temporary directory on the host that is removed afterwards. ESXi needs no Python.
Documentation: the module file of the same name.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

from ansible.errors import AnsibleError

from ansible_collections.esxilab.iperf.plugins.modules.esxi_iperf_install import DOCUMENTATION
from ansible_collections.esxilab.iperf.plugins.plugin_utils.common.argspec import argument_spec
from ansible_collections.esxilab.iperf.plugins.plugin_utils.esxi import install_run as backend
from ansible_collections.esxilab.iperf.plugins.plugin_utils.esxi.action import EsxiHostAction
from ansible_collections.esxilab.iperf.plugins.plugin_utils.host.command import HostError

ARGUMENT_SPEC = argument_spec(DOCUMENTATION)  # the options of the module's DOCUMENTATION


class ActionModule(EsxiHostAction):
    """Make iperf runnable on an ESXi host with esxcli and cp, and undo it."""

    # False: the temporary directory is made only when a vib_upload file must be uploaded,
    # not on every run (ActionBase makes one up front for TRANSFERS_FILES plugins)
    TRANSFERS_FILES = False
    NAME = "esxilab.iperf.esxi_iperf_install"
    ARGUMENT_SPEC = ARGUMENT_SPEC
    MUTUALLY_EXCLUSIVE = backend.MUTUALLY_EXCLUSIVE

    def work(self, args: dict[str, Any], task_vars: Mapping[str, Any]) -> dict[str, Any]:
        local_upload: str | None = None
        if args.get("vib_upload"):
            try:
                local_upload = str(self._find_needle("files", args["vib_upload"]))
            except AnsibleError as exc:
                raise HostError(f"{self.NAME}: vib_upload: {exc.message}") from exc
        try:
            return backend.run(
                args,
                self.execute,
                check_mode=self.check_mode,
                upload=self._upload,
                local_upload=local_upload,
                journal=self.journal(args, task_vars),
                execute_input=self.execute_input,
            )
        finally:
            # the uploaded bundle (if any) goes with the temporary directory
            self._remove_tmp_path(self._connection._shell.tmpdir)

    def _upload(self, local: str) -> str:
        remote_dir = self._connection._shell.tmpdir or self._make_tmp_path()
        remote = str(self._connection._shell.join_path(remote_dir, os.path.basename(local)))
        self._transfer_file(local, remote)
        return remote
