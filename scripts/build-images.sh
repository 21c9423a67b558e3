#!/usr/bin/env bash
# Builds the runtime images under images/ on the local engine, from the local Debian base
# (built first when missing). No registry is involved.
#
# Usage: scripts/build-images.sh [sandbox]   (no argument: all)
set -euo pipefail
repo_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
log() { printf '[build-images] %s\n' "$*"; }

docker image inspect platform/debian-base:bookworm >/dev/null 2>&1 || bash "$repo_root/scripts/build-test-images.sh" debian-base

targets=("$@")
[ "${#targets[@]}" -eq 0 ] && targets=(sandbox)
for target in "${targets[@]}"; do
  case "$target" in
    sandbox)
      if [ "${FORCE:-0}" != 1 ] && docker image inspect platform/sandbox:bookworm >/dev/null 2>&1; then
        log "platform/sandbox:bookworm exists, kept (FORCE=1 rebuilds)"
        continue
      fi
      log "building platform/sandbox:bookworm (a few minutes: apt installs the toolchain)"
      docker build -q -t platform/sandbox:bookworm "$repo_root/images/sandbox"
      docker run --rm --network none platform/sandbox:bookworm sh -c 'command -v nc && command -v python3 && command -v node' >/dev/null
      log "platform/sandbox:bookworm built"
      ;;
    *) printf 'unknown image %s (sandbox)\n' "$target" >&2; exit 1 ;;
  esac
done
