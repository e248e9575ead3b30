#!/usr/bin/env bash
# deb_check.sh BUILD_DIR WORK_DIR
# Builds the Debian packages (cmake/debian_package.cmake) into WORK_DIR, checks what each holds and its
# control data, and fails on any lintian error (warnings are printed: no manual pages yet, ldconfig calls
# that CPack adds beside the trigger, a pkg-config file without a cross-compilation wrapper).
set -euo pipefail
BUILD=$1 WORK=$2
(cd "$BUILD" && cpack -G DEB -B "$WORK" >"$WORK/cpack.log" 2>&1) || { cat "$WORK/cpack.log" >&2; exit 1; }
V=$(sed -n 's/^CPACK_PACKAGE_VERSION:.*=//p' "$BUILD/CMakeCache.txt" 2>/dev/null || true)
deb() { find "$WORK" -maxdepth 1 -name "$1_*.deb" -print -quit; }
expect_files() {  # package paths...
  local package=$1 file contents
  shift
  file=$(deb "$package")
  [[ -n $file ]] || { echo "no $package package" >&2; exit 1; }
  contents=$(dpkg-deb -c "$file")
  for path in "$@"; do
    grep -q " \./$path\( \|$\)" <<<"$contents" || { echo "$package lacks $path" >&2; echo "$contents" >&2; exit 1; }
  done
}
expect_files tickwire usr/bin/tickwired usr/bin/tickwire etc/tickwire/tickwired.toml \
  usr/lib/systemd/system/tickwired.service usr/share/doc/tickwire/copyright usr/share/doc/tickwire/changelog.gz
expect_files libtickwire0 usr/lib/libtickwire.so.0
expect_files libtickwire-dev usr/include/tickwire/client/client.h usr/lib/libtickwire.a usr/lib/libtickwire.so \
  usr/lib/cmake/Tickwire/TickwireConfig.cmake usr/lib/pkgconfig/tickwire.pc

# The FIX gateway's package, where the build has it (TW_FIX: QuickFIX installed).
PACKAGES=(tickwire libtickwire0 libtickwire-dev)
if grep -q "^TW_FIX:BOOL=ON" "$BUILD/CMakeCache.txt"; then
  PACKAGES+=(tickwire-fix)
  expect_files tickwire-fix usr/bin/tickwire-fix etc/tickwire/fix.toml usr/lib/systemd/system/tickwire-fix.service \
    usr/share/doc/tickwire-fix/copyright usr/share/doc/tickwire-fix/changelog.gz
  FIX=$(deb tickwire-fix)
  dpkg-deb -f "$FIX" Depends | grep -q "libquickfix" || { echo "tickwire-fix does not depend on libquickfix" >&2; exit 1; }
  dpkg-deb --ctrl-tarfile "$FIX" | tar -xO ./conffiles | grep -qx /etc/tickwire/fix.toml
fi

TW=$(deb tickwire)
DEPENDS=$(dpkg-deb -f "$TW" Depends)
[[ $DEPENDS == *adduser* ]] || { echo "tickwire does not depend on adduser" >&2; exit 1; }
# perf's MQTT and NATS client libraries are opened at run time, not linked: the broker does not need them.
if grep -Eq "libnats|libmosquitto" <<<"$DEPENDS"; then
  echo "tickwire depends on perf's peer libraries: $DEPENDS" >&2
  exit 1
fi
# Each package has its own summary line (the first line of Description).
SUMMARIES=$(for package in "${PACKAGES[@]}"; do dpkg-deb -f "$(deb $package)" Description | head -1; done)
if [[ $(sort -u <<<"$SUMMARIES" | wc -l) -ne ${#PACKAGES[@]} ]]; then
  echo "the packages share a summary line:" >&2
  echo "$SUMMARIES" >&2
  exit 1
fi
dpkg-deb --ctrl-tarfile "$TW" | tar -xO ./conffiles | grep -qx /etc/tickwire/tickwired.toml
dpkg-deb --ctrl-tarfile "$TW" | tar -xO ./postinst | grep -q "adduser --system"
dpkg-deb --fsys-tarfile "$TW" | tar -xO ./usr/lib/systemd/system/tickwired.service | grep -qx "Type=notify"
dpkg-deb --fsys-tarfile "$TW" | tar -xO ./usr/lib/systemd/system/tickwired.service | grep -q "^WatchdogSec="
dpkg-deb --ctrl-tarfile "$(deb libtickwire0)" | tar -xO ./triggers | grep -qx "activate-noawait ldconfig"

lintian --tag-display-limit 0 "$WORK"/*.deb >"$WORK/lintian.txt" 2>&1 || true
cat "$WORK/lintian.txt"
if grep -q "^E: " "$WORK/lintian.txt"; then
  echo "lintian found errors" >&2
  exit 1
fi
echo "packages: $(cd "$WORK" && ls ./*.deb | tr '\n' ' ')${V:+(version $V)}; lintian: no errors"
