#!/usr/bin/env bash
# Names other users choose are untrusted text. Processes on this host named
# as Oracle names its pmon, with SIDs that are not UTF-8 and carry a
# terminal escape sequence, a quote, a backslash, a newline or a bidi
# override, one of them mapping a /dev/shm file whose name has the same;
# numaguard discovers them as instances. Then:
#   numaguardctl audit and segments   text: UTF-8, no control character but
#                                     the newline, no C1 or bidi control, the
#                                     names shown escaped (\xff, \x1b, \u202e)
#   numaguardctl audit/segments --json  strict UTF-8 JSON
#   numaguardd --once                 metrics pass `promtool check metrics`;
#                                     alert lines are UTF-8 JSON; log lines clean
#   numaguardctl status [--json]      from a running numaguardd, the same
# The workloads are symlinks to ng-shm-workload under the hostile names (the
# kernel's comm is the first 15 bytes of the name, argv[0] the whole path).
# Runs as any user; promtool (Debian's prometheus) is needed for one case.
# BUILD: build directory (default build).
set -u
echo 1..11
SRC=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd -P)
BUILD=${BUILD:-build}
case $BUILD in /*) B=$BUILD ;; *) B=$SRC/$BUILD ;; esac
CTL=$B/numaguardctl D=$B/numaguardd WL=$B/tests/helpers/ng-shm-workload
[ -x "$CTL" ] && [ -x "$D" ] && [ -x "$WL" ] || { echo "not ok hostile: $CTL, $D or $WL not built"; exit 1; }
command -v python3 > /dev/null || { echo "not ok hostile: python3 not installed"; exit 1; }
tmp=$(mktemp -d)
chmod 755 "$tmp"
pids=() dpid=""
tag=$(($$ % 100000))
SHM=$'/dev/shm/ng-hostile-'$tag$'-\xfe\e]0;owned\a'
cleanup() {
        touch "$tmp/stop"
        [ -n "$dpid" ] && kill "$dpid" 2>/dev/null
        for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done
        wait 2>/dev/null
        rm -f "$SHM"
        rm -rf "$tmp"
}
trap cleanup EXIT
TAP_PREFIX=hostile; . "$SRC/tests/shell/lib.sh"

# The SIDs: not UTF-8 with SGR red; a quote, a backslash and a newline; a
# right-to-left override. Each ends with the run's tag, so that its
# instance is this run's own.
SID1=$'N\xff\e[31mZ'$tag SID2=$'Q"\\\nq'$tag SID3=$'R\u202eX'$tag
mkdir "$tmp/bin"
# start NAME ARGS...: the workload under NAME; waits for its report.
start() {
        local name=$1 f=$tmp/ready.$RANDOM$RANDOM; shift
        ln -sf "$WL" "$tmp/bin/$name"
        "$tmp/bin/$name" "$@" -r "$f" -S "$tmp/stop" > /dev/null 2>&1 &
        pids+=($!)
        for _ in $(seq 1 300); do [ -s "$f" ] && return 0; sleep 0.1; done
        return 1
}
if start "ora_pmon_$SID1" sysv -s 8 -p 1 && start "ora_pmon_$SID2" sysv -s 8 -p 1 &&
   start "ora_pmon_$SID3" file "$SHM" -s 4 -p 0; then
        pass workloads
else
        fail workloads "a workload did not start"; exit 1
fi
printf '[global]\nmin_segment_size = 1M\n' > "$tmp/ng.conf"

# text_clean FILE: UTF-8, no C0 control but the newline, no DEL, no C1
# control, no bidi control or line separator; prints what it found.
text_clean() {
        python3 - "$1" <<'EOF'
import sys
try:
    s = open(sys.argv[1], "rb").read().decode("utf-8")
except UnicodeDecodeError as e:
    print("# not UTF-8:", e); sys.exit(1)
hidden = set("\u061c\u200e\u200f\u2028\u2029\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")
bad = [c for c in s if (ord(c) < 0x20 and c != "\n") or 0x7f <= ord(c) <= 0x9f or c in hidden]
if bad:
    print("# control characters:", repr(sorted(set(bad)))); sys.exit(1)
EOF
}
# json_strict FILE [LINES]: strict UTF-8 JSON, one document or one per line.
json_strict() {
        python3 - "$@" <<'EOF'
import json, sys
try:
    s = open(sys.argv[1], "rb").read().decode("utf-8")
    docs = [json.loads(l) for l in s.splitlines() if l] if len(sys.argv) > 2 else [json.loads(s)]
except (UnicodeDecodeError, ValueError) as e:
    print("# not UTF-8 JSON:", e); sys.exit(1)
EOF
}

# ---- numaguardctl audit, segments: text and JSON
"$CTL" audit --config "$tmp/ng.conf" > "$tmp/audit.txt" 2> "$tmp/audit.err"
"$CTL" audit --config "$tmp/ng.conf" --verbose >> "$tmp/audit.txt" 2>> "$tmp/audit.err"
"$CTL" audit --config "$tmp/ng.conf" --json > "$tmp/audit.json" 2>> "$tmp/audit.err"
"$CTL" segments > "$tmp/segments.txt" 2>> "$tmp/audit.err"
"$CTL" segments --json > "$tmp/segments.json" 2>> "$tmp/audit.err"
if grep -qF "instance oracle:N\\xff\\x1b[31mZ$tag (oracle, discovered" "$tmp/audit.txt" &&
   grep -qF "instance oracle:Q\"\\\\x0aq$tag (oracle" "$tmp/audit.txt" &&
   grep -qF "instance oracle:R\\u202eX$tag (oracle" "$tmp/audit.txt" &&
   grep -qF "file /dev/shm/ng-hostile-$tag-\\xfe\\x1b]0;owned\\x07: 4 MiB" "$tmp/audit.txt"; then
        pass audit-text-escaped
else
        fail audit-text-escaped "the hostile instances are not shown escaped"; grep -a "^instance" "$tmp/audit.txt" | cat -v
fi
if out=$(text_clean "$tmp/audit.txt") && ! grep -qaF $'\e' "$tmp/audit.txt"; then pass audit-text-clean
else fail audit-text-clean "$out"; fi
if out=$(json_strict "$tmp/audit.json") && python3 - "$tmp/audit.json" "$tag" <<'EOF'
import json, sys
d = json.loads(open(sys.argv[1], "rb").read().decode("utf-8"))
names = {i["name"] for i in d["instances"]}
t = sys.argv[2]
want = {"oracle:N\ufffd\x1b[31mZ" + t, "oracle:Q\"\\\nq" + t, "oracle:R\u202eX" + t}
sys.exit(0 if want <= names else 1)
EOF
then pass audit-json
else fail audit-json "${out:-the hostile instances are not in the JSON}"; fi
if out=$(text_clean "$tmp/segments.txt") && out=$(json_strict "$tmp/segments.json") &&
   grep -qF "/dev/shm/ng-hostile-$tag-\\xfe\\x1b]0;owned\\x07" "$tmp/segments.txt"; then
        pass segments
else
        fail segments "${out:-the hostile file is not shown escaped}"
fi

# ---- numaguardd --once: metrics, alerts, log lines
printf '[global]\nmin_segment_size = 1M\nmetrics_file = %s\n' "$tmp/ng.prom" > "$tmp/once.conf"
"$D" --once --foreground --config "$tmp/once.conf" --alert-log "$tmp/alerts.jsonl" 2> "$tmp/once.err"
if [ ! -s "$tmp/ng.prom" ]; then
        fail metrics-promtool "numaguardd --once wrote no metrics: $(head -c 300 "$tmp/once.err")"
elif ! command -v promtool > /dev/null; then
        if [ "${CI:-}" = true ]; then fail metrics-promtool "promtool not installed (tests/install-deps test)"
        else echo "skip hostile-metrics-promtool: promtool not installed (apt-get install --no-install-recommends prometheus)"; fi
elif out=$(promtool check metrics < "$tmp/ng.prom" 2>&1); then pass metrics-promtool
else fail metrics-promtool "$out"; fi
if grep -qF "numaguard_instance_shared_bytes{db_instance=\"oracle:N"$'\xef\xbf\xbd\e'"[31mZ$tag\",type=\"oracle\"} 8388608" "$tmp/ng.prom" &&
   grep -qF "numaguard_instance_shared_bytes{db_instance=\"oracle:Q\\\"\\\\\\nq$tag\",type=\"oracle\"} 8388608" "$tmp/ng.prom" &&
   python3 -c 'import sys; open(sys.argv[1], "rb").read().decode("utf-8")' "$tmp/ng.prom"; then
        pass metrics-labels
else
        fail metrics-labels "no UTF-8 label for the hostile instances"; grep -a "instance_shared_bytes{" "$tmp/ng.prom" | cat -v
fi
if [ ! -s "$tmp/alerts.jsonl" ] || out=$(json_strict "$tmp/alerts.jsonl" lines); then
        pass alert-log "($(wc -l < "$tmp/alerts.jsonl" 2>/dev/null || echo 0) alerts)"
else
        fail alert-log "$out"
fi
if out=$(text_clean "$tmp/once.err"); then pass daemon-log; else fail daemon-log "$out"; fi

# ---- numaguardd running: numaguardctl status, text and JSON
printf '[global]\ninterval = 1s\nmin_segment_size = 1M\nsocket = %s\n' "$tmp/ctl.sock" > "$tmp/d.conf"
"$D" --foreground --config "$tmp/d.conf" --alert-log "$tmp/d-alerts.jsonl" 2> "$tmp/d.err" &
dpid=$!
for _ in $(seq 1 100); do
        "$CTL" status --json --socket "$tmp/ctl.sock" 2>/dev/null | grep -q '"instances"' && break
        sleep 0.1
done
"$CTL" status --socket "$tmp/ctl.sock" > "$tmp/status.txt" 2>&1
"$CTL" status --json --socket "$tmp/ctl.sock" > "$tmp/status.json" 2>&1
if out=$(text_clean "$tmp/status.txt") && grep -qF "  oracle:N\\xff\\x1b[31mZ$tag (oracle, pid" "$tmp/status.txt"; then
        pass status-text
else
        fail status-text "${out:-no escaped instance line}"; head -c 600 "$tmp/status.txt" | cat -v
fi
if out=$(json_strict "$tmp/status.json") && grep -qF "\"oracle:N"$'\xef\xbf\xbd'"\\u001b[31mZ$tag\"" "$tmp/status.json"; then
        pass status-json
else
        fail status-json "${out:-no hostile instance}"; head -c 600 "$tmp/status.json" | cat -v
fi
exit $((fails > 0))
