# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The argument spec of an action plugin, read from its module's ``DOCUMENTATION``.

Every action plugin of the collection validates its task arguments against the ``options``
of the module file of the same name, so an option is declared once: in the documentation
that ``ansible-doc`` shows. ``argument_spec()`` converts the documented options (``type``,
``elements``, ``choices``, ``default``, ``required``, ``aliases``, ``no_log``, nested
``suboptions``) into the dictionary ``ActionBase.validate_argument_spec`` takes, the way
``ansible.utils``' ``fact_diff`` action does. Relations between options
(``mutually_exclusive``, ``required_if``) stay small declared lists next to the backend.

Options this collection's own documentation fragments add (``extends_documentation_fragment:
esxilab.iperf.NAME[.VAR]``, from ``plugins/doc_fragments/NAME.py``) count as documented options
too; fragments of other collections add none. Plain data in, plain data out; no Ansible import,
no I/O beyond importing those fragment modules.

Private module: not part of the collection's public API.
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from typing import Any

import yaml

__all__ = ["SAFE_LOADER", "DocSpecError", "argument_spec"]

_OWN_FRAGMENT = "esxilab.iperf."
_FRAGMENTS = "ansible_collections.esxilab.iperf.plugins.doc_fragments."

# libyaml's loader where PyYAML has it (the documentation of every action is read when it is imported, in the
# play's process: about ten times faster than the pure-Python one), else the pure-Python one; both safe. The role files
# the preflight reads use it too (common.role_vars).
SAFE_LOADER: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

# The option keys that carry over to the argument spec unchanged.
_COPIED = ("elements", "default", "required", "aliases", "no_log")


class DocSpecError(ValueError):
    """The documentation cannot be turned into an argument spec; the message names the option."""


def _convert(options: Mapping[str, Any], where: str) -> dict[str, dict[str, Any]]:
    spec: dict[str, dict[str, Any]] = {}
    for name, option in options.items():
        if not isinstance(option, Mapping):
            raise DocSpecError(f"{where}{name}: the documented option is not a mapping")
        entry: dict[str, Any] = {"type": option.get("type", "str")}
        if "choices" in option:
            entry["choices"] = list(option["choices"])  # a list, or a mapping choice -> description
        for key in _COPIED:
            if key in option:
                entry[key] = option[key]
        if entry.get("required") is False:
            del entry["required"]
        if "suboptions" in option:
            entry["options"] = _convert(option["suboptions"], f"{where}{name}.")
        spec[str(name)] = entry
    return spec


def argument_spec(documentation: str, *, validate_as: Mapping[str, str] | None = None) -> dict[str, dict[str, Any]]:
    """The argument spec of the options documented in ``documentation`` (a module's YAML).

    ``validate_as`` maps option names to the type the action validates them as when it checks
    them further by hand (for example ``raw`` for a list it reads itself to give a clearer
    message); the option's ``elements`` are dropped with it. Naming an undocumented option is
    an error, so an override cannot outlive its option.
    """
    doc = yaml.load(documentation, Loader=SAFE_LOADER)  # a safe loader
    if not isinstance(doc, Mapping) or not isinstance(doc.get("options") or {}, Mapping):
        raise DocSpecError("the DOCUMENTATION is not a YAML mapping with an options mapping")
    spec: dict[str, dict[str, Any]] = {}
    for fragment in doc.get("extends_documentation_fragment") or []:
        spec.update(_convert(_fragment_options(str(fragment)), f"{fragment}: "))
    spec.update(_convert(doc.get("options") or {}, ""))
    for name, kind in (validate_as or {}).items():
        if name not in spec:
            raise DocSpecError(f"validate_as names {name}, which the documentation does not list")
        spec[name]["type"] = kind
        spec[name].pop("elements", None)
    return spec


def _fragment_options(fragment: str) -> Mapping[str, Any]:
    """The options a documentation fragment of this collection adds (none for other collections')."""
    if not fragment.startswith(_OWN_FRAGMENT):
        return {}
    name, _dot, variable = fragment[len(_OWN_FRAGMENT) :].partition(".")
    try:
        holder = importlib.import_module(_FRAGMENTS + name).ModuleDocFragment
    except (ImportError, AttributeError) as exc:
        raise DocSpecError(f"documentation fragment {fragment} cannot be loaded: {exc}") from exc
    text = getattr(holder, variable.upper() or "DOCUMENTATION", None)
    if not isinstance(text, str):
        raise DocSpecError(f"documentation fragment {fragment} has no {variable.upper() or 'DOCUMENTATION'}")
    loaded = yaml.load(text, Loader=SAFE_LOADER)  # a safe loader
    options = loaded.get("options") if isinstance(loaded, Mapping) else None
    if not isinstance(options, Mapping):
        return {}
    return options
