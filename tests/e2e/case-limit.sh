# shellcheck shell=bash
# Sourced by suite.sh (in the guest) and run-e2e (which bounds the guest's
# whole run by the sum of its cases' limits).
# A case's time limit: E2E_CASE_TIMEOUT when set; else the larger of the
# topology's CASE_TIMEOUT (default 300 s) and the case's own "# case-limit:
# N" line, for a case whose work grows with what it runs (its rows).
case_limit() {
    local own=0
    if [ -n "${E2E_CASE_TIMEOUT:-}" ]; then echo "$E2E_CASE_TIMEOUT"; return; fi
    [ -f "$1" ] && own=$(sed -n 's/^# case-limit: \([0-9][0-9]*\) s\b.*$/\1/p' "$1" | head -n1)
    own=${own:-0}
    local topo_limit=${CASE_TIMEOUT:-300}
    echo $((own > topo_limit ? own : topo_limit))
}

# The sum of case_limit over CASE...: what the cases of one guest may take.
cases_limit() {
    local c sum=0
    for c in "$@"; do sum=$((sum + $(case_limit "$E2E_DIR/cases/$c.sh"))); done
    echo "$sum"
}
