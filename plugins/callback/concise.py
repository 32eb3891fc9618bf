# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Callback ``esxilab.iperf.concise``: Ansible's default output, a role validation failure in a few lines."""

from __future__ import annotations

DOCUMENTATION = r"""
name: concise
type: stdout
short_description: Ansible's default output, with role argument validation failures shown without the spec dump
version_added: "1.0.0"
author:
  - esxilab.iperf contributors (@esxilab)
description:
  - The output of C(ansible.builtin.default) in every respect but one - when a role's argument validation
    (C(ansible.builtin.validate_argument_spec), the first task of every role with C(meta/argument_specs.yml)) fails,
    the failure shows the errors (C(msg)) without C(argument_spec_data), the whole argument spec
    of the role (for C(esxilab.iperf.paired_test) about 14 KB per host after the one useful line), and without
    C(argument_errors) (the same errors again).
  - At verbosity 3 (C(-vvv)) and above the spec is shown as C(ansible.builtin.default) shows it.
  - Set it with C(stdout_callback = esxilab.iperf.concise) in the C([defaults]) section of C(ansible.cfg) (or
    C(ANSIBLE_STDOUT_CALLBACK)). AWX uses its own stdout callback, which keeps each failure as a collapsed event.
extends_documentation_fragment:
  - ansible.builtin.default_callback
  - ansible.builtin.result_format_callback
requirements:
  - set as stdout in configuration
"""

# Ansible's layout puts DOCUMENTATION above the imports.
# ruff: noqa: E402
from collections.abc import MutableMapping
from typing import Any

from ansible.plugins.callback.default import CallbackModule as DefaultCallback

# The keys of a failed validate_argument_spec result left out: the whole spec, and the errors
# again (its msg says them).
_DROPPED = ("argument_spec_data", "argument_errors")


class CallbackModule(DefaultCallback):  # type: ignore[misc]  # ansible-core ships no type hints
    """The default callback; the spec dump of a failed argument validation left out below -vvv."""

    CALLBACK_VERSION = 2.0
    CALLBACK_TYPE = "stdout"
    CALLBACK_NAME = "esxilab.iperf.concise"

    def v2_runner_on_failed(self, result: Any, ignore_errors: bool = False) -> None:
        data = getattr(result, "result", None)  # ansible-core 2.19; _result before
        if not isinstance(data, MutableMapping):
            data = getattr(result, "_result", None)
        if self._display.verbosity < 3 and isinstance(data, MutableMapping):
            for key in _DROPPED:
                data.pop(key, None)
        super().v2_runner_on_failed(result, ignore_errors)
