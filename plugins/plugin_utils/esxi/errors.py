# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Errors of the ESXi backend, and reading the error text esxcli prints.

``EsxiError`` carries ``message``, ``fix`` and ``raw``; every other error here is one of its
kinds. :func:`find_esxcli_failure` / :func:`failure_from_output` turn ``[ErrorClass]`` blocks (or a
bare message with a non-zero exit code) into an :class:`EsxcliFailure`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass


class EsxiError(Exception):
    """Base class: ``message`` says what is wrong, ``fix`` what the user can do about it."""

    def __init__(self, message: str, *, fix: str | None = None, raw: str | None = None) -> None:
        super().__init__(message if not fix else f"{message} Fix: {fix}")
        self.message = message
        self.fix = fix
        self.raw = raw


class EsxiParseError(EsxiError):
    """The text is not the layout this parser knows; ``raw`` keeps it."""


class PlanError(EsxiError):
    """The options cannot be planned for this host (missing input, impossible combination)."""


class ExecPolicyError(PlanError):
    """execInstalledOnly would stop the copied iperf binary from running."""


class FirewallError(PlanError):
    """A firewall change cannot be made as asked."""


@dataclass(frozen=True, slots=True)
class EsxcliFailure:
    """An error esxcli printed: ``[ErrorClass]`` plus its message lines, or a bare message."""

    error_class: str | None
    message: str
    raw: str


class VibInstallError(EsxiError):
    """``esxcli software vib install`` (or profile update) refused; ``option`` names the fix."""

    def __init__(self, failure: EsxcliFailure, *, fix: str, option: str | None = None) -> None:
        label = f"[{failure.error_class}] " if failure.error_class else ""
        super().__init__(f"VIB installation failed: {label}{failure.message}", fix=fix, raw=failure.raw)
        self.error_class = failure.error_class
        self.option = option
        self.failure = failure


_BRACKET_RE = re.compile(r"\[(?P<cls>[A-Z][A-Za-z]*(?:Error|Exception))\]")
_NOISE = ("Please refer to the log file for more details.",)


def find_esxcli_failure(text: str) -> EsxcliFailure | None:
    """The ``[SomethingError]`` esxcli printed, with its message, or ``None``.

    Recorded shapes: the class alone on a line followed by the message (``vib install``,
    ``profile update``), the message followed by the class (``advanced set`` on 7.0.3:
    ``Unable to find option execInstalledOnly`` / `` [NoMatchError]``) and the class inside a
    sentence (a VxRail LCM message quoting ``[DependencyError] VIB ... requires ...``).
    Prompt lines, ``> `` continuation lines and "Please refer to the log file" are dropped.
    """
    lines = [ln for ln in text.splitlines() if ln.strip()]
    for index, line in enumerate(lines):
        m = _BRACKET_RE.search(line)
        if not m:
            continue
        rest = line[m.end() :].strip()
        if rest:
            detail = [rest]
        else:
            detail = [ln.strip() for ln in lines[index + 1 :] if not _is_prompt(ln)]
            if not detail:
                detail = [ln.strip() for ln in lines[:index] if not _is_prompt(ln)]
        detail = [d for d in detail if d not in _NOISE]
        message = " ".join(d for d in (_strip_noise(d) for d in detail) if d)
        return EsxcliFailure(error_class=m.group("cls"), message=message, raw=text)
    return None


def _strip_noise(line: str) -> str:
    for noise in _NOISE:
        line = line.replace(noise, "")
    return line.strip()


def _is_prompt(line: str) -> bool:
    s = line.strip()
    return s.startswith("[root@") or s.startswith("> ") or s.startswith("~ #")


def failure_from_output(text: str, rc: int) -> EsxcliFailure | None:
    """:func:`find_esxcli_failure`, or the whole text as message when ``rc`` is non-zero.

    Some esxcli errors carry no class, e.g. (8.0 U2) ``Invalid operation requested: Can not
    change allowed ip list this ruleset, it is owned by system service.``
    """
    found = find_esxcli_failure(text)
    if found is not None:
        return found
    if rc != 0:
        message = " ".join(ln.strip() for ln in text.splitlines() if ln.strip() and not _is_prompt(ln))
        return EsxcliFailure(error_class=None, message=message or f"exit status {rc}", raw=text)
    return None
