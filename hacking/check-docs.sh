#!/usr/bin/env bash
# Render the documentation of every plugin of the installed collection with ansible-doc.
# Fails when a plugin's docs do not render, or when the collection lists no plugin at all.
set -euo pipefail
count=0
for type in module filter; do
  mapfile -t names < <(ansible-doc -t "$type" -l esxilab.iperf --json | python3 -c 'import json,sys; print("\n".join(sorted(json.load(sys.stdin))))')
  for name in "${names[@]}"; do
    [ -n "$name" ] || continue
    out=$(ansible-doc -t "$type" "$name")
    grep -q "OPTIONS\|EXAMPLES" <<<"$out" || { echo "ansible-doc -t $type $name: no OPTIONS/EXAMPLES" >&2; exit 1; }
    echo "ansible-doc -t $type $name: ok ($(wc -l <<<"$out") lines)"
    count=$((count + 1))
  done
done
mapfile -t roles < <(cd roles 2>/dev/null && ls -d */ 2>/dev/null | tr -d / || true)
for role in "${roles[@]}"; do
  [ -n "$role" ] || continue
  ansible-doc -t role "esxilab.iperf.$role" >/dev/null
  echo "ansible-doc -t role esxilab.iperf.$role: ok"
  count=$((count + 1))
done
[ "$count" -gt 0 ] || { echo "no plugin documentation found for esxilab.iperf" >&2; exit 1; }
echo "documentation renders for $count plugins/roles"
