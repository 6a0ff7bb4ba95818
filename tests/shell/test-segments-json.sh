#!/usr/bin/env bash
# suite: alongside
# segments --json as numaguardctl(1) documents it, for each kind of segment
# in trees captured from real guests (--root): every documented key present
# with its documented type, shmid and key -1 for what is not System V, dest
# and locked (booleans) for System V only, and every key the output has is
# named in the man page's "segments --json" section.
set -u
SRC=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd -P)
B=${BUILD:-build}
CTL=$SRC/$B/numaguardctl
trees=(guest4-v2 guest4-6.12 guest-memonly)
echo "1..$((${#trees[@]} + 1))"
[ -x "$CTL" ] || { for t in "${trees[@]}"; do echo "not ok segments-json-$t: $CTL not built"; done; echo "not ok segments-json-man: no build"; exit 0; }
# KEY:TYPES (jq's type names; a|b: either)
spec=(kind:string name:string shmid:number key:number uid:number bytes:number\|null page_kib:number huge:boolean
      nattch:number pids:array representative_pid:number method:string resident_bytes:number
      resident_source:string placement_source:string placement_coverage:number\|null nodes:array policy:string\|null)
jspec=$(printf '%s\n' "${spec[@]}" | jq -R 'split(":") | {key: .[0], value: (.[1] | split("|"))}' | jq -s from_entries)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for t in "${trees[@]}"; do
        out=$tmp/$t.json
        if ! "$CTL" --root "$SRC/tests/fixtures/trees/$t" segments --json > "$out" 2> "$tmp/err"; then
                echo "not ok segments-json-$t: exit $?: $(head -3 "$tmp/err" | tr '\n' ' ')"; continue
        fi
        bad=$(jq -r --argjson spec "$jspec" '
            [.segments[] as $s
             | ($spec | to_entries[] as $e
                | select(($s | has($e.key) | not) or (($e.value | index($s[$e.key] | type)) == null))
                | "\($s.kind) \($s.name): \($e.key) is \($s[$e.key] | type), documented \($e.value | join(" or "))"),
               (if $s.kind == "sysv"
                then (if ($s.dest | type) != "boolean" or ($s.locked | type) != "boolean"
                      then "\($s.name): dest/locked not booleans" else empty end)
                else (if $s.shmid != -1 or $s.key != -1 then "\($s.name): shmid/key \($s.shmid)/\($s.key), documented -1"
                      elif ($s | has("dest")) or ($s | has("locked")) then "\($s.name): dest/locked outside System V"
                      else empty end) end)
            ] | .[:5] | join("; ")' "$out" 2>&1) || bad="jq failed: $bad"
        kinds=$(jq -r '[.segments[].kind] | unique | join(",")' "$out")
        if [ -n "$bad" ]; then echo "not ok segments-json-$t: $bad"
        elif [ -z "$kinds" ]; then echo "not ok segments-json-$t: no segment in the tree"
        else echo "ok segments-json-$t ($kinds)"; fi
done
# every key the output has is in the man page's section
sect=$(awk '/^\.SS "segments \\-\\-json"/ { on = 1; next } on && /^\.SS/ { exit } on' "$SRC/man/numaguardctl.1")
missing=""
for k in $(cat "$tmp"/*.json | jq -r '.segments[] | keys[]' | sort -u); do
        grep -qE "^\.BR? $k( |$)|^\.BR? $k\[\]|^\.RB \(\{ $k " <<<"$sect" || missing+=" $k"
done
if [ -n "$missing" ]; then echo "not ok segments-json-man: not in numaguardctl(1) 'segments --json':$missing"
else echo "ok segments-json-man"; fi
