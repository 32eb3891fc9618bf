_alive() { kill -0 "$1" 2>/dev/null || return 1; [ -r "/proc/$1/stat" ] || return 0; _sl=; IFS= read -r _sl 2>/dev/null <"/proc/$1/stat"; case ${_sl##*") "} in Z*) return 1;; esac; return 0; }
for p in $(cat z.pid) $(cat evil.pid) $$; do _alive $p; echo "$p alive=$? :: $(cut -c1-30 /proc/$p/stat)"; done
