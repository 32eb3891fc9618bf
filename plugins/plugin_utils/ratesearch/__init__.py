# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The zero-loss rate search (issue 25): per frame size, the highest UDP rate with loss at most a threshold.

* :mod:`.frames` -- frame size <-> UDP payload, packets/s and bit rates (one place for the arithmetic);
* :mod:`.settings` -- the search's settings, checked once, every problem at once, before anything runs;
* :mod:`.search` -- the bisection over the offered rate (pure: which rate to try next, when to stop);
* :mod:`.trial` -- one trial's verdict from what ``iperf_run`` returned (the tool's numbers only);
* :mod:`.run` -- the search of every frame size, over a ``trial`` callable (the action lends ``iperf_run``);
* :mod:`.output` -- the result document, CSV, Markdown and plot specifications (``report/plots.py`` draws them).

Plain data; no Ansible import, no I/O except :func:`.output.write` (the report directory, with
``report/files.py``). Used by the action plugin ``esxilab.iperf.rate_search``.

Private package: not part of the collection's public API.
"""
