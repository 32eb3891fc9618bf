# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""A role's variables checked once against the role's own ``meta/argument_specs.yml``.

What Ansible's argument check of a role does (types, choices, the elements of a list), made once for the play by the
role's preflight instead of once on every host: a play that imports the role with ``rolespec_validate: false`` loses
nothing, and saves Ansible's per-host task (about 20 ms a host: it templates the whole spec for each). The spec is read
from the role, never copied; the problems are lines naming the variable and the fix. One difference on purpose: a
mapping or a list given for a string option is refused (Ansible turns it into its text).

Plain data in, plain data out; reading the role's YAML file is the only I/O.

Private module: not part of the collection's public API.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterable, Mapping
from typing import Any

from ansible.module_utils.common.arg_spec import ArgumentSpecValidator

from ansible_collections.esxilab.iperf.plugins.plugin_utils.common.role_vars import RoleVarsError, load_role_yaml

__all__ = ["entry_options", "spec_problems", "unmentioned"]

_TEXT_TYPES = ("str", "path")


def entry_options(role_dir: str, entry_point: str = "main") -> dict[str, Any]:
    """The options of ``entry_point`` in the ``meta/argument_specs.yml`` of the role at ``role_dir``."""
    path = os.path.join(role_dir, "meta", "argument_specs.yml")
    specs = load_role_yaml(path)
    entry = specs.get("argument_specs", {}).get(entry_point) if isinstance(specs, Mapping) else None
    options = entry.get("options") if isinstance(entry, Mapping) else None
    if not isinstance(options, Mapping):
        raise RoleVarsError(f"{path} has no options for the entry point {entry_point!r}")
    return dict(options)


def _names(text: str, names: Iterable[str]) -> list[str]:
    """The names of ``names`` that ``text`` mentions as whole words (``paired_test_tos`` is not in ``..._tosx``)."""
    return [name for name in names if re.search(rf"(?<![\w.]){re.escape(name)}(?!\w)", text)]


def _shown(value: Any) -> str:
    try:
        return json.dumps(value, sort_keys=True, default=str)[:80]
    except (TypeError, ValueError):
        return repr(value)[:80]


def spec_problems(options: Mapping[str, Any], values: Mapping[str, Any], *, role: str) -> list[str]:
    """One line for each variable of ``values`` whose value does not fit its option in ``options``, each naming the
    variable and the fix (``role``: the role's name, for ``ansible-doc``). A name that is no option is not checked
    here (the unknown-variable check reports it)."""
    spec = {name: option for name, option in options.items() if name in values and isinstance(option, Mapping)}
    fix = f"ansible-doc -t role {role} tells what it takes"
    problems: list[str] = []
    given: dict[str, Any] = {}
    for name, option in spec.items():
        value = values[name]
        if option.get("type", "str") in _TEXT_TYPES and isinstance(value, Mapping | list):
            problems.append(f"{name}={_shown(value)} must be a string; fix the variable ({fix})")
        else:
            given[name] = value
    checked = {name: spec[name] for name in given}
    result = ArgumentSpecValidator(checked).validate(given)
    for error in result.errors:
        text = str(getattr(error, "error_message", error))
        named = _names(text, given)
        where = f"{named[0]}={_shown(given[named[0]])}: " if len(named) == 1 else ""
        problems.append(f"{where}{text}; fix the variable ({fix})")
    return problems


def unmentioned(problems: Iterable[str], names: Iterable[str]) -> set[str]:
    """The names of ``names`` that no line of ``problems`` is about (a name already reported is not reported again
    by :func:`spec_problems`); a name only suggested (``did you mean ...?``) is not reported."""
    text = re.sub(r"\(did you mean [^)]*\)", "", "\n".join(problems))
    return set(names) - set(_names(text, names))
