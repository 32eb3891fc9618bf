# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Role variables that no role option matches: likely typos, with the closest valid name.

A role's valid names are read from the role itself, never copied: the options of every entry
point of ``meta/argument_specs.yml``, the names of ``defaults/main.yml`` and ``vars/main.yml``,
and the facts and registered results its own task files set (``set_fact`` keys, ``register``
names, the facts of the collection's actions in ``FACTS_OF_ACTIONS``) - the role's outputs, such
as ``paired_test_results`` or ``report_files``. A defined
variable that starts with the role's prefix and is none of those is reported, with the closest
valid name by ``difflib`` when one is close enough. Variables starting with ``__`` are internal
and never start with a role prefix, so they are never reported.

Plain data in, plain data out; reading YAML files is the only I/O (used by the action plugin
``esxilab.iperf.role_vars_check``).

Private module: not part of the collection's public API.
"""

from __future__ import annotations

import difflib
import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import yaml

from ansible_collections.esxilab.iperf.plugins.plugin_utils.common.argspec import SAFE_LOADER

__all__ = [
    "RoleVarsError",
    "Unknown",
    "closest",
    "known_names",
    "load_role_yaml",
    "unknown_keys_text",
    "unknown_names",
    "warning",
]

_SET_FACT = ("set_fact", "ansible.builtin.set_fact", "ansible.legacy.set_fact")
_SET_FACT_NOT_FACTS = frozenset({"cacheable"})
_BLOCK_KEYS = ("block", "rescue", "always")
# difflib's ratio above which a valid name counts as "close": paired_test_stream -> paired_test_streams
# is 0.97, report_titel -> report_title 0.83, paired_test_dration -> paired_test_duration 0.97.
_CUTOFF = 0.75


class RoleVarsError(ValueError):
    """A file of the role cannot be read; the message names it."""


@dataclass(frozen=True)
class Unknown:
    """A variable with the role's prefix that the role does not know, and the closest valid name."""

    name: str
    suggestion: str | None


def load_role_yaml(path: str) -> Any:
    """A YAML file of a role (None when it does not exist)."""
    try:
        with open(path, encoding="utf-8") as handle:
            # libyaml's safe loader where PyYAML has it: the preflight of every play reads 13 role files (0.1 s with
            # the pure-Python loader, on the play's path before anything runs)
            return yaml.load(handle, Loader=SAFE_LOADER)
    except FileNotFoundError:
        return None
    except (OSError, yaml.YAMLError) as exc:
        raise RoleVarsError(f"cannot read {path}: {exc}") from exc


# The public facts an action of the collection sets (its RETURN's ansible_facts; a unit test keeps them equal).
FACTS_OF_ACTIONS = {
    "esxilab.iperf.report_write": ("report_files",),
    "esxilab.iperf.rate_search": ("rate_search_results",),
}


def _task_names(tasks: Any) -> Iterable[str]:
    """Facts (``set_fact`` keys) and registered names the tasks set, blocks included."""
    if not isinstance(tasks, list):
        return
    for task in tasks:
        if not isinstance(task, Mapping):
            continue
        for key in _BLOCK_KEYS:
            yield from _task_names(task.get(key))
        register = task.get("register")
        if isinstance(register, str):
            yield register
        for action, facts_set in FACTS_OF_ACTIONS.items():
            if action in task:
                yield from facts_set
        for action in _SET_FACT:
            facts = task.get(action)
            if isinstance(facts, Mapping):
                yield from (str(name) for name in facts if name not in _SET_FACT_NOT_FACTS)


def known_names(role_dir: str) -> frozenset[str]:
    """Every variable name the role at ``role_dir`` declares or sets (see the module docstring)."""
    specs = load_role_yaml(os.path.join(role_dir, "meta", "argument_specs.yml"))
    if not isinstance(specs, Mapping) or not isinstance(specs.get("argument_specs"), Mapping):
        raise RoleVarsError(f"{role_dir}/meta/argument_specs.yml has no argument_specs mapping")
    names: set[str] = set()
    for entry_point in specs["argument_specs"].values():
        if isinstance(entry_point, Mapping) and isinstance(entry_point.get("options"), Mapping):
            names.update(str(name) for name in entry_point["options"])
    for part in ("defaults", "vars"):
        values = load_role_yaml(os.path.join(role_dir, part, "main.yml"))
        if isinstance(values, Mapping):
            names.update(str(name) for name in values)
    tasks_dir = os.path.join(role_dir, "tasks")
    for entry in sorted(os.listdir(tasks_dir)) if os.path.isdir(tasks_dir) else []:
        if entry.endswith((".yml", ".yaml")):
            names.update(_task_names(load_role_yaml(os.path.join(tasks_dir, entry))))
    return frozenset(names)


def closest(name: str, valid: Iterable[str]) -> str | None:
    """The valid name closest to ``name`` (a likely typo of it), or None when none is close."""
    return next(iter(difflib.get_close_matches(name, sorted(set(valid)), n=1, cutoff=_CUTOFF)), None)


def unknown_keys_text(unknown: Iterable[str], valid: Iterable[str]) -> str:
    """``strams (did you mean streams?), foo`` - the unknown keys, each with its closest valid key."""
    parts = []
    for key in unknown:
        near = closest(key, valid)
        parts.append(f"{key} (did you mean {near}?)" if near else key)
    return ", ".join(parts)


def unknown_names(defined: Iterable[str], prefix: str, known: Iterable[str]) -> list[Unknown]:
    """The ``defined`` names that start with ``prefix`` and are not ``known``, sorted, each with a suggestion."""
    valid = sorted(name for name in set(known) if name.startswith(prefix))
    found = sorted({name for name in defined if name.startswith(prefix)} - set(known))
    return [Unknown(name, closest(name, valid)) for name in found]


def warning(role: str, unknown: Unknown) -> str:
    """The warning for one unknown name: the name, that it is ignored, the closest valid name."""
    hint = (
        f"did you mean {unknown.suggestion}?"
        if unknown.suggestion
        else f"no option of the role is close to it (ansible-doc -t role {role} lists them)"
    )
    return f"{role}: the variable {unknown.name} is not an option of the role and is ignored - {hint}"
