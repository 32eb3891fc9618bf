# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Make ``ansible_collections.esxilab.iperf`` importable from a plain checkout.

The collection's code imports itself by its FQCN, as Ansible loads it. For pytest we expose
this checkout as ``<tmp>/ansible_collections/esxilab/iperf`` (a symlink outside the tree, so
test discovery never walks into it) and put ``<tmp>`` first on ``sys.path``.
"""

from __future__ import annotations

from tests.collection_path import ensure_collection_path

ensure_collection_path()
