#!/bin/bash
# Build the referee's OCI image without pulling a base image from any registry (`make image`):
#   1. the project's wheel, built from this checkout (setup.py generates referee/v1);
#   2. a Debian bookworm root file system from Debian's mirror with mmdebstrap (the `essential`
#      variant, plus only what the referee runs on: python3, python3-venv, ca-certificates,
#      tini as PID 1, libstdc++6 for grpcio's C++ core), the wheel and its runtime dependencies installed from PyPI into a venv
#      /opt/referee inside it, then pip, apt's lists and the docs removed;
#   3. buildah makes an image of that file system (user, entry point, volume, port, labels),
#      written as an OCI archive that `podman load` (or any OCI tool) reads.
# Usage: deploy/image/build.sh OUT_DIR PYTHON [EXTRAS]
# Needs root (mmdebstrap's root mode, buildah's storage), mmdebstrap and buildah
# (deploy/image/debian-packages.txt; `make image` installs them when missing).
set -euo pipefail
out=$(realpath -m "${1:?usage: build.sh OUT_DIR PYTHON [EXTRAS]}")
py=${2:?usage: build.sh OUT_DIR PYTHON [EXTRAS]}
extras=${3:-web}
# SYSTEMD=1: the same image plus Debian's systemd (systemd-sysv's /sbin/init, dbus), to start
# deploy/systemd's units under a real systemd as PID 1 (tests/deploy/test_systemd_boot.py,
# `make test-systemd`); written as referee-systemd.oci.tar. The referee's image has no systemd.
packages=python3,python3-venv,ca-certificates,tini,libstdc++6
archive=referee.oci.tar
if [ "${SYSTEMD:-0}" = 1 ]; then
    packages=$packages,systemd,systemd-sysv,dbus,nginx-light  # nginx: referee-cluster.service
    archive=referee-systemd.oci.tar
    extras=${3:-web,tournament}  # the league runner of referee-league@.service too
fi
# The referee's data volume; none in the systemd image: a volume mounted on /var/lib/referee
# makes referee.service fail at start (238/STATE_DIRECTORY, "Device or resource busy"): with
# DynamicUser= systemd moves its StateDirectory to /var/lib/private/referee and links it back.
volume=(--volume /var/lib/referee)
[ "${SYSTEMD:-0}" = 1 ] && volume=()
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
mirror=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
version=$("$py" -c 'import tomllib,sys; print(tomllib.load(open(sys.argv[1],"rb"))["project"]["version"])' "$root/pyproject.toml")
revision=$(git -C "$root" rev-parse HEAD 2>/dev/null || echo unknown)
# the checkout's remote when it has one (no address is invented), else the commit it was built from
source=$(git -C "$root" config --get remote.origin.url 2>/dev/null || echo "boardgame-referee@$revision")
name=${IMAGE_NAME:-localhost/boardgame-referee$([ "${SYSTEMD:-0}" = 1 ] && echo -systemd)}
step() { printf '== [%s/4] %s (%s)\n' "$1" "$2" "$(date -u +%H:%M:%S)"; }

"$py" -c 'import sys, platform; sys.exit(sys.version_info[:2] != (3, 11) or platform.machine() != "x86_64")' \
    || { echo "build.sh: $py is not a CPython 3.11 on x86_64, as Debian bookworm's python3 is" >&2; exit 2; }
mkdir -p "$out"
work=$(mktemp -d "$out/.build.XXXXXX")
trap 'rm -rf "$work"' EXIT

step 1 "building the project's wheel"
"$py" -m pip wheel --quiet --no-deps --no-build-isolation -w "$work/wheels" "$root"
wheel=$(ls "$work"/wheels/boardgame_referee-*.whl)
# Its runtime dependencies from PyPI, downloaded here with this machine's pip settings (its
# index, proxy and certificates), then installed inside the root file system with no index:
# PYTHON must be a CPython 3.11 on x86_64 Linux, as bookworm's is (checked below), so that the
# wheels pip picks here are the ones bookworm's python3 installs.
echo "== downloading the wheels of its runtime dependencies (extras: $extras)"
"$py" -m pip download --quiet --progress-bar off --dest "$work/wheels" --find-links "$work/wheels" \
    --only-binary=:all: "$wheel[$extras]"

step 2 "making the Debian bookworm root file system with mmdebstrap, the wheel and its PyPI dependencies in /opt/referee (2-4 minutes)"
# path-exclude: no manuals, docs or translations in the image (the copyright files stay).
mmdebstrap --variant=essential --mode=root --format=tar \
    --include=$packages \
    --dpkgopt='path-exclude=/usr/share/man/*' \
    --dpkgopt='path-exclude=/usr/share/locale/*' \
    --dpkgopt='path-exclude=/usr/share/doc/*' \
    --dpkgopt='path-include=/usr/share/doc/*/copyright' \
    --customize-hook="copy-in $work/wheels /tmp" \
    --customize-hook='chroot "$1" python3 -m venv /opt/referee' \
    --customize-hook="chroot \"\$1\" env -i /opt/referee/bin/pip install --no-index --find-links /tmp/wheels --no-cache-dir --progress-bar off --disable-pip-version-check /tmp/wheels/$(basename "$wheel")[$extras]" \
    --customize-hook='chroot "$1" env -i /opt/referee/bin/pip uninstall --yes --quiet pip setuptools' \
    --customize-hook="copy-in $here/entrypoint.sh /usr/local/bin" \
    --customize-hook='echo "referee:x:10001:10001:referee:/var/lib/referee:/usr/sbin/nologin" >> "$1/etc/passwd"' \
    --customize-hook='echo "referee:x:10001:" >> "$1/etc/group"' \
    --customize-hook="$( [ "${SYSTEMD:-0}" = 1 ] && echo true || echo 'mkdir -p "$1/var/lib/referee" && chown 10001:10001 "$1/var/lib/referee" && chmod 700 "$1/var/lib/referee"')" \
    --customize-hook='rm -rf "$1/tmp/wheels" "$1/var/lib/apt/lists"/* "$1/var/cache/apt"/* "$1/var/log"/*' \
    --customize-hook='find "$1/opt/referee" "$1/usr/lib/python3.11" -name __pycache__ -prune -exec rm -rf {} +' \
    bookworm "$work/rootfs.tar" "$mirror"

step 3 "making the image with buildah"
ctr=$(buildah from --quiet scratch)
trap 'buildah rm "$ctr" >/dev/null 2>&1 || true; rm -rf "$work"' EXIT
buildah add --quiet "$ctr" "$work/rootfs.tar" /
buildah config \
    --user 10001:10001 --workingdir /var/lib/referee \
    --env PATH=/opt/referee/bin:/usr/local/bin:/usr/bin:/bin \
    --env PYTHONDONTWRITEBYTECODE=1 \
    --entrypoint '["/usr/bin/tini", "--", "/usr/local/bin/entrypoint.sh"]' --cmd '[]' \
    "${volume[@]}" --port 50051/tcp --stop-signal SIGTERM \
    --label org.opencontainers.image.title=boardgame-referee \
    --label "org.opencontainers.image.version=$version" \
    --label "org.opencontainers.image.revision=$revision" \
    --label "org.opencontainers.image.source=$source" \
    --label org.opencontainers.image.description="gRPC rules-referee for euro board-game bot competitions" \
    "$ctr"
buildah commit --quiet --rm "$ctr" "$name:$version" >/dev/null
trap 'rm -rf "$work"' EXIT

step 4 "writing the OCI archive"
rm -f "$out/$archive"
buildah push --quiet "$name:$version" "oci-archive:$out/$archive:$name:$version"
echo "$name:$version" > "$out/${archive%.tar}.name"
size=$(buildah images --noheading --format '{{.Size}}' "$name:$version")
# The archive is the build's output: the image leaves buildah's store, so that builds do not
# pile up there (`podman load` the archive to run it).
buildah rmi "$name:$version" >/dev/null
printf '== done: %s, image %s (%s unpacked), archive %s (%s MB)\n' "$(date -u +%H:%M:%S)" \
    "$name:$version" "$size" "$out/$archive" "$(( $(stat -c %s "$out/$archive") / 1048576 ))"
