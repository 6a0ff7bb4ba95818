#!/usr/bin/env bash
# The Prometheus chain a fleet runs, end to end, in the guest booted with
# systemd as PID 1 (topology `systemd`, after case `service` installed the
# packages): Debian's prometheus-node-exporter, started as its package
# ships it, reads numaguard's metrics file from its textfile directory; a
# real Prometheus server loads the rules numaguard ships
# (/usr/share/numaguard/numaguard.rules.yml, unchanged) and scrapes it; a
# real prometheus-alertmanager receives the alerts.
#
# - A cyclops (a SysV segment under numactl --membind, CPUs on both nodes)
#   arrives in Alertmanager's API as a firing NumaguardCyclops with the
#   instance's labels (db_instance, instance, job, severity), and is gone
#   from it once `numaguardctl rebalance` has fixed the placement.
# - NumaguardDown fires for a daemon killed with SIGKILL (its metrics file
#   keeps numaguard_up 1 and a last poll that grows old) and stays silent
#   for one stopped on purpose (`systemctl stop`: numaguard_up 0).
#
# Scrape and evaluation every 5 s (a scrape that fails under TCG marks every
# series stale, which restarts a pending alert's for:); the rules' own durations (for: 15m,
# 600 s) are kept, and the guest's clock is moved forward instead, in steps
# of 4 minutes (below Prometheus' 5-minute lookback, so that a series stays
# present across a step), each followed by a scrape and an evaluation at
# the new time. The clock is put back at the end. The binaries come from
# the host's userland (tests/install-deps installs prometheus,
# prometheus-node-exporter and prometheus-alertmanager).
. "${E2E_DIR:-${0%/cases/*}}/lib.sh"
plan 5
need_ctl
[ "$(cat /proc/1/comm)" = systemd ] || abort "PID 1 is $(cat /proc/1/comm), not systemd (numa-vm --systemd)"
NGCTL=/usr/bin/numaguardctl CONF=/etc/numaguard/numaguard.conf
RULES=/usr/share/numaguard/numaguard.rules.yml
TEXTFILE_DIR=/var/lib/prometheus/node-exporter
PROM=127.0.0.1:19090 AM=127.0.0.1:19093 NODE=127.0.0.1:9100
# Case service installs the packages; run alone (-c prometheus-chain), the
# case installs them as service does.
if ! [ -x "$NGCTL" ]; then
    V=$(sed -n 's/^VERSION := //p' "$ROOT/Makefile") arch=$(dpkg --print-architecture)
    P=${NUMAGUARD_E2E_DEBS:-$ROOT/build-deb/packages}
    rm -f /var/lib/man-db/auto-update
    dpkg -i "$P/libnumaguard0_${V}_$arch.deb" "$P/numaguard_${V}_$arch.deb" > "$T/dpkg.log" 2>&1 ||
        { logf "$T/dpkg.log"; abort "dpkg -i failed"; }
fi
until_ok() { local t=$(($1 * 4)); shift; while ((t-- > 0)); do "$@" && return 0; sleep 0.25; done; return 1; }
until_ok 60 systemctl is-active -q numaguard || abort "the numaguard service is not active"
for b in prometheus prometheus-alertmanager prometheus-node-exporter promtool; do
    command -v $b > /dev/null || abort "$b missing on the host (tests/install-deps installs it)"
done
[ -f "$RULES" ] || abort "$RULES not installed by the package"
RECORD=$B/e2e/prometheus-record.txt
mkdir -p "$B/e2e" && : > "$RECORD"
record() { { echo "### $1"; cat; echo; } >> "$RECORD"; }
# until_ok SECONDS CMD...: CMD until it succeeds, for SECONDS of wall time
# (monotonic: the clock steps below do not shorten it); every try of a
# curl | jq pipeline takes a second or more under TCG
until_ok() {
    local end=$(( $(cut -d. -f1 /proc/uptime) + $1 )); shift
    while :; do
        "$@" && return 0
        (( $(cut -d. -f1 /proc/uptime) < end )) || return 1
        sleep 0.5
    done
}
jqe() { jq -e "$@" > /dev/null; }
prop() { systemctl show -P "$1" numaguard; }

# ---- the clock: forward in steps, back at the end
JUMPED=0
at_exit 'date -s "@$(( $(date +%s) - JUMPED ))" > /dev/null'
# settle: a scrape of node_exporter and an evaluation of the rules, both
# after now (Prometheus' clock is the guest's)
settle() {
    local t0 ok
    t0=$(date +%s)
    until_ok 60 eval 'ok=$(curl -sf "http://$PROM/api/v1/query?query=timestamp(up%7Bjob%3D%22node%22%7D)" |
        jq -r ".data.result[0].value[1] // 0 | tonumber | floor"); [ "${ok:-0}" -gt '"$t0"' ]' ||
        { fail "no scrape after $(date -u -d "@$t0" +%T): $(curl -sf "http://$PROM/api/v1/targets" |
            jq -c "[.data.activeTargets[] | {health, lastError, lastScrape}]")"; return 1; }
    sleep 11        # two evaluations, and Alertmanager's copy of their result
}
# forward MINUTES: the guest's clock MINUTES ahead, 4 at a time
forward() {
    local left=$1 step
    while ((left > 0)); do
        step=$((left < 4 ? left : 4))
        date -s "@$(( $(date +%s) + step * 60 ))" > /dev/null || { fail "date -s failed"; return 1; }
        JUMPED=$((JUMPED + step * 60)) left=$((left - step))
        settle || return 1
        log "clock moved $step min ahead: $(date -u +%T); ${WATCH:-}: $(curl -sf "http://$PROM/api/v1/alerts" |
            jq -c --arg n "${WATCH:-}" '[.data.alerts[] | select(.labels.alertname == $n) | {state, activeAt}]')"
    done
}
# am_alert NAME [JQ FILTER]: the alert's objects as Alertmanager's API lists them
am_alerts() { curl -sf "http://$AM/api/v2/alerts?active=true&silenced=true&inhibited=true" |
    jq -c --arg n "$1" "[.[] | select(.labels.alertname == \$n)${2:+ | select($2)}]"; }
prom_alert_state() { curl -sf "http://$PROM/api/v1/alerts" |
    jq -r --arg n "$1" '[.data.alerts[] | select(.labels.alertname == $n) | .state] | unique | join(",")'; }

# ---- numaguard: short polls, the default metrics file
systemctl daemon-reload         # case service removed its drop-in
cp "$CONF" "$T/conf.orig"
at_exit "cp $T/conf.orig $CONF; systemctl reload numaguard"
printf '[global]\ninterval = 2s\nmin_segment_size = 4M\n' > "$CONF"
systemctl reload numaguard || fail "systemctl reload numaguard"
until_ok 30 eval 'metrics=$("$NGCTL" status --json 2>/dev/null | jq -r ".daemon.metrics_file // empty"); [ -n "$metrics" ]' ||
    fail "numaguardctl status gives no metrics_file"
log "numaguard metrics file: ${metrics:-?}"
expect "the metrics file $metrics is not in node_exporter's textfile directory $TEXTFILE_DIR" test "${metrics%/*}" = "$TEXTFILE_DIR"

# ---- node_exporter as Debian ships and starts it: its unit, its
# /etc/default file, its textfile directory. Only the textfile collector:
# under TCG the default collectors together outlast a short scrape.
cp /etc/default/prometheus-node-exporter "$T/node-exporter.default"
at_exit "cp $T/node-exporter.default /etc/default/prometheus-node-exporter"
printf 'ARGS="--collector.disable-defaults --collector.textfile"\n' > /etc/default/prometheus-node-exporter
systemctl start prometheus-node-exporter || fail "systemctl start prometheus-node-exporter"
at_exit "systemctl stop prometheus-node-exporter"
until_ok 120 eval 'curl -sf "http://$NODE/metrics" | grep -q "^numaguard_up 1"' ||
    fail "node_exporter ($(systemctl show -P ActiveState prometheus-node-exporter)) does not serve numaguard_up 1 from $TEXTFILE_DIR"
curl -sf "http://$NODE/metrics" | grep -E '^(numaguard_up|node_textfile_scrape_error|node_textfile_mtime_seconds)' |
    record "node_exporter: numaguard's textfile"

# ---- Alertmanager: one null receiver, its own port and storage
cat > "$T/am.yml" <<'EOF'
route:
  receiver: "null"
  group_by: [alertname, instance, db_instance]
  group_wait: 1s
  group_interval: 2s
  repeat_interval: 1h
receivers:
  - name: "null"
EOF
mkdir -p "$T/am-data"
prometheus-alertmanager --config.file="$T/am.yml" --storage.path="$T/am-data" --web.listen-address="$AM" \
    --cluster.listen-address= > "$T/am.log" 2>&1 &
at_exit "kill $!"

# ---- Prometheus: the shipped rules, unchanged; 5 s intervals
cat > "$T/prometheus.yml" <<EOF
global:
  scrape_interval: 5s
  scrape_timeout: 5s
  evaluation_interval: 5s
rule_files:
  - $RULES
alerting:
  alertmanagers:
    - static_configs:
        - targets: ["$AM"]
scrape_configs:
  - job_name: node
    static_configs:
      - targets: ["$NODE"]
EOF
promtool check config "$T/prometheus.yml" > "$T/check" 2>&1 || { logf "$T/check"; fail "promtool check config"; }
mkdir -p "$T/prom-data"
# resend-delay 5 s: an alert Alertmanager holds stays current across a step
prometheus --config.file="$T/prometheus.yml" --storage.tsdb.path="$T/prom-data" --web.listen-address="$PROM" \
    --rules.alert.resend-delay=5s > "$T/prom.log" 2>&1 &
at_exit "kill $!"
until_ok 180 eval 'curl -sf "http://$AM/-/ready" > /dev/null' || { logf "$T/am.log"; abort "alertmanager not ready"; }
until_ok 180 eval 'curl -sf "http://$PROM/-/ready" > /dev/null' || { logf "$T/prom.log"; abort "prometheus not ready"; }
want=$(grep -c '^ *- alert:' "$RULES")
n=$(curl -sf "http://$PROM/api/v1/rules" | jq '[.data.groups[] | select(.file == "'"$RULES"'") | .rules[]] | length')
log "prometheus loaded $n rules from $RULES"
expect "prometheus loaded ${n:-no} rules from $RULES, expected $want" test "${n:-0}" = "$want"
until_ok 120 eval '[ "$(curl -sf "http://$PROM/api/v1/query?query=numaguard_up" | jq -r ".data.result[0].value[1]")" = 1 ]' ||
    fail "prometheus has no numaguard_up 1 from node_exporter: $(curl -sf "http://$PROM/api/v1/targets" |
        jq -c "[.data.activeTargets[] | {health, lastError, lastScrapeDuration}]")"
until_ok 60 eval 'curl -sf "http://$PROM/api/v1/alertmanagers" | jq -e ".data.activeAlertmanagers | length == 1" > /dev/null' ||
    fail "prometheus does not know the alertmanager"
curl -sf "http://$PROM/api/v1/targets" | jq -c '.data.activeTargets[] | {job: .labels.job, instance: .labels.instance, health, lastError}' |
    record "prometheus targets"
((FAILS)) && { logf "$T/prom.log"; logf "$T/am.log"; }
result chain-up

# ---- a cyclops: pending, then firing in Alertmanager with its labels
wl_start numactl --membind="$CYCLOPS_NODE" -- sysv -s 16 -p 1 || abort "cyclops workload"
cyclops=unclaimed:shmid-$WL_SHMID
until_ok 60 eval 'curl -sf "http://$PROM/api/v1/query?query=numaguard_findings_active%7Bcode%3D%22CYCLOPS%22%7D" |
    jq -e --arg i "$cyclops" "[.data.result[] | select(.metric.db_instance == \$i)] | length == 1" > /dev/null' ||
    fail "prometheus has no numaguard_findings_active{code=\"CYCLOPS\",db_instance=\"$cyclops\"}"
settle
state=$(prom_alert_state NumaguardCyclops)
expect "NumaguardCyclops is '$state' at once, expected pending (for: 15m)" test "$state" = pending
t_raised=$(date +%s)
WATCH=NumaguardCyclops forward 16
sel='.labels.db_instance == "'"$cyclops"'"'
a=$(am_alerts NumaguardCyclops "$sel")
log "alertmanager: $a"
expect "NumaguardCyclops for $cyclops not active in alertmanager after 16 min: $a" \
    jqe --arg i "$cyclops" --arg n "$NODE" 'length == 1 and .[0].status.state == "active" and .[0].labels.db_instance == $i
        and .[0].labels.severity == "warning" and .[0].labels.instance == $n and .[0].labels.job == "node"' <<<"$a"
jq . <<<"$a" | record "Alertmanager /api/v2/alerts: NumaguardCyclops"
if ((FAILS)); then
    # where the series had gaps: each one restarts the rule's for: 15m
    curl -sf "http://$PROM/api/v1/query_range?query=count(numaguard_findings_active%7Bcode%3D%22CYCLOPS%22%7D)&start=$t_raised&end=$(date +%s)&step=2" |
        jq -c '[.data.result[0].values[] | .[0]] | {samples: length, first: .[0], last: .[-1]}' | logf
    curl -sf "http://$PROM/api/v1/query?query=count_over_time(up%7Bjob%3D%22node%22%7D%5B30m%5D)-sum_over_time(up%7Bjob%3D%22node%22%7D%5B30m%5D)" |
        jq -c '{failed_scrapes: .data.result[0].value[1]}' | logf
    journalctl -u numaguard --no-pager -o cat | grep -i cyclops | tail -5 | logf
fi
result cyclops-fires

# ---- the placement fixed: the finding clears, the alert with it
"$NGCTL" rebalance "$cyclops" > "$T/rebalance" 2>&1 || { logf "$T/rebalance"; fail "numaguardctl rebalance exited $?"; }
until_ok 60 eval '! curl -sf "http://$NODE/metrics" | grep -q "^numaguard_findings_active{code=\"CYCLOPS\",.*db_instance=\"$cyclops\""' ||
    fail "CYCLOPS of $cyclops still in the metrics after rebalance"
settle
until_ok 60 eval '[ "$(am_alerts NumaguardCyclops "$sel")" = "[]" ]' ||
    fail "NumaguardCyclops still in alertmanager after the fix: $(am_alerts NumaguardCyclops "$sel")"
expect "NumaguardCyclops still '$(prom_alert_state NumaguardCyclops)' in prometheus" test -z "$(prom_alert_state NumaguardCyclops)"
result cyclops-clears

# ---- killed: numaguard_up stays 1, the last poll grows old, NumaguardDown fires
mkdir -p /run/systemd/system/numaguard.service.d
printf '[Service]\nRestart=no\n' > /run/systemd/system/numaguard.service.d/e2e-prometheus.conf
at_exit "rm -f /run/systemd/system/numaguard.service.d/e2e-prometheus.conf; systemctl daemon-reload; systemctl start numaguard"
systemctl daemon-reload
systemctl kill --signal=SIGKILL numaguard
until_ok 30 eval '[ "$(prop ActiveState)" != active ]' || fail "numaguardd still $(prop ActiveState) after SIGKILL"
expect "numaguard_up is not 1 after SIGKILL" eval 'grep -qx "numaguard_up 1" "$metrics"'
settle
expect "NumaguardDown '$(prom_alert_state NumaguardDown)' right after the kill" test -z "$(prom_alert_state NumaguardDown)"
WATCH=NumaguardDown forward 20
a=$(am_alerts NumaguardDown)
log "alertmanager: $a"
expect "NumaguardDown not active in alertmanager 20 min after SIGKILL: $a" \
    jqe --arg n "$NODE" 'length == 1 and .[0].status.state == "active" and .[0].labels.instance == $n' <<<"$a"
jq . <<<"$a" | record "Alertmanager /api/v2/alerts: NumaguardDown (SIGKILL)"
result down-fires-on-kill

# ---- back, then stopped on purpose: numaguard_up 0, no NumaguardDown
systemctl start numaguard || fail "systemctl start numaguard"
until_ok 60 eval '"$NGCTL" status > /dev/null 2>&1; [ $? -le 2 ]' || fail "numaguardd does not answer after start"
settle
until_ok 60 eval '[ "$(am_alerts NumaguardDown)" = "[]" ]' || fail "NumaguardDown still active after the start"
systemctl stop numaguard || fail "systemctl stop numaguard"
expect "numaguard_up is not 0 after systemctl stop" eval 'grep -qx "numaguard_up 0" "$metrics"'
settle
forward 20
expect "NumaguardDown is '$(prom_alert_state NumaguardDown)' 20 min after systemctl stop" test -z "$(prom_alert_state NumaguardDown)"
expect "NumaguardDown in alertmanager after systemctl stop: $(am_alerts NumaguardDown)" test "$(am_alerts NumaguardDown)" = "[]"
curl -sf "http://$PROM/api/v1/query?query=numaguard_up" | jq -c '.data.result[] | {metric: .metric.instance, value: .value[1]}' |
    record "numaguard_up after systemctl stop"
systemctl start numaguard || fail "systemctl start numaguard (after the stop)"
result down-silent-on-stop
