# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The paired_test per-test settings are declared once (``paired.settings.SETTINGS``): the role
files generated from them are current, every iperf_run option they name exists, and the plan
passes them to iperf_run under that option's name."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

import pytest
import yaml

from ansible_collections.esxilab.iperf.plugins.action.iperf_run import ARGUMENT_SPEC as IPERF_RUN_SPEC
from ansible_collections.esxilab.iperf.plugins.plugin_utils import iperf_run as _iperf_run
from ansible_collections.esxilab.iperf.plugins.plugin_utils.paired.checks import PairedTestError
from ansible_collections.esxilab.iperf.plugins.plugin_utils.paired.plan import build_plan
from ansible_collections.esxilab.iperf.plugins.plugin_utils.paired.settings import KINDS, SETTINGS
from hacking import generate_paired_test_settings as generator
from tests.collection_path import REPO

ROLE = REPO / "roles" / "paired_test"
RUN_TASKS = ROLE / "tasks" / "series.yml"


def test_generated_role_files_are_current() -> None:
    stale = [str(path.relative_to(REPO)) for path in generator.stale_files()]
    assert not stale, (
        f"{', '.join(stale)} not generated from plugins/plugin_utils/paired/settings.py: "
        "run `.venv/bin/python hacking/generate_paired_test_settings.py` and commit the result"
    )


def test_check_mode_of_the_generator_reports_a_stale_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    original = ROLE / "defaults" / "main.yml"
    copy = tmp_path / "main.yml"
    copy.write_text(original.read_text().replace("paired_test_duration: 10", "paired_test_duration: 11"))
    monkeypatch.setattr(generator, "PARTS", {copy: generator.PARTS[original]})
    monkeypatch.setattr(generator, "REPO", tmp_path)
    assert generator.main(["--check"]) == 1
    assert "paired_test_duration: 11" in copy.read_text()  # --check changes nothing
    assert generator.main([]) == 0
    assert "paired_test_duration: 10" in copy.read_text()
    assert generator.main(["--check"]) == 0


def test_generator_refuses_a_file_without_markers(tmp_path: Path) -> None:
    path = ROLE / "vars" / "main.yml"
    with pytest.raises(generator.MarkerError, match="needs one line '# BEGIN settings"):
        generator.render(path, "---\n__paired_test_defaults: {}\n")


def test_generated_files_say_what_the_declaration_says() -> None:
    defaults = yaml.safe_load((ROLE / "defaults" / "main.yml").read_text())
    internal = yaml.safe_load((ROLE / "vars" / "main.yml").read_text())["__paired_test_defaults"]
    options = yaml.safe_load((ROLE / "meta" / "argument_specs.yml").read_text())["argument_specs"]["main"]["options"]
    assert list(internal) == list(SETTINGS)
    per_test = ", ".join(f"C({name})" for name in SETTINGS)
    assert f"The per-test settings are {per_test}." in options["paired_test_tests"]["description"]
    assert set(options["paired_test_tests"]["options"]) == {"name", "pairs"}  # each setting is documented once
    for name, setting in SETTINGS.items():
        kind, elements = KINDS[setting.kind]
        assert defaults[f"paired_test_{name}"] == setting.default, name
        role_variable = options[f"paired_test_{name}"]
        assert role_variable["type"] == kind, name
        assert role_variable.get("elements") == elements, name
        assert role_variable.get("choices", []) == list(setting.choices), name
        description = role_variable["description"]
        assert (description if isinstance(description, list) else [description]) == list(setting.description), name


def test_every_fed_option_is_an_iperf_run_option_of_that_mode() -> None:
    for name, setting in SETTINGS.items():
        modes: tuple[tuple[Literal["server", "client"], str | None], ...] = (
            ("server", setting.server),
            ("client", setting.client),
        )
        for mode, option in modes:
            if option is not None:
                assert option in IPERF_RUN_SPEC, f"{name} feeds {option}, which iperf_run does not have"
                assert option in _iperf_run.APPLIES[mode], f"{name} feeds {option}, not used with mode={mode}"


def test_run_tasks_name_no_setting() -> None:
    """The run's task hands over the whole run (its iperf_server / iperf_client), not one line per option."""
    parts = [t for t in yaml.safe_load(RUN_TASKS.read_text()) if "run" in t.get("esxilab.iperf.paired_test_host", {})]
    fed = {s.server for s in SETTINGS.values()} | {s.client for s in SETTINGS.values()}
    assert len(parts) == 1
    for task in parts:
        options = task["esxilab.iperf.paired_test_host"]
        assert options["run"] == "{{ __paired_test_run }}"
        assert not set(options) & fed, f"series.yml still passes {sorted(set(options) & fed)} itself"


def _run(**settings: Any) -> dict[str, Any]:
    pairs = [{"server": "h1", "address": "198.18.0.1", "client": "h2"}]
    run: dict[str, Any] = build_plan([{"name": "t", "pairs": pairs, **settings}])["runs"][0]
    return run


def test_plan_gives_iperf_run_arguments_by_option_name() -> None:
    run = _run(
        window="256K",
        client_timeout=45,
        server_extra_args=["-V"],
        client_extra_args=["-4"],
        interval=0,
        direction="reverse",
    )
    assert run["iperf_server"] == {
        "tool": "iperf3",
        "protocol": "tcp",
        "window": "256K",
        "server_timeout": run["server_timeout"],
        "extra_args": ["-V"],
    }
    assert run["iperf_client"] == {
        "duration": 10,
        "streams": 1,
        "tool": "iperf3",
        "protocol": "tcp",
        "interval": 0.0,
        "window": "256K",
        "zerocopy": False,
        "timeout": 45.0,
        "extra_args": ["-4"],
        "reverse": True,
    }


def test_unset_settings_are_not_passed_and_omit_zero_is_unset() -> None:
    client = _run(omit=0)["iperf_client"]
    assert "omit" not in client  # iperf2 has no -O; 0 is iperf3's own default
    for option in ("bandwidth", "length", "mss", "connect_timeout", "timeout", "interval"):
        assert option not in client, option
    assert _run(omit=2)["iperf_client"] == {**client, "omit": 2}


# -- the worked example of "how to add an iperf option": tos (-S) ----------------------------

IPERF3 = _iperf_run.Binary("/usr/bin/iperf3", "iperf3", "3.12")
IPERF2 = _iperf_run.Binary("/usr/bin/iperf", "iperf2", "2.1.8")


def _client_params(run: dict[str, Any], **per_pair: Any) -> dict[str, Any]:
    """The client task's arguments after validation: the spec's defaults, the plan's
    iperf_client (module_defaults), then the per-pair ones (inline)."""
    client: dict[str, Any] = run["iperf_client"]
    defaults = {name: spec.get("default") for name, spec in IPERF_RUN_SPEC.items()}
    return {**defaults, **client, "mode": "client", "server": "198.18.0.1", "port": 5201, **per_pair}


@pytest.mark.parametrize(("binary", "tool"), [(IPERF3, "iperf3"), (IPERF2, "iperf2")])
def test_tos_goes_from_a_test_setting_to_the_command_line(binary: _iperf_run.Binary, tool: str) -> None:
    run = _run(tos=184, tool=tool)
    assert run["iperf_client"] == {**_run(tool=tool)["iperf_client"], "tos": 184}
    params = _client_params(run)
    assert _iperf_run.validate_params(params, IPERF_RUN_SPEC) == "client"
    argv = _iperf_run.build_client_argv(binary, params, 5201)
    assert argv[argv.index("-S") + 1] == "184"
    assert "tos" not in run["iperf_server"]


def test_tos_is_checked_in_the_plan_and_in_iperf_run() -> None:
    with pytest.raises(PairedTestError, match="tos must be at most 255, got 256"):
        _run(tos=256)
    params = _client_params(_run(), tos=-1)
    with pytest.raises(_iperf_run.IperfRunError, match="tos must be between 0 and 255"):
        _iperf_run.validate_params(params, IPERF_RUN_SPEC)
    server = {name: spec.get("default") for name, spec in IPERF_RUN_SPEC.items()}
    with pytest.raises(_iperf_run.IperfRunError, match=r"not used with mode=server: tos \(mode=client\)"):
        _iperf_run.validate_params({**server, "mode": "server", "tos": 16}, IPERF_RUN_SPEC)


def test_tos_unset_is_not_passed() -> None:
    assert "tos" not in _run()["iperf_client"]
    assert "-S" not in _iperf_run.build_client_argv(IPERF3, _client_params(_run()), 5201)
