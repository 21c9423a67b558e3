#!/usr/bin/env bash
# Builds the local images that tests run containers from, without any image registry:
#
#   platform/busybox:latest        busybox-static (Debian package) in an empty root, with applet links
#   platform/debian-base:bookworm  a debootstrap --variant=minbase bookworm root from the machine's apt mirror
#
# Usage: scripts/build-test-images.sh [busybox] [debian-base]   (no argument: both)
# An image that already exists is kept; FORCE=1 rebuilds it. Needs root (debootstrap, apt-get)
# and a running Docker engine. DEBIAN_MIRROR overrides the mirror read from /etc/apt.
set -euo pipefail

repo_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build_dir="${IMAGES_BUILD_DIR:-$repo_root/images/.build}"
busybox_image="platform/busybox:latest"
debian_image="platform/debian-base:bookworm"
suite="bookworm"

log() { printf '[build-test-images] %s\n' "$*"; }
die() { printf '[build-test-images] error: %s\n' "$*" >&2; exit 1; }

image_exists() { docker image inspect "$1" >/dev/null 2>&1; }

need_root() {
  [ "$(id -u)" -eq 0 ] || die "$1 needs root"
}

# Installs Debian packages that are missing (apt lists are refreshed once per run).
apt_updated=0
ensure_packages() {
  local missing=()
  for pkg in "$@"; do
    dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q 'install ok installed' || missing+=("$pkg")
  done
  [ "${#missing[@]}" -eq 0 ] && return 0
  need_root "installing ${missing[*]}"
  log "installing ${missing[*]}"
  mkdir -p "$build_dir"
  if [ "$apt_updated" -eq 0 ]; then
    apt-get update -qq </dev/null >"$build_dir/apt.log" 2>&1 || { tail -n 20 "$build_dir/apt.log" >&2; die "apt-get update failed"; }
    apt_updated=1
  fi
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" </dev/null >>"$build_dir/apt.log" 2>&1 ||
    { tail -n 20 "$build_dir/apt.log" >&2; die "apt-get install ${missing[*]} failed"; }
}

# The first Debian archive (not the security one) the machine's apt sources name, in either
# the one-line format (sources.list, *.list) or deb822 (*.sources).
debian_mirror() {
  if [ -n "${DEBIAN_MIRROR:-}" ]; then
    printf '%s\n' "$DEBIAN_MIRROR"
    return
  fi
  local files=() mirror=""
  [ -f /etc/apt/sources.list ] && files+=(/etc/apt/sources.list)
  for f in /etc/apt/sources.list.d/*.list /etc/apt/sources.list.d/*.sources; do
    [ -f "$f" ] && files+=("$f")
  done
  if [ "${#files[@]}" -gt 0 ]; then
    mirror="$(
      awk '
        /^[[:space:]]*#/ { next }
        /^deb[[:space:]]/ {
          for (i = 2; i <= NF; i++) if ($i ~ /^(https?|file):/) { print $i; break }
          next
        }
        /^URIs:/ { for (i = 2; i <= NF; i++) print $i }
      ' "${files[@]}" | grep -v -e security -e nodesource -e google | grep -i debian | head -n 1
    )"
  fi
  printf '%s\n' "${mirror:-http://deb.debian.org/debian}"
}

build_busybox() {
  if [ "${FORCE:-0}" != 1 ] && image_exists "$busybox_image"; then
    log "$busybox_image exists, kept"
    return 0
  fi
  ensure_packages busybox-static
  local busybox=/bin/busybox
  [ -x "$busybox" ] || busybox=/usr/bin/busybox
  [ -x "$busybox" ] || die "busybox-static is installed but no busybox binary was found"
  # A dynamically linked busybox (package busybox) would not run in an empty root.
  if ldd "$busybox" >/dev/null 2>&1; then die "$busybox is dynamically linked; install busybox-static"; fi

  local root="$build_dir/busybox-root"
  rm -rf "$root"
  mkdir -p "$root"/{bin,sbin,usr/bin,usr/sbin,etc,tmp,root,proc,sys,dev,var/tmp}
  chmod 1777 "$root/tmp" "$root/var/tmp"
  cp "$busybox" "$root/bin/busybox"
  local applet
  for applet in $("$busybox" --list); do
    [ "$applet" = busybox ] || ln -sf busybox "$root/bin/$applet"
  done
  printf 'root:x:0:0:root:/root:/bin/sh\nnobody:x:65534:65534:nobody:/nonexistent:/bin/false\n' >"$root/etc/passwd"
  printf 'root:x:0:\nnogroup:x:65534:\n' >"$root/etc/group"
  log "importing $busybox_image"
  tar -C "$root" -c . | docker import \
    -c 'ENV PATH=/bin:/sbin:/usr/bin:/usr/sbin' \
    -c 'CMD ["/bin/sh"]' \
    -m "busybox-static $(dpkg-query -W -f='${Version}' busybox-static)" \
    - "$busybox_image" >/dev/null
  rm -rf "$root"
  docker run --rm --network none "$busybox_image" /bin/sh -c 'echo busybox image works' >/dev/null
  log "$busybox_image built"
}

build_debian_base() {
  if [ "${FORCE:-0}" != 1 ] && image_exists "$debian_image"; then
    log "$debian_image exists, kept"
    return 0
  fi
  need_root "debootstrap"
  ensure_packages debootstrap
  local mirror root="$build_dir/debian-root"
  mirror="$(debian_mirror)"
  rm -rf "$root"
  mkdir -p "$build_dir"
  log "debootstrap --variant=minbase $suite from $mirror (a few minutes)"
  if ! debootstrap --variant=minbase "$suite" "$root" "$mirror" >"$build_dir/debootstrap.log" 2>&1; then
    tail -n 20 "$build_dir/debootstrap.log" >&2 || true
    die "debootstrap failed (log: $build_dir/debootstrap.log)"
  fi
  # Smaller image, and no package lists that would be stale anyway.
  rm -rf "$root"/var/cache/apt/archives/*.deb "$root"/var/lib/apt/lists/* "$root"/tmp/*
  log "importing $debian_image"
  tar -C "$root" --numeric-owner -c . | docker import \
    -c 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
    -c 'CMD ["/bin/bash"]' \
    -m "debootstrap --variant=minbase $suite $mirror" \
    - "$debian_image" >/dev/null
  rm -rf "$root"
  docker run --rm --network none "$debian_image" /bin/sh -c 'test -f /etc/debian_version' >/dev/null
  log "$debian_image built"
}

command -v docker >/dev/null 2>&1 || die "docker CLI not found"
docker info >/dev/null 2>&1 || die "no Docker engine answers (start dockerd, or set DOCKER_HOST)"
mkdir -p "$build_dir"

targets=("$@")
[ "${#targets[@]}" -eq 0 ] && targets=(busybox debian-base)
for target in "${targets[@]}"; do
  case "$target" in
    busybox) build_busybox ;;
    debian-base) build_debian_base ;;
    *) die "unknown image '$target' (busybox, debian-base)" ;;
  esac
done
