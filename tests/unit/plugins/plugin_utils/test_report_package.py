# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The report package's interface: every name from its module, imported on first use (PEP 562)."""

from __future__ import annotations

import importlib
import os
import subprocess
import sys

import pytest

from ansible_collections.esxilab.iperf.plugins.plugin_utils import report
from tests.collection_path import ensure_collection_path

PACKAGE = "ansible_collections.esxilab.iperf.plugins.plugin_utils.report"


def test_every_name_of_the_interface_is_its_modules_object() -> None:
    assert sorted(report.__all__) == sorted(report._WHERE)  # one list, the other checked against it
    for name, module in report._WHERE.items():
        assert getattr(report, name) is getattr(importlib.import_module(f"{PACKAGE}.{module}"), name), name
    unknown = "nothing"
    with pytest.raises(AttributeError, match="has no attribute 'nothing'"):  # the error an unknown name gives
        getattr(report, unknown)


def test_one_module_of_the_package_does_not_import_the_builder() -> None:
    """The preflight reads report.history, the progress callbacks report.base: not markdown, rows, groups, ..."""
    code = (
        f"import sys, {PACKAGE}.base, {PACKAGE}.history\n"
        f"loaded = sorted(m for m in sys.modules if m.startswith('{PACKAGE}.'))\n"
        f"assert '{PACKAGE}.markdown' not in loaded and '{PACKAGE}.build' not in loaded, loaded\n"
        f"from {PACKAGE} import build_report\n"
        f"assert '{PACKAGE}.build' in sys.modules\n"
    )
    env = dict(os.environ, PYTHONPATH=str(ensure_collection_path()))
    done = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=60, check=False
    )
    assert done.returncode == 0, done.stderr
