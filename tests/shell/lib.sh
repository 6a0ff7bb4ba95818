# The shell tests' result helpers, sourced after the plan line:
#
#   TAP_PREFIX=NAME; . "$(dirname "$0")/lib.sh"
#
# Results are named "NAME-CASE" (TAP_PREFIX empty: "CASE"); $fails counts the
# failures, for the test's last line ([ "$fails" = 0 ]).
#
#   pass CASE [NOTE]          ok NAME-CASE [NOTE]
#   fail CASE WHY             not ok NAME-CASE: WHY
#   check CASE WHY CMD...     pass when CMD succeeds, else fail with WHY
#   check_expr CASE EXPR WHY  the same for a shell expression (eval)
#   check_quiet CASE CMD...   CMD's output discarded; WHY is its command
#   skip_all WHY              the rest cannot run: under CI a failure
#                             (exit 1), elsewhere "skip NAME: WHY", exit 77
#
# tests/run-suite counts the lines against the plan (tests/e2e/README.md).

fails=0
pass() { echo "ok ${TAP_PREFIX:+$TAP_PREFIX-}$1${2:+ $2}"; }
fail() { echo "not ok ${TAP_PREFIX:+$TAP_PREFIX-}$1: $2"; fails=$((fails + 1)); }
check() {
        local name=$1 why=$2
        shift 2
        if "$@"; then pass "$name"; else fail "$name" "$why"; fi
}
check_expr() { if eval "$2"; then pass "$1"; else fail "$1" "$3"; fi; }
check_quiet() {
        local name=$1
        shift
        if "$@" > /dev/null 2>&1; then pass "$name"; else fail "$name" "$*"; fi
}
skip_all() {
        case ${CI:-} in
        "" | 0 | false | no) echo "skip ${TAP_PREFIX:-test}: $1"; exit 77 ;;
        esac
        echo "not ok ${TAP_PREFIX:-test}: $1"
        exit 1
}
