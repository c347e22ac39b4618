# Sourced by the package tests: a clean Debian 12 root made with mmdebstrap from Debian's apt
# repository, its mounts, and a cleanup that leaves nothing behind (processes running in it, its
# mounts, its files), also after a run that was killed: each root's dir holds its owner's pid, and
# a dir whose owner is gone is cleaned at the next run.
#
# The minbase tarball is cached in $BERTH_TEST_CACHE (default /var/cache/berth-test) for a week,
# and so are the .debs apt downloads into roots (their /var/cache/apt/archives is a bind mount of
# the cache): a run after the first downloads nothing it already has.

berth_test_cache=${BERTH_TEST_CACHE:-/var/cache/berth-test}
debian_sources=("deb http://deb.debian.org/debian bookworm main"
                "deb http://deb.debian.org/debian bookworm-updates main"
                "deb http://deb.debian.org/debian-security bookworm-security main")

# The cached minbase tarball's path, made (or refreshed after 7 days) when needed.
debian_base_tarball() {
  local tar=$berth_test_cache/bookworm-minbase.tar.zst
  mkdir -p "$berth_test_cache/archives/partial"
  if [ -z "$(find "$tar" -mtime -7 2>/dev/null)" ]; then
    local tmp
    tmp=$(mktemp "$berth_test_cache/bookworm-minbase.XXXXXX.tar.zst")
    mmdebstrap --quiet --variant=minbase --mode=root bookworm "$tmp" "${debian_sources[@]}" >&2
    mv -f "$tmp" "$tar"
  fi
  echo "$tar"
}

# Removes everything of one root dir (made by make_debian_root): processes whose root is in it,
# its mounts (deepest first), its files.
remove_debian_root_dir() {
  local dir=$1 p r
  [ -d "$dir" ] || return 0
  for p in /proc/[0-9]*; do
    r=$(readlink "$p/root" 2>/dev/null) || continue
    case "$r" in "$dir"/*) kill -9 "${p#/proc/}" 2>/dev/null || true ;; esac
  done
  local m
  for _ in 1 2 3; do
    m=$(awk -v d="$dir/" 'index($5, d) == 1 { print $5 }' /proc/self/mountinfo | sort -r)
    [ -z "$m" ] && break
    # shellcheck disable=SC2086
    umount -l $m 2>/dev/null || true
  done
  rm -rf --one-file-system "$dir"
}

# Roots left by runs that were killed.
remove_stale_debian_roots() {
  local d
  for d in /tmp/berth-debian-root-*; do
    [ -d "$d" ] || continue
    if [ -f "$d/owner" ] && kill -0 "$(cat "$d/owner")" 2>/dev/null; then continue; fi
    remove_debian_root_dir "$d"
  done
}

# make_debian_root: sets $root_dir (owned by this shell) and $root (the Debian root in it), with
# /proc, /sys, /dev, /tmp (the host's, so test dirs have the same path inside) and apt's cache
# mounted, resolv.conf copied and apt's lists updated.
make_debian_root() {
  remove_stale_debian_roots
  local tar
  tar=$(debian_base_tarball)
  root_dir=$(mktemp -d /tmp/berth-debian-root-XXXXXX)
  echo $$ > "$root_dir/owner"
  root=$root_dir/root
  mkdir "$root"
  tar --zstd -C "$root" -xf "$tar"
  # The root must be a mount point of its own, as a node's / is: runc makes the container's
  # mounts slaves with mount("/", MS_REC|MS_SLAVE), which fails on a plain directory.
  mount --bind "$root" "$root" && mount --make-private "$root"
  mount -t proc proc "$root/proc"
  mount --rbind /sys "$root/sys" && mount --make-rslave "$root/sys"
  mount --rbind /dev "$root/dev" && mount --make-rslave "$root/dev"
  mount --bind /tmp "$root/tmp" && mount --make-private "$root/tmp"
  mount --bind "$berth_test_cache/archives" "$root/var/cache/apt/archives"
  cp -L /etc/resolv.conf "$root/etc/resolv.conf"
  in_root apt-get update -qq
}

in_root() {
  chroot "$root" env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin DEBIAN_FRONTEND=noninteractive LANG=C.UTF-8 "$@"
}
