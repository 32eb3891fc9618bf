# shellcheck shell=sh
# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
#
# Shared helpers of the ESXi stand-in (sourced by esxcli, vmware, vmkping, esxi-standin).
# POSIX sh; runs under dash and busybox ash. TEST TOOL ONLY -- never shipped in plugins/.
#
# Environment:
#   ESXI_STANDIN_STATE    state directory (default: $HOME/.esxi-standin/<uname -n>, so lab
#                         hosts sharing one filesystem keep separate states)
#   ESXI_STANDIN_VERSION  a release of the recording list (6.7 | 7.0 | 8.0) -- used when the state is
#                         created (default 8.0)
#   ESXI_STANDIN_RELEASES the recording list (default: ./releases, next to these scripts)
#   ESXI_STANDIN_ROOT     where host files live (default: $STATE/root; "/" in a private
#                         mount namespace makes /usr/lib/vmware/... real paths)
#   ESXI_STANDIN_DATA     recorded outputs (default: ../fixtures/esxi)

STANDIN_DIR=$(cd "$(dirname "$0")" && pwd -P)
STATE=${ESXI_STANDIN_STATE:-${HOME:-/root}/.esxi-standin/$(uname -n)}
DATA=${ESXI_STANDIN_DATA:-$STANDIN_DIR/../fixtures/esxi}
RELEASES=${ESXI_STANDIN_RELEASES:-$STANDIN_DIR/releases}

die() {
    printf '%s\n' "$*" >&2
    exit 1
}

# The real esxcli message for this case is not recorded: say so instead of inventing one.
unrecorded() {
    printf 'esxi-standin: %s (real esxcli text not recorded)\n' "$*" >&2
    exit 1
}

log_call() {
    [ -d "$STATE" ] && printf '%s\n' "$*" >>"$STATE/calls.log"
    return 0
}

# Test fault injection (esxi-standin set inject_after PREFIX / inject_fail PREFIX): once a call
# starting with inject_after has run (or at once when it is unset), the next call starting with
# inject_fail fails, once. The failure text is the stand-in's own, never invented ESXi wording.
inject() {  # inject "CALL"
    [ -f "$STATE/inject_fail" ] || return 0
    _fail=$(cat "$STATE/inject_fail")
    _after=$(cat "$STATE/inject_after" 2>/dev/null || true)
    if [ -z "$_after" ] || [ -f "$STATE/inject_armed" ]; then
        case "$1" in
            "$_fail"*)
                rm -f "$STATE/inject_after" "$STATE/inject_fail" "$STATE/inject_armed"
                printf 'esxi-standin: injected failure of "%s" (real esxcli text not recorded)\n' "$1" >&2
                exit 1
                ;;
        esac
    fi
    if [ -n "$_after" ]; then
        case "$1" in "$_after"*) : >"$STATE/inject_armed" ;; esac
    fi
    return 0
}

sget() {  # sget KEY [DEFAULT] -- one-line state value
    if [ -f "$STATE/$1" ]; then
        cat "$STATE/$1"
    else
        printf '%s\n' "${2:-}"
    fi
}

sput() {  # sput KEY VALUE
    printf '%s\n' "$2" >"$STATE/$1"
}

root_dir() {
    sget root_dir "$STATE/root"
}

# Release profiles: one row of the recording list ($RELEASES), kept in the state by init (so a
# session that does not see ESXI_STANDIN_RELEASES answers as the release it was made).
# shellcheck disable=SC2034 # P_* are read by the scripts that source this file
profile() {  # profile [ROW] -> P_VERSION P_BUILD P_UPDATE P_PATCH P_VMWARE_FIXTURE P_ESXBASE P_RULESETS P_VIBS P_EIO
    _row=${1:-$(cat "$STATE/profile")}
    IFS='|' read -r _rel P_VERSION P_BUILD P_UPDATE P_PATCH P_VMWARE_FIXTURE P_ESXBASE P_RULESETS P_VIBS P_EIO <<EOF
$_row
EOF
}

release_row() {  # release_row RELEASE -> its row of the recording list
    _found=$(awk -F'|' -v r="$1" '!/^#/ && $1 == r' "$RELEASES")
    [ -n "$_found" ] ||
        die "esxi-standin: unknown version '$1' (use one of: $(awk -F'|' '!/^#/ && NF { printf "%s ", $1 }' "$RELEASES"))"
    printf '%s\n' "$_found"
}

version() {
    ensure_state
    sget version
}

# Create a wrapper that stands for a host binary. It remembers the state directory and the
# real Linux tool, and goes through _exec (execInstalledOnly and appDom checks).
make_binary() {  # make_binary PATH TOOL(iperf2|iperf3) INSTALLED(yes|no)
    _path=$1 _tool=$2
    case "$_tool" in
        iperf3) _real=$(command -v iperf3 || printf /usr/bin/iperf3) ;;
        *) _real=$(command -v iperf || printf /usr/bin/iperf) ;;
    esac
    mkdir -p "$(dirname "$_path")"
    cat >"$_path" <<EOF
#!/bin/sh
# esxi-standin stand-in for an ESXi-side $_tool binary (see tests/esxi_standin/README.md)
ESXI_STANDIN_STATE='$STATE'
export ESXI_STANDIN_STATE
exec '$STANDIN_DIR/_exec' '$_tool' '$_real' "\$0" "\$@"
EOF
    chmod 755 "$_path"
    if [ "$3" = yes ]; then
        printf '%s/%s\n' "$(cd "$(dirname "$_path")" && pwd -P)" "$(basename "$_path")" >>"$STATE/installed_files"
    fi
}

init_state() {  # init_state VERSION
    _release_row=$(release_row "$1") || exit 1
    profile "$_release_row"
    rm -rf "$STATE"
    mkdir -p "$STATE"
    sput version "$1"
    sput profile "$_release_row"
    sput root_dir "${ESXI_STANDIN_ROOT:-$STATE/root}"
    _root=$(root_dir)
    mkdir -p "$_root"
    : >"$STATE/calls.log"
    : >"$STATE/installed_files"
    : >"$STATE/vobd.log"
    # firewall: esxcli network firewall get recorded on 7.0.3 (DROP / true / true)
    sput fw_enabled true
    sput fw_default_action DROP
    sput fw_loaded true
    # ruleset list: the release's recording, and its layout (2 or 4 columns) from its dashes line
    awk 'seen && NF >= 2 { print $1 "|" $2 "|" ($3 == "" ? "-" : $3) "|" ($4 == "" ? "-" : $4) }
         /^-+ +-+/ { seen = 1 }' "$DATA/$P_RULESETS" >"$STATE/rulesets"
    sput ruleset_columns "$(awk '/^-+ +-+/ { print NF; exit }' "$DATA/$P_RULESETS")"
    # software: acceptance level as recorded by 'acceptance get'; esx-base as the only base VIB
    sput acceptance PartnerSupported
    _today=$(date +%Y-%m-%d)
    if [ "$P_VIBS" = 8.x ]; then _plat=host; else _plat=; fi
    printf 'esx-base|%s|VMware|VMwareCertified|%s|%s\n' "$P_ESXBASE" "$_today" "$_plat" >"$STATE/vibs"
    # execInstalledOnly: boot option off by default; the runtime option as the release has it
    sput eio_boot_configured FALSE
    sput eio_boot_runtime FALSE
    if [ "$P_EIO" != - ]; then sput eio_runtime "$P_EIO"; fi
    # security domains: the five fully recorded rows
    printf '%s\n' 'superDom|enforcing' 'regularVMDom|enforcing' 'appDom|enforcing' \
        'daemonFrameworkDom|enforcing' 'globalVMDom|enforcing' >"$STATE/secpolicy"
    # vmkping: interface and path MTU (ESXi defaults 1500)
    sput vmk_mtu 1500
    sput path_mtu 1500
    sput vmkping_mode replay
    # driver private statistics (localcli networkinternal nic privstats get): recorded (replayed) or absent
    sput privstats recorded
    # files: the bundled iperf3 (shipped, so "installed")
    make_binary "$_root/usr/lib/vmware/vsan/bin/iperf3" iperf3 yes
}

ensure_state() {
    [ -f "$STATE/version" ] || init_state "${ESXI_STANDIN_VERSION:-8.0}"
}

# Render an esxcli table. $1: alignments (L/R per column); $2: header names joined by '|'.
# Rows come on stdin, fields joined by '|'. Columns are two spaces apart, widths fit the
# widest cell, right-aligned cells are padded on the left, the last column is not padded.
render_table() {
    awk -v aligns="$1" -v header="$2" -F'|' '
        BEGIN { n = split(header, H, "|"); split(aligns, A, " "); for (i = 1; i <= n; i++) W[i] = length(H[i]) }
        { R[NR] = $0; for (i = 1; i <= n; i++) if (length($i) > W[i]) W[i] = length($i) }
        END {
            line = ""; dash = ""
            for (i = 1; i <= n; i++) {
                cell = (i < n) ? sprintf("%-" W[i] "s", H[i]) : H[i]
                d = ""; for (j = 0; j < W[i]; j++) d = d "-"
                line = line (i > 1 ? "  " : "") cell; dash = dash (i > 1 ? "  " : "") d
            }
            print line; print dash
            for (r = 1; r <= NR; r++) {
                split(R[r], F, "|"); line = ""
                for (i = 1; i <= n; i++) {
                    if (A[i] == "R") cell = sprintf("%" W[i] "s", F[i])
                    else if (i < n) cell = sprintf("%-" W[i] "s", F[i])
                    else cell = F[i]
                    line = line (i > 1 ? "  " : "") cell
                }
                print line
            }
        }'
}

# Print a recorded output without its prompt/command lines and without leading blank lines.
replay() {  # replay FIXTURE
    awk '/^\[root@/ || /^~ #/ || /^\$ / || /^# esxcli/ || /^esxcli / { next }
         !started && /^[[:space:]]*$/ { next }
         { started = 1; print }' "$DATA/$1"
}

# Option parsing: "--name=value", "--name value", "-n value" and bare flags become shell
# variables opt_<name> (dashes -> underscores). No esxcli command takes positional arguments.
parse_opts() {
    while [ $# -gt 0 ]; do
        _a=$1
        shift
        case "$_a" in
            --*=*) _n=${_a%%=*} _v=${_a#*=} ;;
            -*)
                _n=$_a
                if [ $# -gt 0 ] && [ "${1#-}" = "$1" ]; then
                    _v=$1
                    shift
                else
                    _v=1
                fi
                ;;
            *) die "esxi-standin: unexpected argument '$_a'" ;;
        esac
        _n=$(printf '%s' "${_n#-}" | sed 's/^-//' | tr '-' '_')
        case "$_n" in
            *[!A-Za-z0-9_]* | '') die "esxi-standin: bad option '$_a'" ;;
        esac
        eval "opt_$_n=\$_v"
    done
}
