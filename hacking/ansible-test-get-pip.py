# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Stand-in for the get-pip.py that ``ansible-test`` downloads to bootstrap pip in its venvs.

The download comes from a host outside the package registries, which this workplace cannot
reach. ansible-test runs this file with the arguments it would give get-pip.py (pip options
and packages such as ``pip==24.2``, plus get-pip's own ``--no-setuptools``/``--no-wheel``).
We bootstrap pip with the standard library's ``ensurepip`` and then let pip install the exact
packages ansible-test asked for, from the package registry.
"""

import subprocess
import sys

GET_PIP_ONLY = {"--no-setuptools", "--no-wheel"}

subprocess.check_call([sys.executable, "-m", "ensurepip", "--default-pip"])
args = [a for a in sys.argv[1:] if a not in GET_PIP_ONLY]
subprocess.check_call([sys.executable, "-m", "pip", "install", "--quiet", *args])
