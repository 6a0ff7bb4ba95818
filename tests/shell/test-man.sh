#!/usr/bin/env bash
# suite: alongside
# The man pages: `mandoc -T lint -W warning` finds nothing (a full date in
# .TH, no empty paragraphs, no broken macros), and each names its date in
# full (YYYY-MM-DD). mandoc comes with `tests/install-deps test`.
set -u
SRC=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd -P)
pages=("$SRC"/man/*.[1-8])
echo "1..$((2 * ${#pages[@]}))"
for m in "${pages[@]}"; do
        n=${m##*/}
        if ! command -v mandoc > /dev/null; then
                echo "skip man-$n-lint: mandoc not installed"
        elif out=$(mandoc -T lint -W warning "$m" 2>&1) && [ -z "$out" ]; then
                echo "ok man-$n-lint"
        else
                echo "not ok man-$n-lint: $(head -5 <<<"$out" | tr '\n' ' ')"
        fi
        if head -1 "$m" | grep -qE '^\.TH [^ ]+ [1-8] "[0-9]{4}-[0-9]{2}-[0-9]{2}" '; then
                echo "ok man-$n-date"
        else
                echo "not ok man-$n-date: $(head -1 "$m")"
        fi
done
