#!/bin/sh
# Lists the subject line of every commit since the latest tag (or since the first commit).
set -eu
since=$(git describe --tags --abbrev=0 2>/dev/null || git rev-list --max-parents=0 HEAD)
git log --no-merges --format='- %s' "$since..HEAD"
