# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Every action plugin validates against its module's DOCUMENTATION (``argspec.argument_spec``).

``HAND_WRITTEN`` is the argument spec each action carried before the spec was derived from the
documentation (copied verbatim from the plugins of 2026-12-01, constants resolved): the derived
spec must say the same for those options, so their validation is unchanged. A new option is added
to the module's DOCUMENTATION only.
"""

from __future__ import annotations

import ast
import importlib
from pathlib import Path
from typing import Any

import pytest
from ansible.module_utils.common.arg_spec import ArgumentSpecValidator

from ansible_collections.esxilab.iperf.plugins.plugin_utils.common.argspec import DocSpecError, argument_spec
from tests.collection_path import REPO

HAND_WRITTEN: dict[str, dict[str, dict[str, Any]]] = {
    "esxi_firewall": {
        "enabled": {"type": "bool"},
        "default_action": {"type": "str", "choices": ["PASS", "DROP"]},
        "rulesets": {"type": "dict"},
        "restore": {"type": "dict"},
        "journal_dir": {"type": "str", "default": "/scratch/esxilab-iperf"},
        "journal_copy_dir": {"type": "path"},
        "deadline": {"type": "int", "default": 3600},
    },
    "esxi_journal": {
        "mode": {"type": "str", "choices": ["read", "record", "restore", "clear"], "default": "read"},
        "scope": {
            "type": "list",
            "elements": "str",
            "choices": ["firewall", "install", "link"],
            "default": ["firewall", "install", "link"],
        },
        "journal_dir": {"type": "str", "default": "/scratch/esxilab-iperf"},
        "journal_copy_dir": {"type": "path"},
        "remove_vib": {"type": "bool", "default": False},
    },
    "esxi_iperf_install": {
        "method": {"type": "str", "choices": ["auto", "vib", "bundled"], "default": "auto"},
        "vib_source": {"type": "str"},
        "vib_upload": {"type": "path"},
        "allow_unsigned": {"type": "bool", "default": False},
        "relax_exec_policy": {"type": "bool", "default": False},
        "relax_mode": {"type": "str", "choices": ["runtime_option", "app_domain"], "default": "runtime_option"},
        "restore": {"type": "dict"},
        "remove_vib": {"type": "bool", "default": False},
        "journal_dir": {"type": "str", "default": "/scratch/esxilab-iperf"},
        "journal_copy_dir": {"type": "path"},
        "deadline": {"type": "int", "default": 3600},
    },
    "iperf_facts": {
        "gather_tools": {"type": "bool", "default": True},
        "paths": {"type": "raw", "default": []},
        "src": {"type": "raw"},
        "content": {"type": "raw"},
        "labels": {"type": "dict", "default": {}},
        "on_parse_error": {"type": "str", "default": "fail", "choices": ["fail", "skip", "keep"]},
        "raw_max_bytes": {"type": "int", "default": 65536},
    },
    "iperf_run": {
        "mode": {"type": "str", "required": True, "choices": ["server", "client", "stop", "probe", "collect"]},
        "tool": {"type": "str", "choices": ["iperf3", "iperf2"]},
        "binary": {"type": "str"},
        "port": {"type": "int"},
        "bind": {"type": "str"},
        "protocol": {"type": "str", "choices": ["tcp", "udp"], "default": "tcp"},
        "interval": {"type": "float"},
        "window": {"type": "str"},
        "extra_args": {"type": "list", "elements": "str", "default": []},
        "state_dir": {"type": "str", "default": "/tmp"},
        "server_timeout": {"type": "int", "default": 600},
        "one_off": {"type": "bool", "default": False},
        "server": {"type": "str"},
        "duration": {"type": "int"},
        "bytes": {"type": "int"},
        "streams": {"type": "int"},
        "reverse": {"type": "bool", "default": False},
        "bidir": {"type": "bool", "default": False},
        "bandwidth": {"type": "str"},
        "length": {"type": "str"},
        "mss": {"type": "int"},
        "omit": {"type": "int"},
        "zerocopy": {"type": "bool", "default": False},
        "connect_timeout": {"type": "int"},
        "timeout": {"type": "float"},
        "start_at": {"type": "float"},
        "labels": {"type": "dict", "default": {}},
        "pid": {"type": "int"},
        "peer_is_esxi": {"type": "bool", "default": False},
    },
    "report_write": {
        "runs": {"type": "list", "elements": "dict", "required": True},
        "dest": {"type": "path", "required": True},
        "name": {"type": "str", "default": "iperf"},
        "title": {"type": "str"},
        "environment": {"type": "dict", "default": {}},
        "line_rate_bps": {"type": "float"},
        "compare_by": {"type": "str"},
        "knee_tolerance": {"type": "float", "default": 0.05},
        "plots": {"type": "bool", "default": True},
        "generated_at": {"type": "str"},
        "force": {"type": "bool", "default": False},
    },
    "report_gate": {
        "report_dir": {"type": "path", "required": True},
        "history": {"type": "str", "default": "none"},
        "history_password": {"type": "str", "no_log": True},
        "baseline": {"type": "str"},
        "max_drop_percent": {"type": "float"},
        "min_line_rate_percent": {"type": "float"},
        "max_retransmits": {"type": "int"},
        "max_loss_percent": {"type": "float"},
        "fail_on_regression": {"type": "bool", "default": True},
    },
    "paired_test_host": {  # new since: its documented spec, as a check that it derives as meant
        "run": {"type": "dict", "required": True},
        "run_count": {"type": "int"},
        "cpu_hosts": {"type": "list", "elements": "str", "default": []},
        "esxi_hosts": {"type": "list", "elements": "str", "default": []},
    },
    "paired_test_preflight": {  # new since: its documented spec, as a check that it derives as meant
        "tests": {"type": "raw", "required": True},
        "role_path": {"type": "path", "required": True},
        "unknown_variables": {"type": "str", "choices": ["fail", "warn"], "default": "fail"},
        "probe": {"type": "bool", "default": False},
    },
    "report_check": {  # new since: its documented spec, as a check that it derives as meant
        "runs": {"type": "int", "required": True},
        "name": {"type": "raw", "required": True},
        "knee_tolerance": {"type": "raw", "required": True},
        "settings": {"type": "dict", "default": {}},
    },
    "guest_network": {  # new since: its documented spec, as a check that it derives as meant
        "address": {"type": "str", "required": True},
        "vnics": {"type": "list", "elements": "dict", "default": []},
        "persist_with": {
            "type": "str",
            "choices": ["auto", "networkmanager", "netplan", "ifupdown"],
            "default": "auto",
        },
        "journal_dir": {"type": "str", "default": "/var/lib/esxilab-iperf"},
    },
    "rate_search": {  # new since: its documented spec, as a check that it derives as meant
        "server": {"type": "str", "required": True},
        "frame_sizes": {"type": "list", "elements": "int", "default": [64, 128, 256, 512, 1024, 1280, 1518]},
        "loss_percent": {"type": "float", "default": 0.0},
        "max_mbps": {"type": "float", "required": True},
        "mode": {"type": "str", "choices": ["search", "plan"], "default": "search"},
    },
    "role_vars_check": {
        "role_path": {"type": "path", "required": True},
        "prefix": {"type": "str"},
        "role_name": {"type": "str"},
        "known": {"type": "list", "elements": "str", "default": []},
    },
}
# Where each action's spec lives (the module that validates with it) and the files that read the options.
_PU = "ansible_collections.esxilab.iperf.plugins.plugin_utils"
_ACTION = "ansible_collections.esxilab.iperf.plugins.action"
SPEC_HOME = {
    "esxi_firewall": f"{_ACTION}.esxi_firewall",
    "esxi_iperf_install": f"{_ACTION}.esxi_iperf_install",
    "esxi_journal": f"{_ACTION}.esxi_journal",
    "iperf_facts": f"{_ACTION}.iperf_facts",
    "iperf_run": f"{_ACTION}.iperf_run",
    "paired_test_host": f"{_ACTION}.paired_test_host",
    "paired_test_preflight": f"{_ACTION}.paired_test_preflight",
    "report_write": f"{_ACTION}.report_write",
    "report_gate": f"{_ACTION}.report_gate",
    "report_check": f"{_ACTION}.report_check",
    "rate_search": f"{_ACTION}.rate_search",
    "role_vars_check": f"{_ACTION}.role_vars_check",
    "guest_network": f"{_ACTION}.guest_network",
}
READERS = {
    "esxi_firewall": ["action/esxi_firewall.py", "plugin_utils/esxi/firewall_run.py", "plugin_utils/journal/store.py"],
    "esxi_iperf_install": [
        "action/esxi_iperf_install.py",
        "plugin_utils/esxi/install_run.py",
        "plugin_utils/journal/store.py",
    ],
    "esxi_journal": ["action/esxi_journal.py", "plugin_utils/esxi/journal_run.py", "plugin_utils/journal/store.py"],
    "iperf_facts": ["action/iperf_facts.py"],
    "iperf_run": [
        "action/iperf_run.py",
        "plugin_utils/iperf_run/options.py",
        "plugin_utils/iperf_run/flow.py",
    ],
    "paired_test_host": ["action/paired_test_host.py"],
    "paired_test_preflight": ["action/paired_test_preflight.py"],
    "report_write": ["action/report_write.py"],
    "report_gate": ["action/report_gate.py"],
    "report_check": ["action/report_check.py", "plugin_utils/report/settings_check.py"],
    "rate_search": ["action/rate_search.py", "plugin_utils/ratesearch/settings.py"],
    "role_vars_check": ["action/role_vars_check.py"],
    "guest_network": [
        "action/guest_network.py",
        "plugin_utils/guest/run.py",
        "plugin_utils/guest/request.py",
        "plugin_utils/journal/store.py",
    ],
}
ACTIONS = sorted(p.stem for p in (REPO / "plugins" / "action").glob("*.py"))


def test_every_action_plugin_is_covered() -> None:
    assert ACTIONS == sorted(HAND_WRITTEN) == sorted(SPEC_HOME) == sorted(READERS)


@pytest.mark.parametrize("name", ACTIONS)
def test_derived_spec_equals_the_hand_written_one(name: str) -> None:
    """Every option the hand-written spec had is there and validated as before (options added to the
    documentation since then are validated as documented, see test_the_derived_spec_is_one_ansible_accepts)."""
    spec = importlib.import_module(SPEC_HOME[name]).ARGUMENT_SPEC
    assert {option: spec.get(option) for option in HAND_WRITTEN[name]} == HAND_WRITTEN[name]


@pytest.mark.parametrize("name", ACTIONS)
def test_no_plugin_keeps_a_second_spec(name: str) -> None:
    for relative in READERS[name]:
        tree = ast.parse((REPO / "plugins" / relative).read_text())
        for node in tree.body:
            if isinstance(node, ast.AnnAssign | ast.Assign) and isinstance(node.value, ast.Dict):
                targets = [node.target] if isinstance(node, ast.AnnAssign) else node.targets
                names = [t.id for t in targets if isinstance(t, ast.Name)]
                assert "ARGUMENT_SPEC" not in names, f"{relative} declares ARGUMENT_SPEC by hand"


def _strings_in_functions(path: Path) -> set[str]:
    """String constants inside the functions of ``path`` (module-level tables left out)."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            found |= {n.value for n in ast.walk(node) if isinstance(n, ast.Constant) and isinstance(n.value, str)}
    return found


@pytest.mark.parametrize("name", ACTIONS)
def test_no_documented_option_is_ignored(name: str) -> None:
    """Each documented option is read somewhere in the code of the action (by its name)."""
    used: set[str] = set()
    for relative in READERS[name]:
        used |= _strings_in_functions(REPO / "plugins" / relative)
    spec = importlib.import_module(SPEC_HOME[name]).ARGUMENT_SPEC
    ignored = sorted(set(spec) - used)
    assert not ignored, f"{name}: documented but never read by the action: {ignored}"


@pytest.mark.parametrize("name", ACTIONS)
def test_the_derived_spec_is_one_ansible_accepts(name: str) -> None:
    spec = importlib.import_module(SPEC_HOME[name]).ARGUMENT_SPEC
    blank = {"str": "x", "path": "x", "dict": {}, "int": 1, "float": 1.0}
    required = {k: blank.get(v["type"], []) for k, v in spec.items() if v.get("required")}
    if name == "iperf_run":
        required["mode"] = "stop"
    result = ArgumentSpecValidator(spec).validate(required)
    assert not result.error_messages, result.error_messages
    for option, entry in spec.items():
        if "default" in entry:
            assert result.validated_parameters[option] == entry["default"], option


# -- the converter ----------------------------------------------------------------------------

_DOC = """
module: x
options:
  level:
    description: A choice list given as choice -> description.
    type: str
    choices:
      low: Low.
      high: High.
    default: low
  secret:
    description: Hidden.
    type: str
    no_log: true
    aliases: [password]
    required: true
  flag:
    description: Not required, said out loud.
    type: bool
    required: false
  untyped:
    description: No type means str.
  items:
    description: Nested.
    type: list
    elements: dict
    suboptions:
      key:
        description: A key.
        type: int
        required: true
"""


def test_converter_reads_every_documented_key() -> None:
    assert argument_spec(_DOC) == {
        "level": {"type": "str", "choices": ["low", "high"], "default": "low"},
        "secret": {"type": "str", "no_log": True, "aliases": ["password"], "required": True},
        "flag": {"type": "bool"},
        "untyped": {"type": "str"},
        "items": {"type": "list", "elements": "dict", "options": {"key": {"type": "int", "required": True}}},
    }


def test_converter_validate_as_overrides_the_type_and_drops_elements() -> None:
    spec = argument_spec(_DOC, validate_as={"items": "raw"})
    assert spec["items"] == {"type": "raw", "options": {"key": {"type": "int", "required": True}}}


@pytest.mark.parametrize(
    ("documentation", "kwargs", "needle"),
    [
        (_DOC, {"validate_as": {"nope": "raw"}}, "validate_as names nope, which the documentation does not list"),
        ("- a list", {}, "not a YAML mapping"),
        ("options:\n  a: 1\n", {}, "a: the documented option is not a mapping"),
        ("options:\n  a:\n    suboptions:\n      b: [1]\n", {}, "a.b: the documented option is not a mapping"),
    ],
)
def test_converter_refuses(documentation: str, kwargs: dict[str, Any], needle: str) -> None:
    with pytest.raises(DocSpecError, match=needle.replace(".", r"\.")):
        argument_spec(documentation, **kwargs)
