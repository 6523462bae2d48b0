#!/usr/bin/env bash
# Runs the server scenarios of the pinned MCP conformance suite against a running server, each
# run judged against its expected-failures baseline:
#
#   suite        what runs                                              baseline
#   0.1.16       @modelcontextprotocol/conformance 0.1.16, active suite baseline-0.1.16.yml
#   2025-11-25   0.2.0-alpha.12 with `--requirements 2025-11-25`        baseline-2025-11-25.yml
#   2026-07-28   0.2.0-alpha.12 with `--requirements 2026-07-28`        baseline-2026-07-28.yml
#
# Usage: tests/conformance/run.sh [--suite 0.1.16|2025-11-25|2026-07-28] [--output-dir DIR]
#                                 [--baseline-prefix P] [URL]
#
# --baseline-prefix P judges each run against P-<suite>.yml here instead (`gateway-baseline`:
# the conformance server behind mcp-gateway).
# URL defaults to http://127.0.0.1:3001/mcp, where `cargo run -p tests --bin conformance`
# listens. Without --suite all three runs are made. With --output-dir, each scenario's checks
# are written to DIR/<suite>/server-<scenario>-<time>/checks.json.
#
# Exits 0 when, in every run, each scored scenario outside the baseline passes and each
# baselined one still fails (a baselined scenario that passes is a stale entry: remove it);
# the suite reports the scenarios a revision does not score without judging them. Install
# the suite first with tests/conformance/setup.sh. `cargo test` does all this itself
# (tests/tests/conformance.rs), starting that server on a free port.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
node="$here/node_modules/.bin/node"

suites=(0.1.16 2025-11-25 2026-07-28)
output_dir=""
baseline_prefix="baseline"
url="http://127.0.0.1:3001/mcp"
while [[ $# -gt 0 ]]; do
    case "$1" in
        --suite) suites=("$2"); shift 2 ;;
        --baseline-prefix) baseline_prefix="$2"; shift 2 ;;
        --output-dir) output_dir="$2"; shift 2 ;;
        -h|--help) sed -n '2,20p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit 0 ;;
        -*) echo "run.sh: unknown option $1" >&2; exit 2 ;;
        *) url="$1"; shift ;;
    esac
done

if [[ ! -x "$node" || ! -d "$here/node_modules/conformance-0.1" || ! -d "$here/node_modules/conformance-0.2" ]]; then
    echo "run.sh: the conformance suite is not installed; run tests/conformance/setup.sh" >&2
    exit 2
fi

status=0
for suite in "${suites[@]}"; do
    case "$suite" in
        0.1.16) args=("$here/node_modules/conformance-0.1/dist/index.js" server --suite active) ;;
        2025-11-25|2026-07-28) args=("$here/node_modules/conformance-0.2/dist/index.js" server --requirements "$suite") ;;
        *) echo "run.sh: unknown suite $suite (expected 0.1.16, 2025-11-25 or 2026-07-28)" >&2; exit 2 ;;
    esac
    args+=(--url "$url" --expected-failures "$here/$baseline_prefix-$suite.yml")
    if [[ -n "$output_dir" ]]; then
        args+=(--output-dir "$output_dir/$suite")
    fi
    echo "==> conformance $suite against $url"
    if ! "$node" "${args[@]}"; then
        status=1
    fi
done
exit "$status"
