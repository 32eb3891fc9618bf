# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The controller side of the role ``esxilab.iperf.paired_test``, by concern.

* ``preflight`` -- every setting of ``paired_test`` and ``report`` checked once per play, before any
  host is contacted; all problems at once, one line each, each naming the option and the fix.

Private package: not part of the collection's public API.
"""
