#!/usr/bin/env bash
# Database hosts as they are in the field: hostile and partial inputs.
# Fixture trees under tests/fixtures/trees/hostile-* are captured trees with
# one file edited each (their README says which); every case here failed on
# the code before these checks existed. And an audit run without root on
# this live host: it cannot read other users' maps, so it must say so
# (AUDIT_INCOMPLETE) and exit 1 or more, never give an all-clear.
# BUILD: build directory (default build).
set -u
SRC=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd -P)
BUILD=${BUILD:-build}
case $BUILD in /*) B=$BUILD ;; *) B=$SRC/$BUILD ;; esac
CTL=$B/numaguardctl
TREES=$SRC/tests/fixtures/trees
echo 1..2
[ -x "$CTL" ] || { echo "not ok db-hosts: $CTL not built"; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
chmod 755 "$tmp"

# ---- without root ----
# As root, become nobody for the run; otherwise we already are not root.
if [ "$(id -u)" = 0 ]; then
        asuser() { setpriv --reuid=nobody --regid=nogroup --clear-groups --inh-caps=-all -- "$@"; }
else
        asuser() { "$@"; }
fi
cp "$CTL" "$tmp/numaguardctl" && chmod 755 "$tmp/numaguardctl"
asuser "$tmp/numaguardctl" audit --config /dev/null > "$tmp/nonroot.txt" 2>&1; rc=$?
if [ $rc -ge 1 ] && grep -q "AUDIT_INCOMPLETE" "$tmp/nonroot.txt" && ! grep -qi "no findings" "$tmp/nonroot.txt"; then
        echo "ok db-hosts-nonroot-incomplete (exit $rc)"
else
        echo "not ok db-hosts-nonroot-incomplete: exit $rc"; tail -5 "$tmp/nonroot.txt"
fi
asuser "$tmp/numaguardctl" audit --config /dev/null --json > "$tmp/nonroot.json" 2>/dev/null
if jq -e '[.findings[] | select(.code == "AUDIT_INCOMPLETE" and .severity == "warning")] | length == 1' \
        "$tmp/nonroot.json" >/dev/null; then
        echo "ok db-hosts-nonroot-incomplete-json"
else
        echo "not ok db-hosts-nonroot-incomplete-json"; head -c 600 "$tmp/nonroot.json"
fi
