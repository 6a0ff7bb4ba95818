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
# Time. The rules' own durations are kept (for: 15m, 600 s + for: 5m;
# promtool's unit tests, tests/prometheus/, check each for: to the minute).
# The guest's clock is moved forward instead, in single steps: 16 minutes
# once the cyclops is pending, 11 then 6 after the kill, 11 after the stop.
# Prometheus runs with --query.lookback-delta=20m, longer than any step, so
# that the evaluation after a step still sees the last scrape before it
# (with the default 5 minutes a pending alert would lose its series and
# restart its for:); a series that leaves the metrics file still ends at
# once, with the staleness marker of the next scrape. Scrape every 2 s,
# evaluation every 1 s; every wait polls Prometheus' or Alertmanager's API
# with a deadline (the rule's lastEvaluation, the target's lastScrape, the
# alert itself), none sleeps a guessed time. The clock is put back at the
# end. The binaries come from the host's userland (tests/install-deps
# installs prometheus, prometheus-node-exporter and prometheus-alertmanager).
. "${E2E_DIR:-${0%/cases/*}}/lib.sh"
plan 5
need_ctl
[ "$(cat /proc/1/comm)" = systemd ] || abort "PID 1 is $(cat /proc/1/comm), not systemd (numa-vm --systemd)"
NGCTL=/usr/bin/numaguardctl CONF=/etc/numaguard/numaguard.conf
RULES=/usr/share/numaguard/numaguard.rules.yml
TEXTFILE_DIR=/var/lib/prometheus/node-exporter
PROM=127.0.0.1:19090 AM=127.0.0.1:19093 NODE=127.0.0.1:9100
up_s() { local u; read -r u _ < /proc/uptime; echo "${u%.*}"; }
T0=$(up_s)
# phase NAME: a diagnostic with the seconds spent so far (monotonic)
phase() { log "[+$(( $(up_s) - T0 )) s] $*"; }
# until_ok SECONDS CMD...: CMD until it succeeds, for SECONDS of monotonic
# time (the clock steps below do not shorten it); every try of a curl | jq
# pipeline takes a second or more under TCG
until_ok() {
    local end=$(( $(up_s) + $1 )); shift
    while :; do
        "$@" && return 0
        (( $(up_s) < end )) || return 1
        sleep 0.5
    done
}
# Case service installs the packages; run alone (-c prometheus-chain), the
# case installs them as service does.
if ! [ -x "$NGCTL" ]; then
    V=$(sed -n 's/^VERSION := //p' "$ROOT/Makefile") arch=$(dpkg --print-architecture)
    P=${NUMAGUARD_E2E_DEBS:-$ROOT/build-deb/packages}
    rm -f /var/lib/man-db/auto-update
    dpkg -i "$P/libnumaguard0_${V}_$arch.deb" "$P/numaguard_${V}_$arch.deb" > "$T/dpkg.log" 2>&1 ||
        { logf "$T/dpkg.log"; abort "dpkg -i failed"; }
    phase "packages installed"
fi
until_ok 60 systemctl is-active -q numaguard || abort "the numaguard service is not active"
for b in prometheus prometheus-alertmanager prometheus-node-exporter promtool; do
    command -v $b > /dev/null || abort "$b missing on the host (tests/install-deps installs it)"
done
[ -f "$RULES" ] || abort "$RULES not installed by the package"
cmp -s "$RULES" "$ROOT/conf/numaguard.rules.yml" || abort "$RULES differs from conf/numaguard.rules.yml"
RECORD=$REC_DIR/prometheus-record.txt
mkdir -p "$REC_DIR" && : > "$RECORD"
record() { { echo "### $1"; cat; echo; } >> "$RECORD"; }
jqe() { jq -e "$@" > /dev/null; }
prop() { systemctl show -P "$1" numaguard; }

# ---- what Prometheus and Alertmanager say (one curl and one jq each)
# am_alerts NAME [JQ FILTER]: the alert's objects as Alertmanager's API lists them
am_alerts() { curl -sf "http://$AM/api/v2/alerts?active=true&silenced=true&inhibited=true" |
    jq -c --arg n "$1" "[.[] | select(.labels.alertname == \$n)${2:+ | select($2)}]"; }
# rule NAME: "LASTEVAL STATE" of the alerting rule: the time of its last
# evaluation (unix seconds) and inactive, pending or firing
rule() { curl -sf "http://$PROM/api/v1/rules?type=alert" | jq -r --arg n "$1" '.data.groups[].rules[]
    | select(.name == $n) | "\(.lastEvaluation | sub("\\.[0-9]+"; "") | fromdateiso8601) \(.state)"'; }
# rule_after NAME SECS [STATE]: RULE_STATE of rule NAME at an evaluation
# that began after SECS (unix time), with STATE: the first one in that state;
# 1 when there was none within 90 s. (until_ok evals its command in its own
# frame: the command reads locals, not $1.)
rule_after() {
    local r= name=$1 after=$2 want=${3:-}
    until_ok 90 eval 'r=$(rule "$name") && (( ${r%% *}+0 > after )) && [[ -z $want || $r == *" $want" ]]' ||
        { fail "rule $name not evaluated${want:+ as $want} after $(date -u -d "@$after" +%T): ${r:-no answer}"
          RULE_STATE=; return 1; }
    RULE_STATE=${r#* }
}
# scrape_failed_since SECS: a scrape of node_exporter failed since SECS (up 0)
scrape_failed_since() {
    [ "$(curl -sf "http://$PROM/api/v1/query?query=min_over_time(up%7Bjob%3D%22node%22%7D%5B$(( $(date +%s) - $1 + 1 ))s%5D)" |
        jq -r '.data.result[0].value[1] // "none"')" = 0 ]
}

# ---- the clock: forward in single steps, back at the end
JUMPED=0
at_exit 'date -s "@$(( $(date +%s) - JUMPED ))" > /dev/null'
# forward MINUTES NAME: the guest's clock MINUTES ahead, then the first
# evaluation of rule NAME after the step (RULE_STATE)
forward() {
    local to=$(( $(date +%s) + $1 * 60 ))
    date -s "@$to" > /dev/null || { fail "date -s failed"; return 1; }
    JUMPED=$((JUMPED + $1 * 60))
    rule_after "$2" "$to" || return 1
    phase "clock $1 min ahead ($(date -u +%T)): $2 $RULE_STATE"
}

# fire NAME MINUTES: NAME pending, the clock MINUTES ahead, NAME firing.
# A scrape that fails under a starved guest writes staleness markers: the
# pending alert loses its series and its for: starts again at the next
# scrape (Prometheus as it should be). Only then, seen in up, once more.
fire() {
    local name=$1 min=$2 try t
    for try in 1 2 3; do
        rule_after "$name" "$(date +%s)" pending || return 1
        phase "$name pending"
        t=$(date +%s)
        forward "$min" "$name" || return 1
        [ "$RULE_STATE" = firing ] && return 0
        scrape_failed_since "$t" || break
        log "a scrape of node_exporter failed while $name was pending: its for: started again"
    done
    fail "$name is '$RULE_STATE' $min min after it was pending, expected firing"
    return 1
}

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

# ---- Alertmanager: one null receiver, its own port and storage, short
# group timers (its API lists an alert as soon as it is received anyway)
cat > "$T/am.yml" <<'EOF'
global:
  resolve_timeout: 1m
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

# ---- Prometheus: the shipped rules, unchanged; short intervals. TZ=UTC:
# the rules API's lastEvaluation in Z form for jq's fromdateiso8601.
cat > "$T/prometheus.yml" <<EOF
global:
  scrape_interval: 3s
  scrape_timeout: 3s
  evaluation_interval: 1s
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
TZ=UTC prometheus --config.file="$T/prometheus.yml" --storage.tsdb.path="$T/prom-data" --web.listen-address="$PROM" \
    --query.lookback-delta=20m > "$T/prom.log" 2>&1 &
at_exit "kill $!"

# ---- node_exporter as Debian ships and starts it: its unit, its
# /etc/default file, its textfile directory. Only the textfile collector:
# under TCG the default collectors together outlast a short scrape.
cp /etc/default/prometheus-node-exporter "$T/node-exporter.default"
at_exit "cp $T/node-exporter.default /etc/default/prometheus-node-exporter"
printf 'ARGS="--collector.disable-defaults --collector.textfile --web.disable-exporter-metrics"\n' > /etc/default/prometheus-node-exporter
systemctl start prometheus-node-exporter || fail "systemctl start prometheus-node-exporter"
at_exit "systemctl stop prometheus-node-exporter"
until_ok 120 eval 'curl -sf "http://$NODE/metrics" | grep -q "^numaguard_up 1"' ||
    fail "node_exporter ($(systemctl show -P ActiveState prometheus-node-exporter)) does not serve numaguard_up 1 from $TEXTFILE_DIR"
curl -sf "http://$NODE/metrics" | grep -E '^(numaguard_up|node_textfile_scrape_error|node_textfile_mtime_seconds)' |
    record "node_exporter: numaguard's textfile"
phase "node_exporter serves numaguard's metrics"
until_ok 180 eval 'curl -sf "http://$AM/-/ready" > /dev/null' || { logf "$T/am.log"; abort "alertmanager not ready"; }
phase "alertmanager ready"
until_ok 180 eval 'curl -sf "http://$PROM/-/ready" > /dev/null' || { logf "$T/prom.log"; abort "prometheus not ready"; }
phase "prometheus ready"
want=$(grep -c '^ *- alert:' "$RULES")
n=$(curl -sf "http://$PROM/api/v1/rules" | jq '[.data.groups[] | select(.file == "'"$RULES"'") | .rules[]] | length')
log "prometheus loaded $n rules from $RULES"
expect "prometheus loaded ${n:-no} rules from $RULES, expected $want" test "${n:-0}" = "$want"
until_ok 60 eval '[ "$(curl -sf "http://$PROM/api/v1/query?query=numaguard_up" | jq -r ".data.result[0].value[1]")" = 1 ]' ||
    fail "prometheus has no numaguard_up 1 from node_exporter: $(curl -sf "http://$PROM/api/v1/targets" |
        jq -c "[.data.activeTargets[] | {health, lastError, lastScrapeDuration}]")"
until_ok 60 eval 'curl -sf "http://$PROM/api/v1/alertmanagers" | jqe ".data.activeAlertmanagers | length == 1"' ||
    fail "prometheus does not know the alertmanager"
curl -sf "http://$PROM/api/v1/targets" | jq -c '.data.activeTargets[] | {job: .labels.job, instance: .labels.instance, health, lastError}' |
    record "prometheus targets"
((FAILS)) && { logf "$T/prom.log"; logf "$T/am.log"; }
result chain-up

# scrape_report: how scrapes went (a failed one writes staleness markers,
# which restart a pending alert's for:)
scrape_report() {
    curl -sf "http://$PROM/api/v1/query?query=count_over_time(up%7Bjob%3D%22node%22%7D%5B2h%5D)-sum_over_time(up%7Bjob%3D%22node%22%7D%5B2h%5D)" |
        jq -c '{failed_scrapes: .data.result[0].value[1]}' | logf
    curl -sf "http://$PROM/api/v1/query?query=max_over_time(scrape_duration_seconds%7Bjob%3D%22node%22%7D%5B2h%5D)" |
        jq -c '{longest_scrape_s: .data.result[0].value[1]}' | logf
}
# show_am TITLE JSON: Alertmanager's answer, in the record and (with -v) here
show_am() { jq . <<<"$2" | record "Alertmanager /api/v2/alerts: $1"; log "Alertmanager /api/v2/alerts: $1"; jq . <<<"$2" | logf; }

# ---- a cyclops: pending, then firing in Alertmanager with its labels
wl_start numactl --membind="$CYCLOPS_NODE" -- sysv -s 16 -p 1 || abort "cyclops workload"
cyclops=unclaimed:shmid-$WL_SHMID
phase "cyclops $cyclops started"
sel='.labels.db_instance == "'"$cyclops"'"'
# pending at once (for: 15m), not firing; firing 16 minutes later
fire NumaguardCyclops 16
a=
until_ok 60 eval 'a=$(am_alerts NumaguardCyclops "$sel"); jqe "length == 1" <<<"$a"' || true
phase "NumaguardCyclops in alertmanager"
expect "NumaguardCyclops for $cyclops not active in alertmanager 16 min after it was pending: $a" \
    jqe --arg i "$cyclops" --arg n "$NODE" 'length == 1 and .[0].status.state == "active" and .[0].labels.db_instance == $i
        and .[0].labels.severity == "warning" and .[0].labels.instance == $n and .[0].labels.job == "node"' <<<"$a"
show_am NumaguardCyclops "$a"
if ((FAILS)); then
    scrape_report
    journalctl -u numaguard --no-pager -o cat | grep -i cyclops | tail -5 | logf
fi
result cyclops-fires

# ---- the placement fixed: the finding clears, the alert with it
"$NGCTL" rebalance "$cyclops" > "$T/rebalance" 2>&1 || { logf "$T/rebalance"; fail "numaguardctl rebalance exited $?"; }
until_ok 60 eval '! curl -sf "http://$NODE/metrics" | grep -q "^numaguard_findings_active{code=\"CYCLOPS\",.*db_instance=\"$cyclops\""' ||
    fail "CYCLOPS of $cyclops still in the metrics after rebalance"
phase "rebalanced: the finding left the metrics"
until_ok 60 eval '[ "$(am_alerts NumaguardCyclops "$sel")" = "[]" ]' ||
    fail "NumaguardCyclops still in alertmanager after the fix: $(am_alerts NumaguardCyclops "$sel")"
rule_after NumaguardCyclops "$(date +%s)" &&
    expect "NumaguardCyclops still '$RULE_STATE' in prometheus" test "$RULE_STATE" = inactive
phase "NumaguardCyclops cleared"
result cyclops-clears

# ---- killed: numaguard_up stays 1, the last poll grows old, NumaguardDown fires
mkdir -p /run/systemd/system/numaguard.service.d
printf '[Service]\nRestart=no\n' > /run/systemd/system/numaguard.service.d/e2e-prometheus.conf
at_exit "rm -f /run/systemd/system/numaguard.service.d/e2e-prometheus.conf; systemctl daemon-reload; systemctl start numaguard"
systemctl daemon-reload
systemctl kill --signal=SIGKILL numaguard
until_ok 30 eval '[ "$(prop ActiveState)" != active ]' || fail "numaguardd still $(prop ActiveState) after SIGKILL"
expect "numaguard_up is not 1 after SIGKILL" eval 'grep -qx "numaguard_up 1" "$metrics"'
rule_after NumaguardDown "$(date +%s)" &&
    expect "NumaguardDown '$RULE_STATE' right after the kill" test "$RULE_STATE" = inactive
forward 11 NumaguardDown && expect "NumaguardDown '$RULE_STATE' 11 min after the kill, expected pending (for: 5m)" test "$RULE_STATE" = pending
fire NumaguardDown 6
a=
until_ok 60 eval 'a=$(am_alerts NumaguardDown); jqe "length == 1" <<<"$a"' || true
expect "NumaguardDown not active in alertmanager 17 min after SIGKILL: $a" \
    jqe --arg n "$NODE" 'length == 1 and .[0].status.state == "active" and .[0].labels.instance == $n' <<<"$a"
show_am "NumaguardDown (SIGKILL)" "$a"
((FAILS)) && scrape_report
result down-fires-on-kill

# ---- back, then stopped on purpose: numaguard_up 0, no NumaguardDown
systemctl start numaguard || fail "systemctl start numaguard"
until_ok 60 eval '[ "$(am_alerts NumaguardDown)" = "[]" ]' || fail "NumaguardDown still active after the start"
phase "NumaguardDown cleared by the start"
systemctl stop numaguard || fail "systemctl stop numaguard"
expect "numaguard_up is not 0 after systemctl stop" eval 'grep -qx "numaguard_up 0" "$metrics"'
until_ok 60 eval '[ "$(curl -sf "http://$PROM/api/v1/query?query=numaguard_up" | jq -r ".data.result[0].value[1]")" = 0 ]' ||
    fail "prometheus does not scrape numaguard_up 0 after the stop"
# 11 minutes: the killed daemon's alert was pending by then; with
# numaguard_up 0 the expression is empty, and stays so while the file does
forward 11 NumaguardDown && expect "NumaguardDown is '$RULE_STATE' 11 min after systemctl stop" test "$RULE_STATE" = inactive
expect "NumaguardDown in alertmanager after systemctl stop: $(am_alerts NumaguardDown)" test "$(am_alerts NumaguardDown)" = "[]"
curl -sf "http://$PROM/api/v1/query?query=numaguard_up" | jq -c '.data.result[] | {metric: .metric.instance, value: .value[1]}' |
    record "numaguard_up after systemctl stop"
((FAILS)) && scrape_report
systemctl start numaguard || fail "systemctl start numaguard (after the stop)"
phase "done"
result down-silent-on-stop
