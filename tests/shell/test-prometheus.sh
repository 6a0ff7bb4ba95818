#!/usr/bin/env bash
# Prometheus: the metrics numaguardd writes pass `promtool check metrics` for
# every fixture tree (instances, findings and pools of real kernels), the
# shipped alerting rules pass `promtool check rules`, and
# tests/prometheus/numaguard.rules.test.yml, which has a test for every alert,
# passes `promtool test rules`; every finding code (numaguardd(8)'s table of
# MESSAGE_IDs) is alerted on by a rule or named, with the reason, in the
# rules file's list of findings no rule alerts on. promtool comes from Debian's `prometheus`
# package (tests/install-deps installs it and never starts its service).
# Under CI a missing promtool is a failure, elsewhere a loud skip.
# BUILD: build directory (default build).
set -u
# the plan: one metrics check per fixture tree, then the four rules checks
trees=("$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd -P)"/tests/fixtures/trees/*/proc)
echo "1..$((${#trees[@]} + 4))"
SRC=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd -P)
BUILD=${BUILD:-build}
case $BUILD in /*) B=$BUILD ;; *) B=$SRC/$BUILD ;; esac
RULES=$SRC/conf/numaguard.rules.yml
TESTS=$SRC/tests/prometheus/numaguard.rules.test.yml
[ -x "$B/numaguardd" ] || { echo "not ok prometheus: $B/numaguardd not built"; exit 1; }
if ! command -v promtool > /dev/null; then
        if [ "${CI:-}" = true ]; then
                echo "not ok prometheus: promtool not installed (tests/install-deps test installs prometheus)"; exit 1
        fi
        echo "skip prometheus: promtool not installed (apt-get install --no-install-recommends prometheus)"; exit 77
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
TAP_PREFIX=prometheus; . "$SRC/tests/shell/lib.sh"

# ---- metrics of every fixture tree, with the config it was captured with
for tree in "$SRC"/tests/fixtures/trees/*/; do
        name=$(basename "$tree")
        [ -d "$tree/proc" ] || continue
        conf=$tmp/$name.conf prom=$tmp/$name.prom
        # the captured config, with the metrics file here
        if [ -f "$tree/numaguard/numaguard.conf" ]; then
                sed "s|^metrics_file *=.*|metrics_file = $prom|" "$tree/numaguard/numaguard.conf" > "$conf"
        else
                printf '[global]\nmetrics_file = %s\n' "$prom" > "$conf"
        fi
        grep -q "^metrics_file = $prom" "$conf" || printf '[global]\nmetrics_file = %s\n' "$prom" > "$conf"
        if ! out=$("$B/numaguardd" --root "$tree" --once --foreground --config "$conf" \
                        --alert-log "$tmp/$name.alerts" 2>&1) || [ ! -s "$prom" ]; then
                fail "metrics-$name" "numaguardd --once wrote no metrics: $out"; continue
        fi
        if ! grep -q '^numaguard_node_hugepages{' "$prom"; then
                fail "metrics-$name" "no numaguard_node_hugepages series"; continue
        fi
        if out=$(promtool check metrics < "$prom" 2>&1); then pass "metrics-$name"
        else fail "metrics-$name" "$out"; fi
done

# ---- rules: valid, and every alert has a test that fires it
if out=$(promtool check rules "$RULES" 2>&1); then pass check-rules; else fail check-rules "$out"; fi
untested=""
for a in $(sed -n 's/^ *- alert: *//p' "$RULES"); do
        grep -q "alertname: $a\$" "$TESTS" && grep -A2 "alertname: $a\$" "$TESTS" | grep -q 'exp_labels' ||
                untested+=" $a"
done
[ -z "$untested" ] && pass rules-all-tested || fail rules-all-tested "alerts without a firing test:$untested"
if out=$(cd "$(dirname "$TESTS")" && promtool test rules "$(basename "$TESTS")" 2>&1); then pass test-rules
else fail test-rules "$out"; fi
# every code: in a rule's expr, or in the header's "no rule alerts on" list
codes=$(awk '/^CYCLOPS +[0-9a-f]{32}$/ { on = 1 } on && /^[A-Z_]+ +[0-9a-f]{32}$/ { print $1 } on && /^\(/ { exit }' \
        "$SRC/man/numaguardd.8")
exprs=$(grep -E '^ *expr:|^ +[a-z_(].*numaguard_findings_active' "$RULES")
quiet=$(sed -n '/^# Findings no rule alerts on/,/^[^#]/p' "$RULES")
unhandled=""
for c in $codes; do
        grep -qE "[\"|=~]$c[\"|]" <<<"$exprs" || grep -qE "(^#|[ ,])$c[,:]" <<<"$quiet" || unhandled+=" $c"
done
if [ -z "$codes" ]; then fail codes-alerted "no finding code read from numaguardd(8)"
elif [ -n "$unhandled" ]; then fail codes-alerted "codes neither alerted on nor listed as not alerted on:$unhandled"
else pass codes-alerted; fi
exit $((fails > 0))
