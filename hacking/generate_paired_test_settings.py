# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Write the per-test settings parts of the ``paired_test`` role from their one declaration.

The declaration is ``SETTINGS`` in ``plugins/plugin_utils/paired/settings.py``. This script
replaces what stands between the ``BEGIN``/``END`` marker comments in

* ``roles/paired_test/defaults/main.yml`` -- the role variables ``paired_test_<name>``;
* ``roles/paired_test/vars/main.yml`` -- ``__paired_test_defaults`` (what the plan filter takes);
* ``roles/paired_test/meta/argument_specs.yml`` -- the per-pair options of ``paired_test_tests[].pairs``
  (from ``PAIR_OPTIONS``), the names of the per-test settings (a paragraph of the description of
  ``paired_test_tests``) and the role variables.

Everything outside the markers is kept as written. Usage (from the repository root)::

    .venv/bin/python hacking/generate_paired_test_settings.py          # rewrite the files
    .venv/bin/python hacking/generate_paired_test_settings.py --check  # exit 1 when one is not current
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import yaml

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
from tests.collection_path import ensure_collection_path  # noqa: E402

ensure_collection_path()
from ansible_collections.esxilab.iperf.plugins.plugin_utils.paired.settings import (  # noqa: E402
    KINDS,
    PAIR_OPTIONS,
    SETTINGS,
)

ROLE = REPO / "roles" / "paired_test"
SCRIPT = "hacking/generate_paired_test_settings.py"
SOURCE = "plugins/plugin_utils/paired/settings.py"
WIDTH = 120


# A continuation line of a folded scalar must not start with these (comment, indicators).
_NO_BREAK_BEFORE = tuple("#-?:,[]{}&*!|>'\"%@`")


def _scalar(value: Any) -> str:
    """``value`` as one line of YAML (flow style: ``[]``, ``{}``, quoted only when needed)."""
    text: str = yaml.safe_dump(value, default_flow_style=True, width=10_000, allow_unicode=True)
    return text.removesuffix("\n").removesuffix("\n...")


def _folded(first: str, paragraph: str, indent: int) -> list[str]:
    """``first`` + ``paragraph`` as a scalar, folded at spaces into lines of at most WIDTH
    columns; continuation lines at ``indent``."""
    words = _scalar(paragraph).split(" ")
    lines = [first + words[0]]
    for word in words[1:]:
        if len(lines[-1]) + 1 + len(word) > WIDTH and not word.startswith(_NO_BREAK_BEFORE) and word:
            lines.append(" " * indent + word)
        else:
            lines[-1] += " " + word
    return lines


def _option(key: str, description: Sequence[str], kind: str, extra: Mapping[str, Any], indent: int) -> list[str]:
    """One option of ``meta/argument_specs.yml`` at ``indent`` (``extra``: its keys after ``type`` and
    ``elements``), checked to read back as meant."""
    pad = " " * (indent + 2)
    lines = [f"{' ' * indent}{key}:"]
    if len(description) == 1:
        lines += _folded(f"{pad}description: ", description[0], indent + 4)
    else:
        lines.append(f"{pad}description:")
        for paragraph in description:
            lines += _folded(f"{pad}  - ", paragraph, indent + 6)
    spec_type, elements = KINDS[kind]
    expected: dict[str, Any] = {"description": description[0] if len(description) == 1 else list(description)}
    expected["type"] = spec_type
    if elements:
        expected["elements"] = elements
    expected.update(extra)
    lines += [f"{pad}{name}: {_scalar(value)}" for name, value in expected.items() if name != "description"]
    if yaml.safe_load("\n".join(lines)) != {key: expected}:  # the folding changed a value
        raise ValueError(f"{key}: the generated YAML does not read back as the declaration: {lines}")
    return lines


def pair_options(indent: int) -> list[str]:
    """The options of a pair (``paired_test_tests[].pairs[]``) in ``meta/argument_specs.yml``, from ``PAIR_OPTIONS``."""
    lines: list[str] = []
    for key, option in PAIR_OPTIONS.items():
        extra = {"required": True} if option.required else {}
        lines += _option(key, option.description, option.kind, extra, indent)
    return lines


def role_variables(indent: int) -> list[str]:
    """The role variables ``paired_test_<name>`` as ``meta/argument_specs.yml`` options."""
    lines: list[str] = []
    for name, setting in SETTINGS.items():
        extra: dict[str, Any] = {"choices": list(setting.choices)} if setting.choices else {}
        if setting.default is not None:
            extra["default"] = setting.default
        lines += _option(f"paired_test_{name}", setting.description, setting.kind, extra, indent)
    return lines


def test_settings_paragraph(indent: int) -> list[str]:
    """The per-test settings of ``paired_test_tests``: one paragraph of its description in ``meta/argument_specs.yml``
    naming them (each is documented once, as its role variable: a copy of every setting as a suboption would be
    templated and validated again on every host of the play by Ansible's argument check)."""
    names = ", ".join(f"C({name})" for name in SETTINGS)
    lines = _folded(f"{' ' * indent}- ", f"The per-test settings are {names}.", indent + 2)
    if yaml.safe_load("\n".join(line[indent:] for line in lines)) != [f"The per-test settings are {names}."]:
        raise ValueError(f"the per-test settings: the generated YAML does not read back as meant: {lines}")
    return lines


def defaults(indent: int) -> list[str]:
    """``defaults/main.yml``: ``paired_test_<name>: <built-in default>``."""
    return [f"{' ' * indent}paired_test_{name}: {_scalar(s.default)}" for name, s in SETTINGS.items()]


def internal(indent: int) -> list[str]:
    """``vars/main.yml``: ``<name>: "{{ paired_test_<name> }}"`` for the plan filter."""
    return [f'{" " * indent}{name}: "{{{{ paired_test_{name} }}}}"' for name in SETTINGS]


def _begin(part: str) -> str:
    return f"# BEGIN {part}: generated by {SCRIPT} - do not edit"


def _end(part: str) -> str:
    return f"# END {part}"


# file -> the generated parts it holds: (marker name, lines of the part at the marker's indent)
PARTS: dict[Path, list[tuple[str, Callable[[int], list[str]]]]] = {
    ROLE / "defaults" / "main.yml": [("settings", defaults)],
    ROLE / "vars" / "main.yml": [("settings", internal)],
    ROLE / "meta" / "argument_specs.yml": [
        ("per-pair options", pair_options),
        ("per-test options", test_settings_paragraph),
        ("settings", role_variables),
    ],
}


class MarkerError(ValueError):
    """A file lacks a generated part's markers (or has them twice)."""


def render(path: Path, text: str) -> str:
    """``text`` (the content of ``path``) with every generated part of it rewritten."""
    lines = text.splitlines()
    for part, make in PARTS[path]:
        begin = [i for i, line in enumerate(lines) if line.strip() == _begin(part)]
        end = [i for i, line in enumerate(lines) if line.strip() == _end(part)]
        if len(begin) != 1 or len(end) != 1 or end[0] < begin[0]:
            raise MarkerError(
                f"{path.relative_to(REPO)}: needs one line '{_begin(part)}' and after it one line '{_end(part)}'"
            )
        indent = len(lines[begin[0]]) - len(lines[begin[0]].lstrip())
        lines[begin[0] + 1 : end[0]] = make(indent)
    return "\n".join(lines) + "\n"


def stale_files() -> list[Path]:
    """The files whose generated parts differ from what ``SETTINGS`` makes."""
    return [path for path in PARTS if render(path, path.read_text()) != path.read_text()]


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--check", action="store_true", help="change nothing; exit 1 when a file is not current")
    args = parser.parse_args(argv)
    stale = stale_files()
    if args.check:
        for path in stale:
            print(f"{path.relative_to(REPO)} is not current; run {SCRIPT}", file=sys.stderr)
        return 1 if stale else 0
    for path in stale:
        path.write_text(render(path, path.read_text()))
        print(f"rewrote {path.relative_to(REPO)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
