# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Local lab: N Linux network namespaces with real OpenSSH servers on a Linux bridge.

The command ``lab/esxilab_lab.py up|status|down``; the code is the package ``lab/nslab/`` (see its
``__init__``). Stdlib only; python3 >= 3.11; must run as root.
"""

from __future__ import annotations

import sys

from nslab.cli import main  # lab/ is sys.path[0] when this file runs as a script

if __name__ == "__main__":
    sys.exit(main())
