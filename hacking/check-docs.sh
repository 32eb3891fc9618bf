#!/usr/bin/env bash
# Render the documentation of every plugin of the installed collection with ansible-doc.
# Fails when a plugin's docs do not render, when ansible-doc writes anything on stderr (for
# example "[WARNING]: Skipping file ..." for a plugin it could not load, which would otherwise
# just drop out of the listing) other than the deprecations meta/runtime.yml declares, or when the
# collection lists no plugin at all.
set -euo pipefail

errfile=$(mktemp)
keptfile=$(mktemp)
trap 'rm -f "$errfile" "$keptfile"' EXIT

# The deprecations the collection itself declares (meta/runtime.yml plugin_routing): ansible-doc
# warns about each on stderr, as it should; those warnings - and only those - are expected here.
deprecated=$(python3 -c 'import sys, yaml
routing = yaml.safe_load(open(sys.argv[1])).get("plugin_routing") or {}
print("|".join(sorted({n for kind in routing.values() for n, v in kind.items() if "deprecation" in v})))' meta/runtime.yml)
expected='^\[WARNING\]: Deprecation warnings can be disabled '
if [ -n "$deprecated" ]; then
  expected="$expected|^\[DEPRECATION WARNING\]: (Filter \")?esxilab\.iperf\.($deprecated)\"? has been deprecated\. "
fi

# A Python warning raised inside a dependency (a file under site-packages or dist-packages, and the
# source line Python prints under it) is the dependency's notice, not ours: shown, never failing.
# requirements.lock keeps the set that prints none (tests/unit/test_locks.py); what this script
# fails on is what the collection's own plugins print.
third_party_warning='^[^ ]*/(site|dist)-packages/[^ ]*:[0-9]+: [A-Za-z]*Warning: '

# ansible-doc with the given arguments; stdout passes through. A non-zero exit or any stderr
# output other than the expected deprecations and third-party Python warnings stops the script
# (also when called inside $(...): set -e sees the failed assignment).
doc() {
  local rc=0
  ansible-doc "$@" 2>"$errfile" || rc=$?
  awk -v tp="$third_party_warning" '
    skip && /^[ \t]/ { skip = 0; next }
    { skip = 0 }
    $0 ~ tp { print "note: a dependency warned (not failing): " $0 > "/dev/stderr"; skip = 1; next }
    { print }' "$errfile" | grep -Ev "$expected" >"$keptfile" || true
  if [ "$rc" -ne 0 ] || [ -s "$keptfile" ]; then
    {
      echo "FAILED: ansible-doc $* (exit $rc) wrote on stderr:"
      cat "$errfile"
    } >&2
    exit 1
  fi
}

count=0
for type in module filter callback; do
  listing=$(doc -t "$type" -l esxilab.iperf --json)
  names_text=$(python3 -c 'import json,sys; print("\n".join(sorted(json.load(sys.stdin))))' <<<"$listing")
  mapfile -t names <<<"$names_text"
  for name in "${names[@]}"; do
    [ -n "$name" ] || continue
    out=$(doc -t "$type" "$name")
    grep -q "OPTIONS\|EXAMPLES" <<<"$out" || { echo "ansible-doc -t $type $name: no OPTIONS/EXAMPLES" >&2; exit 1; }
    echo "ansible-doc -t $type $name: ok ($(wc -l <<<"$out") lines)"
    count=$((count + 1))
  done
done
roles=()
for dir in roles/*/; do
  [ -d "$dir" ] || continue
  dir=${dir%/}
  roles+=("${dir#roles/}")
done
for role in "${roles[@]}"; do
  doc -t role "esxilab.iperf.$role" >/dev/null
  echo "ansible-doc -t role esxilab.iperf.$role: ok"
  count=$((count + 1))
done
[ "$count" -gt 0 ] || { echo "no plugin documentation found for esxilab.iperf" >&2; exit 1; }
echo "documentation renders for $count plugins/roles"
