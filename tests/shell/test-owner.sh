#!/usr/bin/env bash
# The owner of an instance's cpuset, on trees derived from the captured
# 8-node tree (tests/fixtures/derive-owner-tree: CPU 0 on node 0, memory on
# node 6, in a systemd unit's cgroup, a cgconfig group, or a cgroup nobody
# declares): the audit names the owner (text and JSON cpuset_owner), and
# CPUSET_NOT_PERSISTENT is raised exactly when the live cpuset differs from
# what the owner restores. `cpuset apply` writes through the owner: its
# --dry-run names the unit property or the file line and changes nothing;
# the apply sets the unit's drop-in (systemd's own text; under --root the
# manager is emulated in the tree) or edits only the value in cgconfig.conf,
# then the live files; without an owner it says the fix will not last.
# BUILD: build directory (default build).
set -u
SRC=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd -P)
BUILD=${BUILD:-build}
case $BUILD in /*) B=$BUILD ;; *) B=$SRC/$BUILD ;; esac
CTL=$B/numaguardctl
DERIVE=$SRC/tests/fixtures/derive-owner-tree
echo "1..28"
[ -x "$CTL" ] || { echo "not ok owner: $CTL not built"; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
TAP_PREFIX=owner; . "$SRC/tests/shell/lib.sh"
audit() {       # audit TREE [--json]
        "$CTL" audit --root "$1" --config "$1/numaguard/numaguard.conf" "${@:2}" 2>"$tmp/err"
}
jqt() {         # jqt TREE FILTER: the filter over audit --json is true
        audit "$1" --json | jq -e "$2" >/dev/null
}
for k in unit cgconfig none; do "$DERIVE" "$k" "$tmp/$k" || { echo "not ok owner: derive $k"; exit 1; }; done
cg_unit=$tmp/unit/sys/fs/cgroup/system.slice/oracle-db.service
cg_cgc=$tmp/cgconfig/sys/fs/cgroup/oracle

# --- who owns it
check unit-json "cpuset_owner is not systemd/oracle-db.service: $(audit "$tmp/unit" --json | jq -c '.instances[0]|{cpuset_owner,cpuset_owner_name}')" \
        jqt "$tmp/unit" '.instances[0] | .cpuset_owner == "systemd" and .cpuset_owner_name == "oracle-db.service"'
check unit-text "no owner line: $(audit "$tmp/unit" | grep owner)" \
        grep -qx '  cpuset owner: systemd unit oracle-db.service (AllowedCPUs=0, AllowedMemoryNodes=6, from /etc/systemd/system/oracle-db.service)' <(audit "$tmp/unit")
check cgconfig-json "cpuset_owner is not cgconfig/oracle" \
        jqt "$tmp/cgconfig" '.instances[0] | .cpuset_owner == "cgconfig" and .cpuset_owner_name == "oracle"'
check cgconfig-text "no owner line: $(audit "$tmp/cgconfig" | grep owner)" \
        grep -qx '  cpuset owner: cgconfig group oracle (cpuset.cpus 0, cpuset.mems 6, from /etc/cgconfig.conf)' <(audit "$tmp/cgconfig")
check none-json "cpuset_owner is not none/null" \
        jqt "$tmp/none" '.instances[0] | .cpuset_owner == "none" and .cpuset_owner_name == null'

# --- what finding the owner read costs shows in the audit's cost: the trees
# differ from the unowned one by the unit file or cgconfig.conf read
reads() { audit "$1" --json | jq '.cost.files_read'; }
n_none=$(reads "$tmp/none")
check unit-cost "files_read $(reads "$tmp/unit") is not the unowned tree's $n_none plus the unit file" \
        test "$(reads "$tmp/unit")" = $((n_none + 1))
check cgconfig-cost "files_read $(reads "$tmp/cgconfig") is not the unowned tree's $n_none plus cgconfig.conf" \
        test "$(reads "$tmp/cgconfig")" = $((n_none + 1))

# --- live as declared: nothing to flag; the remote binding itself is
check unit-persistent "CPUSET_NOT_PERSISTENT although the live cpuset is the unit's" \
        jqt "$tmp/unit" '([.findings[] | select(.code == "CPUSET_NOT_PERSISTENT")] | length == 0) and
                         ([.findings[] | select(.code == "REMOTE_MEMORY" and .severity == "critical")] | length == 1)'
check cgconfig-persistent "CPUSET_NOT_PERSISTENT although the live cpuset is the group's" \
        jqt "$tmp/cgconfig" '[.findings[] | select(.code == "CPUSET_NOT_PERSISTENT")] | length == 0'

# --- a live write the owner will undo (mems 6 -> 0, as a direct write does)
printf '0\n' > "$cg_unit/cpuset.mems"
printf '0\n' > "$cg_unit/cpuset.mems.effective"
check unit-not-persistent "no CPUSET_NOT_PERSISTENT warning naming AllowedMemoryNodes=6: $(audit "$tmp/unit" --json | jq -c '[.findings[].code]')" \
        jqt "$tmp/unit" '[.findings[] | select(.code == "CPUSET_NOT_PERSISTENT" and .severity == "warning" and .instance == "oracle"
                          and (.message | test("cpuset.mems is 0, AllowedMemoryNodes=6")))] | length == 1'
printf '0\n' > "$cg_cgc/cpuset.mems"
printf '0\n' > "$cg_cgc/cpuset.mems.effective"
check cgconfig-not-persistent "no CPUSET_NOT_PERSISTENT naming cpuset.mems = 6" \
        jqt "$tmp/cgconfig" '[.findings[] | select(.code == "CPUSET_NOT_PERSISTENT" and (.message | test("cpuset.mems is 0, cpuset.mems = 6")))] | length == 1'
printf '0\n' > "$tmp/none/sys/fs/cgroup/oracle/cpuset.mems"
check none-never "CPUSET_NOT_PERSISTENT without an owner" \
        jqt "$tmp/none" '[.findings[] | select(.code == "CPUSET_NOT_PERSISTENT")] | length == 0'
check unit-not-persistent-text "the text audit does not show the warning" \
        grep -q '^warning  CPUSET_NOT_PERSISTENT \[oracle\]' <(audit "$tmp/unit")

# --- set-property's drop-in overrides the unit file (as systemd merges them;
# systemd writes the reset and the value, as here)
mkdir -p "$tmp/unit/etc/systemd/system.control/oracle-db.service.d"
printf '[Service]\nAllowedMemoryNodes=\nAllowedMemoryNodes=0\n' > "$tmp/unit/etc/systemd/system.control/oracle-db.service.d/50-AllowedMemoryNodes.conf"
check unit-dropin "the drop-in's AllowedMemoryNodes=0 is not what the unit restores" \
        jqt "$tmp/unit" '[.findings[] | select(.code == "CPUSET_NOT_PERSISTENT")] | length == 0'
printf '[Service]\nAllowedMemoryNodes=\n' > "$tmp/unit/etc/systemd/system.control/oracle-db.service.d/50-AllowedMemoryNodes.conf"
check unit-dropin-reset "an empty AllowedMemoryNodes= (the parent's) is not compared" \
        jqt "$tmp/unit" '[.findings[] | select(.code == "CPUSET_NOT_PERSISTENT" and (.message | test("AllowedMemoryNodes= \\(unset")))] | length == 1'

# --- a cgconfig file that does not parse: the owner is unknown, named with file and line
printf 'group oracle {\n\tcpuset {\n\t\tcpuset.mems = 0\n\t}\n}\n' > "$tmp/cgconfig/etc/cgconfig.conf"
check cgconfig-broken "no 'unknown' owner naming /etc/cgconfig.conf:4: $(audit "$tmp/cgconfig" | grep owner)" \
        grep -q '  cpuset owner: unknown (/etc/cgconfig.conf:4: cannot parse cgconfig syntax)' <(audit "$tmp/cgconfig")

# --- cpuset apply through the owner, on fresh trees
for k in unit cgconfig none; do "$DERIVE" "$k" "$tmp/$k" || { echo "not ok owner: derive $k"; exit 1; }; done
"$DERIVE" cgconfig "$tmp/orig"
apply() {       # apply TREE [--dry-run]: numaguardctl cpuset apply oracle
        "$CTL" cpuset apply oracle --root "$1" --config "$1/numaguard/numaguard.conf" "${@:2}" 2>&1
}
apply "$tmp/unit" --dry-run > "$tmp/out"
check unit-dry-run "$(cat "$tmp/out")" eval 'grep -qx "would set AllowedMemoryNodes=0 on systemd unit oracle-db.service (runtime and persistent, as systemctl set-property; now: AllowedMemoryNodes=6)" "$tmp/out" &&
        [ ! -e "$tmp/unit/etc/systemd/system.control" ] && [ "$(cat "$cg_unit/cpuset.mems")" = 6 ]'
apply "$tmp/unit" > "$tmp/out"
dropin=$tmp/unit/etc/systemd/system.control/oracle-db.service.d/50-AllowedMemoryNodes.conf
check unit-apply "$(cat "$tmp/out"; cat "$dropin" 2>&1)" eval 'grep -q "^cpuset oracle: done: systemd unit oracle-db.service set, persistently" "$tmp/out" &&
        [ "$(tail -n 3 "$dropin")" = "$(printf "[Service]\nAllowedMemoryNodes=\nAllowedMemoryNodes=0")" ] &&
        [ "$(cat "$cg_unit/cpuset.mems")" = 0 ]'
check unit-after "$(audit "$tmp/unit" | grep owner)" \
        grep -q 'cpuset owner: systemd unit oracle-db.service (AllowedCPUs=0, AllowedMemoryNodes=0,' <(audit "$tmp/unit")
apply "$tmp/cgconfig" --dry-run > "$tmp/out"
check cgconfig-dry-run "$(cat "$tmp/out")" eval 'grep -qx "would change $tmp/cgconfig/etc/cgconfig.conf:15 (the tree'"'"'s /etc/cgconfig.conf:15)" "$tmp/out" &&
        grep -qxF "$(printf "    to: \t\tcpuset.mems = \"0\";")" "$tmp/out" &&
        cmp -s "$tmp/orig/etc/cgconfig.conf" "$tmp/cgconfig/etc/cgconfig.conf" && [ "$(cat "$cg_cgc/cpuset.mems")" = 6 ]'
apply "$tmp/cgconfig" > "$tmp/out"
diff "$tmp/orig/etc/cgconfig.conf" "$tmp/cgconfig/etc/cgconfig.conf" > "$tmp/diff"
check cgconfig-apply "$(cat "$tmp/out" "$tmp/diff")" eval '[ "$(cat "$tmp/diff")" = "$(printf "15c15\n< \t\tcpuset.mems = \"6\";\n---\n> \t\tcpuset.mems = \"0\";")" ] &&
        [ "$(cat "$cg_cgc/cpuset.mems")" = 0 ] && grep -q "^cpuset oracle: done: wrote cgconfig group oracle in /etc/cgconfig.conf" "$tmp/out"'
check cgconfig-noop "second apply: $(apply "$tmp/cgconfig")" eval 'apply "$tmp/cgconfig" | grep -q "^cpuset oracle: noop"'
apply "$tmp/none" --dry-run > "$tmp/out"
check none-dry-run "$(cat "$tmp/out")" grep -q "no owner persists it (no systemd unit, no cgconfig group): it lasts until the cgroup is removed or the host reboots" "$tmp/out"
# a group whose cpuset block lacks the key: added on its own line
"$DERIVE" cgconfig "$tmp/nokey"
sed -i '/cpuset.mems = "6"/d' "$tmp/nokey/etc/cgconfig.conf"
apply "$tmp/nokey" > "$tmp/out"
check cgconfig-add-key "$(cat "$tmp/out"; sed -n 12,16p "$tmp/nokey/etc/cgconfig.conf")" eval '[ "$(sed -n 15p "$tmp/nokey/etc/cgconfig.conf")" = "$(printf "\t\tcpuset.mems = \"0\";")" ] &&
        [ "$(sed -n 16p "$tmp/nokey/etc/cgconfig.conf")" = "$(printf "\t}")" ] && grep -qF "added a line to $tmp/nokey/etc/cgconfig.conf:15 (the tree'"'"'s /etc/cgconfig.conf:15): " "$tmp/out"'
# an unknown owner: refused, nothing written
"$DERIVE" cgconfig "$tmp/broken"
printf 'group oracle {\n\tcpuset {\n\t\tcpuset.mems = 6\n\t}\n}\n' > "$tmp/broken/etc/cgconfig.conf"
apply "$tmp/broken" > "$tmp/out"
check unknown-refused "$(cat "$tmp/out")" eval 'grep -q "^cpuset oracle: refused: the owner of cpuset /oracle cannot be told (/etc/cgconfig.conf:4: cannot parse" "$tmp/out" &&
        [ "$(cat "$tmp/broken/sys/fs/cgroup/oracle/cpuset.mems")" = 6 ]'
# the file cannot be replaced (its temporary sibling is taken by a
# directory, which fails for root too): a clear error, the live cpuset untouched
"$DERIVE" cgconfig "$tmp/ro"
mkdir "$tmp/ro/etc/cgconfig.conf.numaguard-new"
apply "$tmp/ro" > "$tmp/out"
check cgconfig-write-fails "$(cat "$tmp/out")" eval 'grep -q "cannot write group oracle in /etc/cgconfig.conf: Is a directory; nothing changed" "$tmp/out" &&
        [ "$(cat "$tmp/ro/sys/fs/cgroup/oracle/cpuset.mems")" = 6 ] && cmp -s "$tmp/orig/etc/cgconfig.conf" "$tmp/ro/etc/cgconfig.conf"'
# the write through the owner read back: the unit after set-property restores 0
check unit-restores-fix "CPUSET_NOT_PERSISTENT after the fix" \
        jqt "$tmp/unit" '[.findings[] | select(.code == "CPUSET_NOT_PERSISTENT")] | length == 0'
check cgconfig-restores-fix "CPUSET_NOT_PERSISTENT after the fix" \
        jqt "$tmp/cgconfig" '[.findings[] | select(.code == "CPUSET_NOT_PERSISTENT")] | length == 0'
exit $((fails > 0))
