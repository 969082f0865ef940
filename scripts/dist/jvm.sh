#!/usr/bin/env bash
# The JVM package (bindings/jvm): built and tested on Java 17 and 25, published to a
# local Maven repository under target/, then installed from nothing: a fresh Maven
# project that names only dev.roomchat:roomchat:<version> compiles and runs the
# README's JUnit example, as printed, against the emulator; then its Kotlin one; and
# the README's quickstarts, Java's and Kotlin's, as printed, run against the emulator.
# LeakTest (100,000 calls) runs on Java 17 only.
#
#   jvm.sh        all of it (needs target/release/libroomchat.so and roomchat-emulator:
#                 cargo build --release -p roomchat-ffi -p roomchat-emulator); the jar carries
#                 the Linux natives of x86-64 and aarch64, glibc and musl (scripts/dist/jvm-natives.sh)
#
# Maven's repository is target/m2 (-Dmaven.repo.local): a second run downloads nothing.
set -euo pipefail
# shellcheck source=scripts/dist/env.sh
source "$(dirname "$0")/env.sh"
jvm_dir=$root/bindings/jvm
repo_local=$target/m2
version=$(sed -n 's/^version = "\(.*\)"/\1/p' "$root/Cargo.toml" | head -n 1)
pom_version=$(sed -n 's:^  <version>\(.*\)</version>:\1:p' "$jvm_dir/pom.xml" | head -n 1)
if [ "$version" != "$pom_version" ]; then
  echo "jvm.sh: bindings/jvm/pom.xml says $pom_version, the workspace $version" >&2
  exit 1
fi

# The two JDKs: 17 (the floor) and 25.
java_home() {
  local major=$1 dir
  for dir in /usr/lib/jvm/*; do
    [ -x "$dir/bin/javac" ] || continue
    if "$dir/bin/java" -version 2>&1 | head -n 1 | grep -Eq "version \"${major}[.\"]"; then
      echo "$dir"
      return 0
    fi
  done
  echo "jvm.sh: no JDK $major under /usr/lib/jvm" >&2
  return 1
}
jdk17=$(java_home 17)
jdk25=$(java_home 25)
command -v mvn >/dev/null || { echo "jvm.sh: mvn is not installed (apt-get install maven)" >&2; exit 1; }

library=$target/release/libroomchat.so
emulator=$target/release/roomchat-emulator
for f in "$library" "$emulator"; do
  [ -x "$f" ] || [ -f "$f" ] || { echo "jvm.sh: $f is missing (cargo build --release -p roomchat-ffi -p roomchat-emulator)" >&2; exit 1; }
done
export ROOMCHAT_EMULATOR=$emulator
# The native libraries go into the jar (never committed): dev/roomchat/native/<platform>/,
# this machine's and the other Linux ones (scripts/dist/jvm-natives.sh; the test command
# builds those three unoptimized, as the Go step's, and with its dependency builds).
echo "== the Linux natives: linux-x86-64 (this machine's release build), linux-aarch64 (glibc 2.17), linux-x86-64-musl, linux-aarch64-musl (zig)"
CARGO_PROFILE_RELEASE_OPT_LEVEL=0 bash "$root/scripts/dist/jvm-natives.sh" linux

mvn_() { mvn -B -q -Dstyle.color=never -Dmaven.repo.local="$repo_local" "$@"; }
summary() { # the Surefire totals of the reports in $1, on a line of their own (Maven ends its
  # output with terminal escapes and no newline)
  echo
  awk -F'"' '/<testsuite /{ for (i = 1; i < NF; i++) { if ($i ~ / tests=$/) t += $(i+1); if ($i ~ / failures=$/) f += $(i+1); if ($i ~ / errors=$/) e += $(i+1); if ($i ~ / skipped=$/) s += $(i+1) } }
    END { printf "%s: %d passed, %d failed, %d skipped\n", name, t - f - e - s, f + e, s }' name="$2" "$1"/TEST-*.xml
}

# The README's block of language $2 after the line starting with $1, exactly as printed.
readme_block() {
  awk -v marker="$1" -v fence="\`\`\`$2" 'index($0, marker) == 1 { want = 1; next } want && $0 == fence { on = 1; next } on && /^```/ { exit } on { print }' "$jvm_dir/README.md"
}

cd "$jvm_dir"
echo "== Java 17: build, test, install to $repo_local"
rm -rf target/surefire-reports # a class an earlier run ran (OtelCollectorE2E, one -Dtest) would leave its report, and count in the summary
JAVA_HOME=$jdk17 mvn_ install
summary target/surefire-reports jvm17
echo "== the published jar carries the four Linux natives; two of them run the C README example (aarch64 under qemu-user, musl under musl's loader)"
published=$repo_local/dev/roomchat/roomchat/$version/roomchat-$version.jar
bash "$root/scripts/dist/jvm-natives.sh" check "$published" --host-x86-64 linux-x86-64 linux-aarch64 linux-x86-64-musl linux-aarch64-musl
bash "$root/scripts/dist/jvm-natives.sh" run "$published"
echo "== Java 25: the same tests, over the classes built above (Maven on 17, the tests' JVM 25), but LeakTest (its 100,000 calls ran on 17: the boundary is the same); '*Test' keeps the classes Surefire runs by default (an exclusion alone would run OtelCollectorE2E, which the Collector step runs)"
rm -rf target/surefire-reports
JAVA_HOME=$jdk17 mvn_ -Djvm="$jdk25/bin/java" -Dtest='*Test,!LeakTest' org.apache.maven.plugins:maven-surefire-plugin:3.5.4:test
summary target/surefire-reports jvm25

echo "== the time from the JVM's start to the first answer"
classpath=target/classes:target/test-classes:$repo_local/net/java/dev/jna/jna/5.19.1/jna-5.19.1.jar:$repo_local/org/slf4j/slf4j-api/2.0.17/slf4j-api-2.0.17.jar
for jdk in "$jdk17" "$jdk25"; do
  "$jdk/bin/java" --enable-native-access=ALL-UNNAMED -cp "$classpath" dev.roomchat.FirstAnswer 2>&1 | grep -v '^SLF4J'
done

echo "== from nothing: a fresh Maven project naming dev.roomchat:roomchat:$version runs the README's test"
clean=$target/jvm-cleanroom
rm -rf "$clean"
mkdir -p "$clean/src/test/java"
# The README's test, as printed: the java block after the README-test marker.
awk '/<!-- the README test:/ { want = 1; next } want && /^```java/ { on = 1; next } on && /^```/ { exit } on { print }' \
  "$jvm_dir/README.md" >"$clean/src/test/java/WebinarTest.java"
grep -q "class WebinarTest" "$clean/src/test/java/WebinarTest.java"
# The README's quickstart too, as printed: a program, run after the tests (below).
mkdir -p "$clean/src/main/java"
readme_block '<!-- the README quickstart:' java >"$clean/src/main/java/Quickstart.java"
grep -q "class Quickstart" "$clean/src/main/java/Quickstart.java"
cat >"$clean/pom.xml" <<POM
<?xml version="1.0" encoding="UTF-8"?>
<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>example</groupId>
  <artifactId>webinar</artifactId>
  <version>1</version>
  <properties>
    <project.build.sourceEncoding>UTF-8</project.build.sourceEncoding>
    <maven.compiler.release>17</maven.compiler.release>
  </properties>
  <dependencies>
    <dependency>
      <groupId>dev.roomchat</groupId>
      <artifactId>roomchat</artifactId>
      <version>$version</version>
    </dependency>
    <dependency>
      <groupId>org.junit.jupiter</groupId>
      <artifactId>junit-jupiter</artifactId>
      <version>5.14.4</version>
      <scope>test</scope>
    </dependency>
  </dependencies>
  <build>
    <plugins>
      <plugin>
        <groupId>org.apache.maven.plugins</groupId>
        <artifactId>maven-compiler-plugin</artifactId>
        <version>3.13.0</version>
      </plugin>
      <plugin>
        <groupId>org.apache.maven.plugins</groupId>
        <artifactId>maven-surefire-plugin</artifactId>
        <version>3.5.4</version>
        <configuration>
          <argLine>--enable-native-access=ALL-UNNAMED</argLine>
        </configuration>
      </plugin>
    </plugins>
  </build>
</project>
POM
cd "$clean"
JAVA_HOME=$jdk17 mvn_ -Djvm="$jdk25/bin/java" test
echo "the README's test from the published artifact:"
summary target/surefire-reports jvm-cleanroom
# opentelemetry-api is an optional dependency: the test above ran, calls and all, with none
# of OpenTelemetry on its classpath (the client then makes no telemetry and loads none of it).
if grep -o 'name="surefire.test.class.path" value="[^"]*"' target/surefire-reports/TEST-WebinarTest.xml | grep -q opentelemetry; then
  echo "jvm.sh: an OpenTelemetry jar reached a project that names only dev.roomchat:roomchat (it must stay optional)" >&2
  exit 1
fi
echo "jvm-cleanroom: no OpenTelemetry jar on its classpath"

echo "== the same from Kotlin: a fresh Maven project with kotlin-maven-plugin runs the README's Kotlin test"
kotlin_version=2.2.21
clean_kt=$target/jvm-cleanroom-kotlin
rm -rf "$clean_kt"
mkdir -p "$clean_kt/src/test/kotlin"
awk '/<!-- the README Kotlin test:/ { want = 1; next } want && /^```kotlin/ { on = 1; next } on && /^```/ { exit } on { print }' \
  "$jvm_dir/README.md" >"$clean_kt/src/test/kotlin/WebinarKotlinTest.kt"
grep -q "class WebinarKotlinTest" "$clean_kt/src/test/kotlin/WebinarKotlinTest.kt"
mkdir -p "$clean_kt/src/main/kotlin"
readme_block '<!-- the README Kotlin quickstart:' kotlin >"$clean_kt/src/main/kotlin/Quickstart.kt"
grep -q "fun main" "$clean_kt/src/main/kotlin/Quickstart.kt"
cat >"$clean_kt/pom.xml" <<POM
<?xml version="1.0" encoding="UTF-8"?>
<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>example</groupId>
  <artifactId>webinar-kotlin</artifactId>
  <version>1</version>
  <properties>
    <project.build.sourceEncoding>UTF-8</project.build.sourceEncoding>
    <!-- Compile in Maven's JVM: Kotlin 2.2's daemon outlives the build, and failed to start under load. -->
    <kotlin.compiler.daemon>false</kotlin.compiler.daemon>
  </properties>
  <dependencies>
    <dependency>
      <groupId>dev.roomchat</groupId>
      <artifactId>roomchat</artifactId>
      <version>$version</version>
    </dependency>
    <dependency>
      <groupId>org.jetbrains.kotlin</groupId>
      <artifactId>kotlin-stdlib</artifactId>
      <version>$kotlin_version</version>
    </dependency>
    <dependency>
      <groupId>org.junit.jupiter</groupId>
      <artifactId>junit-jupiter</artifactId>
      <version>5.14.4</version>
      <scope>test</scope>
    </dependency>
  </dependencies>
  <build>
    <sourceDirectory>src/main/kotlin</sourceDirectory>
    <testSourceDirectory>src/test/kotlin</testSourceDirectory>
    <plugins>
      <plugin>
        <groupId>org.jetbrains.kotlin</groupId>
        <artifactId>kotlin-maven-plugin</artifactId>
        <version>$kotlin_version</version>
        <configuration>
          <jvmTarget>17</jvmTarget>
        </configuration>
        <executions>
          <execution>
            <id>compile</id>
            <goals><goal>compile</goal></goals>
          </execution>
          <execution>
            <id>test-compile</id>
            <goals><goal>test-compile</goal></goals>
          </execution>
        </executions>
      </plugin>
      <plugin>
        <groupId>org.apache.maven.plugins</groupId>
        <artifactId>maven-surefire-plugin</artifactId>
        <version>3.5.4</version>
        <configuration>
          <argLine>--enable-native-access=ALL-UNNAMED</argLine>
        </configuration>
      </plugin>
    </plugins>
  </build>
</project>
POM
cd "$clean_kt"
JAVA_HOME=$jdk17 mvn_ test
echo "the README's Kotlin test from the published artifact:"
summary target/surefire-reports jvm-cleanroom-kotlin

echo "== the README's quickstarts, Java's and Kotlin's, as printed, built above from the published artifact and run against the emulator"
published=$repo_local/dev/roomchat/roomchat/$version/roomchat-$version.jar:$repo_local/net/java/dev/jna/jna/5.19.1/jna-5.19.1.jar:$repo_local/org/slf4j/slf4j-api/2.0.17/slf4j-api-2.0.17.jar
quickstarts=0
run_quickstart() { # $1: its name, then its command line
  local name=$1 out
  shift
  start_emulator "$emulator" 3
  out=$("$@" 2>&1) || { stop_emulator; echo "$out" >&2; echo "jvm.sh: the README's $name quickstart failed" >&2; exit 1; }
  stop_emulator
  grep -v '^SLF4J' <<<"$out"
  grep -qx 'no such room (404)' <<<"$out" || { echo "jvm.sh: the README's $name quickstart did not run to its end" >&2; exit 1; }
  # No key, and no access token (a JWT: eyJ...), in what it printed.
  if grep -qF -e "$ROOMCHAT_PRIVATE_KEY" -e "$ROOMCHAT_PUBLIC_KEY" -e 'eyJ' <<<"$out"; then
    echo "jvm.sh: the README's $name quickstart printed a secret" >&2
    exit 1
  fi
  quickstarts=$((quickstarts + 1))
}
run_quickstart Java "$jdk25/bin/java" --enable-native-access=ALL-UNNAMED -cp "$clean/target/classes:$published" Quickstart
run_quickstart Kotlin "$jdk17/bin/java" --enable-native-access=ALL-UNNAMED \
  -cp "$clean_kt/target/classes:$published:$repo_local/org/jetbrains/kotlin/kotlin-stdlib/$kotlin_version/kotlin-stdlib-$kotlin_version.jar" QuickstartKt
echo
echo "jvm-quickstart: $quickstarts passed, 0 failed, 0 skipped"
