#!/usr/bin/env bash
# The nightly's published page: tonight's run with the results of the last NIGHTS nights before it (failed nights
# too, wherever they uploaded what they recorded), oldest first, in one report whose trend section spans them.
# The workflow (.github/workflows/nightly-bench.yml) runs exactly this; so can you, with `gh` logged in, or with a
# stand-in for `gh` on PATH as tests/test_nightly_page.py does.
#
#   tools/nightly_page.sh TONIGHT_RUN_DIR OUT_DIR [NIGHTS]
set -euo pipefail
if [ $# -lt 2 ]; then
  echo "usage: tools/nightly_page.sh TONIGHT_RUN_DIR OUT_DIR [NIGHTS]" >&2
  exit 2
fi
tonight=$1
out=$2
nights=${3:-7}
python=${PYTHON:-.venv/bin/python}
[ -f "${tonight}/benchmark.json" ] || { echo "nightly: ${tonight} holds no benchmark.json" >&2; exit 2; }

work=$(mktemp -d)
trap 'rm -rf "${work}"' EXIT
runs=()
# newest first; a night still running (this one) is not "completed"
ids=$(gh run list --workflow nightly-bench.yml --branch "${GITHUB_REF_NAME:-main}" --status completed \
        --limit "${nights}" --json databaseId --jq '.[].databaseId')
for id in ${ids}; do
  if gh run download "${id}" --name cowmor-results --dir "${work}/${id}" >/dev/null 2>&1; then
    for run in "${work}/${id}"/nightly-*/; do
      [ -f "${run}benchmark.json" ] && runs=("${run%/}" "${runs[@]}")
    done
  else
    echo "nightly: night ${id} left no results (cancelled or timed out before its upload)"
  fi
done
echo "nightly: the page spans ${#runs[@]} earlier night(s) and tonight"
"${python}" -m bench report "${runs[@]}" "${tonight}" -o "${out}"
