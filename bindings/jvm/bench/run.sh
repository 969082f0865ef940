#!/usr/bin/env bash
# The JVM package's benchmark (src/main/java/dev/roomchat/bench/Bench.java): roomchat's
# listUsers beside java.net.http.HttpClient with Jackson into the same records, one call
# at a time, 16 platform threads and 1,000 virtual threads, idle and loaded, and the time
# from a JVM's start to its first answer. Figures, not a test: nothing is asserted on time.
#
#   bash bindings/jvm/bench/run.sh
#
# ROOMCHAT_BENCH_N, ROOMCHAT_BENCH_N_LOADED, ROOMCHAT_BENCH_STARTS: see Bench.java. On Java
# 25 (virtual threads need 21+), against the release emulator (ROOMCHAT_EMULATOR, default
# target/release/roomchat-emulator), with dev.roomchat:roomchat as installed in target/m2
# by scripts/dist/jvm.sh; ROOMCHAT_BENCH_INSTALL=1 (or no such jar) installs it first from
# bindings/jvm, without its tests, with target/release/libroomchat.so inside. Jackson is
# this module's dependency only (pom.xml here), never the package's.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)
target=${CARGO_TARGET_DIR:-$root/target}
repo_local=$target/m2
export ROOMCHAT_EMULATOR=${ROOMCHAT_EMULATOR:-$target/release/roomchat-emulator}
jdk25=
for dir in /usr/lib/jvm/*; do
  if [ -x "$dir/bin/javac" ] && "$dir/bin/java" -version 2>&1 | head -n 1 | grep -Eq 'version "25[."]'; then
    jdk25=$dir
    break
  fi
done
[ -n "$jdk25" ] || { echo "jvm bench: no JDK 25 under /usr/lib/jvm" >&2; exit 1; }
# Maven on 25 (the bench compiles for 21): its own libraries use sun.misc.Unsafe, which 24+ warns about.
export MAVEN_OPTS="${MAVEN_OPTS:-} --sun-misc-unsafe-memory-access=allow"
mvn_() { JAVA_HOME=$jdk25 mvn -B -q -Dstyle.color=never -Dmaven.repo.local="$repo_local" "$@"; }

version=$(sed -n 's:^  <version>\(.*\)</version>:\1:p' "$root/bindings/jvm/pom.xml" | head -n 1)
if [ "${ROOMCHAT_BENCH_INSTALL:-0}" = 1 ] || [ ! -f "$repo_local/dev/roomchat/roomchat/$version/roomchat-$version.jar" ]; then
  natives=$root/bindings/jvm/target/natives/linux-x86-64
  mkdir -p "$natives"
  cp "$target/release/libroomchat.so" "$natives/"
  (cd "$root/bindings/jvm" && mvn_ -DskipTests install)
fi
cd "$here"
mvn_ -Droomchat.version="$version" package dependency:build-classpath -Dmdep.outputFile=target/classpath.txt
"$jdk25/bin/java" --enable-native-access=ALL-UNNAMED -Droomchat.repo="$root" \
  -cp "target/classes:$(cat target/classpath.txt)" dev.roomchat.bench.Bench
