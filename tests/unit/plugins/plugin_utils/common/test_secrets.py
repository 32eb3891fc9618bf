# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The one URL masker: every form of a libpq password and a vib_source token, checked against libpq's own parser."""

from __future__ import annotations

import pytest

from ansible_collections.esxilab.iperf.plugins.plugin_utils.common.secrets import (
    MASK,
    mask_text,
    mask_url,
    redact,
    url_secrets,
)

SECRET = "Zq9secret"

# Every way a PostgreSQL password reaches the URL: user:pass@ with raw or percent-encoded #, /, ?, : and @,
# the query's password, sslpassword and oauth_client_secret (name percent-encoded too), a raw '#' in a value.
PG_FORMS = [
    (f"postgresql://u:{SECRET}@db.example:5432/h", "postgresql://u:***@db.example:5432/h"),
    (f"postgresql://u:{SECRET}#x@db.example/h", "postgresql://u:***@db.example/h"),
    (f"postgresql://u:{SECRET}?x@db.example/h", "postgresql://u:***@db.example/h"),
    (f"postgresql://u:{SECRET}/x@db.example/h", "postgresql://u:***@db.example/h"),
    (f"postgresql://u:{SECRET}:x@db.example/h", "postgresql://u:***@db.example/h"),
    (f"postgresql://u:{SECRET}%23%2F%3F%40@db.example/h", "postgresql://u:***@db.example/h"),
    (f"postgres://u@db.example/h?password={SECRET}", "postgres://u@db.example/h?password=***"),
    (f"postgresql://u@db.example/h?sslmode=require&sslpassword={SECRET}#x", "postgresql://u@db.example/h?sslmode=require&sslpassword=***"),
    (
        f"postgresql://u@db.example/h?oauth_client_secret={SECRET}&sslmode=verify-full",
        "postgresql://u@db.example/h?oauth_client_secret=***&sslmode=verify-full",
    ),
    (f"postgresql://u@db.example/h?pass%77ord={SECRET}", "postgresql://u@db.example/h?pass%77ord=***"),
    (f"postgresql://u@db.example/h?PASSWORD={SECRET}", "postgresql://u@db.example/h?PASSWORD=***"),
    (f"postgresql:///h?host=/run/postgresql&password={SECRET}", "postgresql:///h?host=/run/postgresql&password=***"),
]  # fmt: skip


@pytest.mark.parametrize(("url", "shown"), PG_FORMS)
def test_every_form_of_a_postgresql_password_is_masked(url: str, shown: str) -> None:
    assert mask_url(url) == shown
    assert SECRET not in mask_url(url)
    assert any(SECRET in s for s in url_secrets(url))
    echoed = f"could not connect to {url}: bad password {' or '.join(url_secrets(url))}"
    assert SECRET not in mask_text(echoed, url_secrets(url))


@pytest.mark.parametrize(("url", "_shown"), PG_FORMS)
def test_what_libpq_reads_as_a_secret_is_never_shown(url: str, _shown: str) -> None:
    conninfo = pytest.importorskip("psycopg.conninfo")
    try:
        params = conninfo.conninfo_to_dict(url)
    except Exception:  # libpq refuses it: history.parse_target and history_pg refuse it too, masked
        return
    for key in ("password", "sslpassword", "oauth_client_secret"):
        value = params.get(key)
        if value:
            assert value not in mask_url(url), key
            assert value not in mask_text(f"libpq: {value}", url_secrets(url))


@pytest.mark.parametrize(
    ("url", "shown"),
    [
        ("https://depot.example/iperf.vib?token=abcdef", "https://depot.example/iperf.vib?token=***"),
        ("https://lab:pw#x@depot.example/a.zip?sig=1234&se=2027", "https://lab:***@depot.example/a.zip?sig=***&se=***"),
        ("https://depot.example/iperf.vib#access_token=abcdef", "https://depot.example/iperf.vib#***"),
        ("http://depot.example/iperf-2.0.5-1.x86_64.vib", "http://depot.example/iperf-2.0.5-1.x86_64.vib"),
        ("/vmfs/volumes/datastore1/iperf.zip", "/vmfs/volumes/datastore1/iperf.zip"),
        ("host=db password='a b c' user=u", "host=db password=*** user=u"),
        ("sqlite:///reports/history.sqlite", "sqlite:///reports/history.sqlite"),
    ],
)
def test_vib_source_tokens_and_other_forms(url: str, shown: str) -> None:
    assert mask_url(url) == shown


def test_mask_text_masks_urls_in_text_and_known_secrets_anywhere() -> None:
    url = "https://depot.example/x.vib?token=t0ken-value"
    text = f"esxcli: cannot fetch '{url}' (token t0ken-value refused)"
    assert mask_text(text, url_secrets(url)) == f"esxcli: cannot fetch '{mask_url(url)}' (token {MASK} refused)"
    # a short value is masked where it stands in the URL, never in the words around it
    assert url_secrets("https://h/x?a=1") == []
    assert mask_text("a=1 at https://h/x?a=1") == "a=1 at https://h/x?a=***"


def test_redact_walks_mappings_and_lists() -> None:
    value = {"cmd": ["esxcli", "-v", "ftp://u:p4ss@h/x"], "n": 3, "msg": "p4ss was wrong"}
    assert redact(value, url_secrets("ftp://u:p4ss@h/x")) == {
        "cmd": ["esxcli", "-v", "ftp://u:***@h/x"],
        "n": 3,
        "msg": "*** was wrong",
    }
