#!/usr/bin/env bash
# install_and_build.sh BUILD_DIR SOURCE_DIR WORK_DIR
# Installs the build into WORK_DIR/prefix, then builds examples/ outside the tree twice, with CMake's
# find_package(Tickwire) and with pkg-config, checks the installed headers stand alone, and runs the
# pkg-config publisher against a real tickwired while `tickwire snapshot` reads its image.
set -euo pipefail
BUILD=$1 SRC=$2 WORK=$3
PREFIX=$WORK/prefix
cmake --install "$BUILD" --prefix "$PREFIX" >"$WORK/install.log"
# Nothing outside the prefix: an unprivileged user installs into a prefix of its own.
if grep -v "^$PREFIX/" "$BUILD/install_manifest.txt"; then
  echo "installed outside the prefix $PREFIX (above)" >&2
  exit 1
fi
[[ -f $PREFIX/etc/tickwire/tickwired.toml ]] || { echo "not installed: etc/tickwire/tickwired.toml" >&2; exit 1; }
for f in include/tickwire/client/client.h lib/libtickwire.a lib/libtickwire.so lib/cmake/Tickwire/TickwireConfig.cmake \
         lib/pkgconfig/tickwire.pc; do
  [[ -e $PREFIX/$f || -e $PREFIX/${f/lib\//lib/x86_64-linux-gnu/} ]] || { echo "not installed: $f" >&2; exit 1; }
done
LIBDIR=$(dirname "$(find "$PREFIX" -name libtickwire.so -print -quit)")

# Every public header compiles on its own with nothing but the prefix on the include path.
while IFS= read -r header; do
  echo "#include <${header#"$PREFIX"/include/}>" | g++ -std=c++20 -fsyntax-only -I"$PREFIX/include" -x c++ - ||
    { echo "installed header does not stand alone: $header" >&2; exit 1; }
done < <(find "$PREFIX/include/tickwire" -name '*.h')
if grep -rqE '#include "(base|client|fields|wire|broker|tier|session)/' "$PREFIX/include/tickwire"; then
  echo "an installed header still includes a tree path" >&2
  exit 1
fi

cmake -S "$SRC/examples" -B "$WORK/cmake-build" -G Ninja -DCMAKE_PREFIX_PATH="$PREFIX" >"$WORK/cmake.log"
cmake --build "$WORK/cmake-build" >>"$WORK/cmake.log"
[[ -x $WORK/cmake-build/example_publisher && -x $WORK/cmake-build/example_subscriber ]]

export PKG_CONFIG_PATH=$LIBDIR/pkgconfig
# shellcheck disable=SC2046
g++ -o "$WORK/pc_publisher" "$SRC/examples/publisher.cc" $(pkg-config --cflags --libs tickwire)
# shellcheck disable=SC2046
g++ -o "$WORK/pc_subscriber_static" "$SRC/examples/subscriber.cc" $(pkg-config --cflags tickwire) \
  "$LIBDIR/libtickwire.a" $(pkg-config --libs-only-l --static openssl) -lpthread

PORT=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
"$BUILD/apps/tickwired" --listen "127.0.0.1:$PORT" --log-level warn &
BROKER=$!
PUBLISHER=""
trap 'kill $PUBLISHER $BROKER 2>/dev/null || true; wait 2>/dev/null || true' EXIT
for _ in $(seq 100); do (exec 3<>"/dev/tcp/127.0.0.1/$PORT") 2>/dev/null && break; sleep 0.05; done
LD_LIBRARY_PATH=$LIBDIR "$WORK/pc_publisher" "127.0.0.1:$PORT" &
PUBLISHER=$!
for _ in $(seq 50); do
  if out=$("$BUILD/apps/tickwire" --server "127.0.0.1:$PORT" snapshot DEMO/EQ/EXAMPLE 2>&1) && [[ $out == *BID* ]]; then
    echo "snapshot through the installed library's publisher: $out"
    exit 0
  fi
  sleep 0.1
done
echo "the publisher built against the installed library never reached the broker: $out" >&2
exit 1
