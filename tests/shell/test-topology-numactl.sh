#!/usr/bin/env bash
# `numaguardctl topology --json` on this live host against `numactl
# --hardware`: node ids, CPUs, sizes (numactl prints MemTotal in MiB) and the
# distance matrix.
set -u
echo 1..2
cd "$(dirname "$0")/../.."
CTL=${BUILD:-build}/numaguardctl
command -v numactl >/dev/null || { echo "skip topology-numactl: numactl not installed"; exit 77; }
command -v jq >/dev/null || { echo "skip topology-numactl: jq not installed"; exit 77; }
hw=$(numactl --hardware) || { echo "skip topology-numactl: numactl --hardware failed (no NUMA support)"; exit 77; }
js=$("$CTL" topology --json) || { echo "not ok topology-numactl: numaguardctl failed"; exit 1; }

# numactl's view, one line per node: "id|cpus space-separated|size MB"
want=$(awk '/^node [0-9]+ cpus:/ { id=$2; $1=$2=$3=""; sub(/^ +/, ""); cpus[id]=$0; ids[++n]=id }
            /^node [0-9]+ size:/ { size[$2]=$4 }
            END { for (i = 1; i <= n; i++) print ids[i] "|" cpus[ids[i]] "|" size[ids[i]] }' <<< "$hw")
have=$(jq -r '.nodes[] | "\(.id)|\(.cpus)|\(.mem_total_kib / 1024 | floor)"' <<< "$js" |
        while IFS='|' read -r id list mb; do
                cpus=""
                IFS=, read -ra parts <<< "$list"
                for p in "${parts[@]}"; do
                        [ -z "$p" ] && continue
                        if [[ $p == *-* ]]; then cpus+=" $(seq -s ' ' "${p%-*}" "${p#*-}")"; else cpus+=" $p"; fi
                done
                echo "$id|${cpus# }|$mb"
        done)
if [ "$want" = "$have" ]; then echo "ok topology-numactl-nodes"; else
        echo "not ok topology-numactl-nodes"; diff <(echo "$want") <(echo "$have") | sed 's/^/#   /'; fi

want=$(awk '/^node distances:/ { on=1; next } on && /^ *[0-9]+:/ { $1=""; sub(/^ +/, ""); print }' <<< "$hw")
have=$(jq -r '.nodes[] | .distances | map(tostring) | join(" ")' <<< "$js")
if [ "$want" = "$have" ]; then echo "ok topology-numactl-distances"; else
        echo "not ok topology-numactl-distances"; diff <(echo "$want") <(echo "$have") | sed 's/^/#   /'; fi
