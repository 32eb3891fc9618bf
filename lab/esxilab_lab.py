# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Local lab: N Linux network namespaces with real OpenSSH servers on a Linux bridge.

The command ``lab/esxilab_lab.py up|status|down``; the code is the package ``lab/nslab/`` next to
this file (see its ``__init__``). Stdlib only; python3 >= 3.11; must run as root.
"""

from __future__ import annotations

import sys
from pathlib import Path

# The package next to this file, also under ``python3 -I``/``-P`` or PYTHONSAFEPATH (no script dir on sys.path).
_HERE = str(Path(__file__).resolve().parent)
if _HERE not in sys.path:
    sys.path.insert(0, _HERE)

from nslab.cli import main  # noqa: E402

if __name__ == "__main__":
    sys.exit(main())
