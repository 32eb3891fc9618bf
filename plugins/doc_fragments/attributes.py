# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Shared ``attributes`` documentation for the modules of esxilab.iperf.

Use ``esxilab.iperf.attributes`` (the descriptions) together with the variants that state
the support level, e.g. ``esxilab.iperf.attributes.info_module`` for a module that only reads.
Private to this collection: it may change in any release.
"""

from __future__ import annotations


class ModuleDocFragment:
    """Attribute descriptions and common support levels."""

    # The descriptions; every module uses this one plus the variants below. When fragments are
    # merged the first one listed wins per key, so this one sets no support level.
    DOCUMENTATION = r"""
options: {}
attributes:
  check_mode:
    description: Can run in check mode and return the changed status prediction without modifying the target.
  diff_mode:
    description: Will return details on what has changed (or possibly needs changing in check mode), when in diff mode.
  platform:
    description: Target OS/families that can be operated against.
"""

    # A module that reads and never changes anything.
    INFO_MODULE = r"""
options: {}
attributes:
  check_mode:
    support: full
    details:
      - This action only reads, so it runs unchanged in check mode and reports the real data.
  diff_mode:
    support: none
    details:
      - This action does not modify state; there is nothing to diff.
"""

    # A module that returns ansible_facts.
    FACTS = r"""
options: {}
attributes:
  facts:
    description: Action returns an C(ansible_facts) dictionary that will update existing host facts.
    support: full
"""

    # A module whose work is done by an action plugin on the controller.
    ACTION = r"""
options: {}
attributes:
  action:
    description:
      - Indicates this has a corresponding action plugin so some parts of the options can be executed on the controller.
    support: full
  async:
    description: Supports being used with the C(async) keyword.
    support: none
"""

    # Runs only POSIX sh commands on the host: no Python is needed there.
    PLATFORM_POSIX_RAW = r"""
options: {}
attributes:
  platform:
    support: full
    platforms: posix
    details:
      - Runs plain POSIX C(sh) commands over the connection (busybox C(ash) on ESXi is enough).
      - No Python is needed on the host.
"""
