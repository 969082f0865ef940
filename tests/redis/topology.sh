#!/usr/bin/env bash
# Redis topologies for the tests of every language: a Redis Cluster or a Sentinel
# set-up of real servers (Debian's redis-server and redis-cli, nothing else), each
# daemonized on 127.0.0.1 with its config, pid and log in DIR/<name>/.
#
#   topology.sh cluster DIR [--replicas N] [--password P] [--tls CERTDIR]
#       3 primaries (N replicas each, default 1); prints redis[s]+cluster://[:P@]127.0.0.1:p1,p2,p3
#   topology.sh sentinel DIR [--password P] [--tls CERTDIR]
#       a primary, a replica, 3 sentinels (quorum 2), service roomchat-primary; prints
#       redis[s]+sentinel://[:P@]127.0.0.1:s1,s2,s3/roomchat-primary[?sentinel_password=P]
#   topology.sh primary-of DIR [KEY]     host:port of the primary serving KEY (cluster) / the primary
#   topology.sh reshard DIR KEY          moves KEY's slot, with its keys, to another primary;
#                                        prints "from host:port to host:port"
#   topology.sh fail-primary DIR [KEY]   SIGKILLs that primary, waits until a replica serves;
#                                        prints the seconds it took
#   topology.sh revive DIR               starts again every data node of DIR that is down (the
#                                        killed primary), on its port with its config; waits
#                                        until it serves as a replica; prints the seconds it took
#   topology.sh each DIR node|sentinel   runs the command read from stdin (one line of words, as
#                                        redis-cli takes them: an ACL SETUSER, say, whose password
#                                        stays off command lines) on every live data node or
#                                        sentinel; an error reply fails; prints "ok N"
#   topology.sh stop DIR                 kills every server started in DIR (idempotent)
#
# The result is stdout's last line; diagnostics go to stderr; a failure exits non-zero
# with its reason. Every wait is bounded (30 s). CERTDIR holds ca.crt, server.crt and
# server.key (for 127.0.0.1). P is given to redis-cli through REDISCLI_AUTH only (never
# on a command line) and must be URL-safe ([A-Za-z0-9._~-]), as it goes into the URL.
set -euo pipefail
unset REDISCLI_AUTH

SERVICE=roomchat-primary
WAIT_S=30

die() {
  echo "topology.sh: $*" >&2
  exit 1
}
note() { echo "topology.sh: $*" >&2; }
usage() { die "usage: topology.sh cluster|sentinel|primary-of|reshard|fail-primary|revive|each|stop DIR [options] (see its header)"; }

# The time since the epoch in milliseconds, in MS (no subshell).
now_ms() {
  local t=${EPOCHREALTIME/./}
  MS=$((10#$t / 1000))
}

# ---- state of a DIR: topology.env (KIND, PASSWORD, CERTDIR) and one folder per server ----

load_state() {
  [ -f "$DIR/topology.env" ] || die "$DIR holds no topology (no topology.env)"
  # shellcheck disable=SC1091
  source "$DIR/topology.env"
}

save_state() {
  {
    printf 'KIND=%q\n' "$KIND"
    printf 'PASSWORD=%q\n' "$PASSWORD"
    printf 'CERTDIR=%q\n' "$CERTDIR"
  } >"$DIR/topology.env"
}

# redis-cli against 127.0.0.1:PORT, the password through REDISCLI_AUTH, bounded in time.
rcli() {
  local port=$1
  shift
  local tls=()
  [ -z "$CERTDIR" ] || tls=(--tls --cacert "$CERTDIR/ca.crt")
  (
    [ -z "$PASSWORD" ] || export REDISCLI_AUTH=$PASSWORD
    exec timeout 10 redis-cli --no-auth-warning -h 127.0.0.1 -p "$port" "${tls[@]}" "$@"
  )
}

# Whether PID is a live (not zombie) redis process.
alive() {
  local pid=$1 stat
  [ -n "$pid" ] && [ -r "/proc/$pid/stat" ] || return 1
  stat=$(cat "/proc/$pid/stat" 2>/dev/null) || return 1
  stat=${stat##*) }
  [ "${stat%% *}" != Z ] || return 1
  grep -q '^redis' "/proc/$pid/comm" 2>/dev/null
}

pid_of() { cat "$DIR/$1/redis.pid" 2>/dev/null || true; }
port_of() { cat "$DIR/$1/port"; }

# The names (folders) of the servers in DIR, of a kind (node or sentinel), live or all.
servers() {
  local kind=$1 which=${2:-live} d name
  for d in "$DIR"/"$kind"[0-9]*/; do
    [ -d "$d" ] || continue
    name=$(basename "$d")
    if [ "$which" = all ] || alive "$(pid_of "$name")"; then echo "$name"; fi
  done
}

name_of_port() {
  local port=$1 name
  for name in $(servers node all) $(servers sentinel all); do
    [ "$(port_of "$name")" != "$port" ] || {
      echo "$name"
      return
    }
  done
  return 1
}

# ---- starting servers ----

declare -A TAKEN=()
# A loopback port nothing listens on and this run has not handed out, in PICKED. Below
# Linux's ephemeral range, so that no client's outgoing connection holds it.
pick_port() {
  local i p
  for i in $(seq 200); do
    p=$((20000 + RANDOM % 12000))
    [ -z "${TAKEN[$p]:-}" ] || continue
    if ! (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null; then
      TAKEN[$p]=1
      PICKED=$p
      return
    fi
  done
  die "no free loopback port found"
}

# Writes NAME's config (on fresh ports) and starts it daemonized. EXTRA: more config lines.
launch() {
  local name=$1 extra=$2 d=$DIR/$1 port bus=""
  pick_port
  port=$PICKED
  mkdir -p "$d"
  rm -f "$d/redis.pid" "$d/redis.log" "$d/nodes.conf"
  {
    echo "bind 127.0.0.1"
    if [ -n "$CERTDIR" ]; then
      echo "port 0"
      echo "tls-port $port"
      echo "tls-cert-file $CERTDIR/server.crt"
      echo "tls-key-file $CERTDIR/server.key"
      echo "tls-ca-cert-file $CERTDIR/ca.crt"
      echo "tls-auth-clients no"
      echo "tls-replication yes"
    else
      echo "port $port"
    fi
    echo "daemonize yes"
    echo "pidfile $d/redis.pid"
    echo "logfile $d/redis.log"
    echo "dir $d"
    if [ "$KIND" = cluster ]; then
      pick_port
      bus=$PICKED
      echo "cluster-enabled yes"
      echo "cluster-config-file nodes.conf"
      echo "cluster-node-timeout 1000"
      echo "cluster-port $bus"
      [ -z "$CERTDIR" ] || echo "tls-cluster yes"
    fi
    if [[ $name != sentinel* ]]; then
      echo 'save ""'
      echo "appendonly no"
      # a replica's first full sync at once (the default waits 5 s for more replicas)
      echo "repl-diskless-sync-delay 0"
      if [ -n "$PASSWORD" ]; then
        echo "requirepass $PASSWORD"
        echo "masterauth $PASSWORD"
      fi
    fi
    printf '%s\n' "$extra"
  } >"$d/redis.conf"
  echo "$port" >"$d/port"
  local mode=()
  [[ $name != sentinel* ]] || mode=(--sentinel)
  redis-server "$d/redis.conf" "${mode[@]}" >"$d/start.out" 2>&1 || die "$name did not start: $(tail -n 5 "$d/start.out")"
}

# Waits until every named server answers PING; one that could not bind its ports is
# started again on others (up to 5 times). EXTRA_<name> holds each one's extra config.
wait_up() {
  local name tries
  for name in "$@"; do
    tries=1
    local deadline
    now_ms
    deadline=$((MS + WAIT_S * 1000))
    while :; do
      if [ -f "$DIR/$name/redis.pid" ] && [ "$(rcli "$(port_of "$name")" PING 2>/dev/null)" = PONG ]; then
        break
      fi
      if grep -qE "Address already in use|Could not create server TCP|Failed listening" "$DIR/$name/redis.log" 2>/dev/null; then
        [ "$tries" -lt 5 ] || die "$name: no port it could bind after 5 tries"
        note "$name: port taken meanwhile; starting it on another"
        tries=$((tries + 1))
        local extra_var=EXTRA_$name
        launch "$name" "${!extra_var}"
        continue
      fi
      now_ms
      [ "$MS" -lt "$deadline" ] || die "$name did not answer within ${WAIT_S} s; its log: $(tail -n 5 "$DIR/$name/redis.log" 2>/dev/null)"
      sleep 0.02
    done
  done
}

# Calls CHECK (a function) until it succeeds, at most WAIT_S; dies naming WHAT.
wait_for() {
  local what=$1 check=$2 deadline
  now_ms
  deadline=$((MS + WAIT_S * 1000))
  until "$check"; do
    now_ms
    [ "$MS" -lt "$deadline" ] || die "$what: not within ${WAIT_S} s${WHY:+ ($WHY)}"
    sleep 0.05
  done
}

parse_start_options() {
  REPLICAS=1
  PASSWORD=""
  CERTDIR=""
  while [ $# -gt 0 ]; do
    case $1 in
    --replicas) REPLICAS=${2:?--replicas N}; shift 2 ;;
    --password) PASSWORD=${2:?--password P}; shift 2 ;;
    --tls) CERTDIR=$(cd "${2:?--tls CERTDIR}" && pwd) || die "no CERTDIR $2"; shift 2 ;;
    *) die "unknown option $1" ;;
    esac
  done
  [[ $REPLICAS =~ ^[0-9]$ ]] || die "--replicas takes 0 to 9"
  [ -z "$PASSWORD" ] || [[ $PASSWORD =~ ^[A-Za-z0-9._~-]+$ ]] || die "the password must be URL-safe ([A-Za-z0-9._~-])"
  if [ -n "$CERTDIR" ]; then
    local f
    for f in ca.crt server.crt server.key; do [ -r "$CERTDIR/$f" ] || die "$CERTDIR has no $f"; done
  fi
}

prepare_dir() {
  mkdir -p "$DIR"
  DIR=$(cd "$DIR" && pwd)
  if [ -f "$DIR/topology.env" ]; then
    (load_state && [ -z "$(servers node)$(servers sentinel)" ]) ||
      die "$DIR already holds running servers: stop it first"
    rm -rf "$DIR"/node[0-9]* "$DIR"/sentinel[0-9]*
  fi
  save_state
}

# ---- cluster ----

# CLUSTER NODES of the node on PORT, in NODES.
cluster_nodes() { NODES=$(rcli "$1" CLUSTER NODES 2>/dev/null) && [ -n "$NODES" ]; }

# What a node's CLUSTER NODES says of the slots and the replicas, in a form equal on
# every node that agrees: "ip:port slots…" per primary serving slots, "ip:port of
# ip:port" per replica not failed. Migration markers ([…]) are left out.
cluster_view() {
  awk '
    { addr = $2; sub(/@.*/, "", addr); address[$1] = addr; flags[$1] = $3; master[$1] = $4
      s = ""; for (i = 9; i <= NF; i++) if ($i !~ /^\[/) s = s " " $i; slots[$1] = s }
    END {
      for (id in address) {
        if (flags[id] ~ /master/ && slots[id] != "") print address[id] slots[id]
        else if (flags[id] ~ /slave/ && flags[id] !~ /fail/) print address[id] " of " address[master[id]]
      }
    }' <<<"$NODES" | sort
}

# The primary (ip:port) serving SLOT in the view in NODES, in PRIMARY; its id in PRIMARY_ID.
primary_in_view() {
  local slot=$1 line
  line=$(awk -v slot="$slot" '
    $3 ~ /master/ && $3 !~ /fail/ {
      for (i = 9; i <= NF; i++) {
        if ($i ~ /^\[/) continue
        n = split($i, r, "-"); lo = r[1]; hi = (n == 2 ? r[2] : r[1])
        if (slot + 0 >= lo + 0 && slot + 0 <= hi + 0) { addr = $2; sub(/@.*/, "", addr); print $1, addr; exit }
      }
    }' <<<"$NODES")
  [ -n "$line" ] || return 1
  PRIMARY_ID=${line%% *}
  PRIMARY=${line#* }
}

# Whether every live node says cluster_state:ok and they all show one view (and, with
# REPLICAS_UP, every live replica's link to its primary is up). Sets WHY otherwise.
cluster_settled() {
  local name port first="" view info
  for name in $(servers node); do
    port=$(port_of "$name")
    info=$(rcli "$port" CLUSTER INFO 2>/dev/null) || { WHY="$name does not answer"; return 1; }
    [[ $info == *cluster_state:ok* ]] || { WHY="$name: cluster_state not ok"; return 1; }
    cluster_nodes "$port" || { WHY="$name: no CLUSTER NODES"; return 1; }
    view=$(cluster_view)
    if [ -z "$first" ]; then
      first=$view
    elif [ "$view" != "$first" ]; then
      WHY="the nodes disagree on the slots"
      return 1
    fi
    if [ -n "${REPLICAS_UP:-}" ] && grep -q 'myself,slave' <<<"$NODES"; then
      [[ $(rcli "$port" INFO replication) == *master_link_status:up* ]] || { WHY="$name: replication link not up"; return 1; }
    fi
  done
  [ -n "$first" ] || { WHY="no live node"; return 1; }
}

# Any live node's port, in ANY_PORT.
any_node() {
  local name
  for name in $(servers node); do
    ANY_PORT=$(port_of "$name")
    [ "$(rcli "$ANY_PORT" PING 2>/dev/null)" = PONG ] && return
  done
  die "no node of $DIR answers"
}

key_slot() {
  any_node
  SLOT=$(rcli "$ANY_PORT" CLUSTER KEYSLOT "$1") && [[ $SLOT =~ ^[0-9]+$ ]] || die "CLUSTER KEYSLOT $1: $SLOT"
}

cmd_cluster() {
  parse_start_options "$@"
  KIND=cluster
  prepare_dir
  local count=$((3 * (1 + REPLICAS))) i names=() started
  now_ms
  started=$MS
  for i in $(seq "$count"); do
    names+=("node$i")
    declare -g "EXTRA_node$i="
    launch "node$i" ""
  done
  wait_up "${names[@]}"
  local addresses=() name
  for name in "${names[@]}"; do addresses+=("127.0.0.1:$(port_of "$name")"); done
  local tls=()
  [ -z "$CERTDIR" ] || tls=(--tls --cacert "$CERTDIR/ca.crt")
  (
    [ -z "$PASSWORD" ] || export REDISCLI_AUTH=$PASSWORD
    exec timeout "$WAIT_S" redis-cli --no-auth-warning "${tls[@]}" --cluster create "${addresses[@]}" \
      --cluster-replicas "$REPLICAS" --cluster-yes
  ) >"$DIR/cluster-create.log" 2>&1 || die "redis-cli --cluster create failed: $(tail -n 5 "$DIR/cluster-create.log")"
  REPLICAS_UP=1 wait_for "the cluster to settle" cluster_settled
  cluster_nodes "$(port_of node1)" || die "no CLUSTER NODES"
  local seeds
  seeds=$(awk '$3 ~ /master/ && NF >= 9 { a = $2; sub(/@.*/, "", a); print a }' <<<"$NODES" | sort | paste -sd, -)
  now_ms
  note "cluster of $count nodes up in $(((MS - started) / 1000)).$(printf '%03d' $(((MS - started) % 1000))) s"
  local scheme=redis+cluster
  [ -z "$CERTDIR" ] || scheme=rediss+cluster
  echo "$scheme://${PASSWORD:+:$PASSWORD@}$seeds"
}

# ---- sentinel ----

sentinel_field() { # FIELD in the flat key/value output in TEXT
  awk -v key="$1" 'NR % 2 == 1 && $0 == key { getline; print; exit }' <<<"$TEXT"
}

sentinels_know_all() {
  local name port
  for name in $(servers sentinel); do
    port=$(port_of "$name")
    TEXT=$(rcli "$port" SENTINEL MASTER "$SERVICE" 2>/dev/null) || { WHY="$name does not answer"; return 1; }
    [ "$(sentinel_field flags)" = master ] || { WHY="$name: primary's flags $(sentinel_field flags)"; return 1; }
    [ "$(sentinel_field num-slaves)" = 1 ] || { WHY="$name does not know the replica yet"; return 1; }
    [ "$(sentinel_field num-other-sentinels)" = 2 ] || { WHY="$name does not know the other sentinels yet"; return 1; }
    TEXT=$(rcli "$port" SENTINEL REPLICAS "$SERVICE" 2>/dev/null) || return 1
    [ "$(sentinel_field flags)" = slave ] || { WHY="$name: replica's flags $(sentinel_field flags)"; return 1; }
    [ "$(sentinel_field master-link-status)" = ok ] || { WHY="$name: replica's link not ok"; return 1; }
  done
}

cmd_sentinel() {
  parse_start_options "$@"
  KIND=sentinel
  prepare_dir
  local started
  now_ms
  started=$MS
  EXTRA_node1=""
  launch node1 ""
  wait_up node1
  local primary
  primary=$(port_of node1)
  EXTRA_node2="replicaof 127.0.0.1 $primary"
  launch node2 "$EXTRA_node2"
  local i names=() conf
  for i in 1 2 3; do
    conf="sentinel monitor $SERVICE 127.0.0.1 $primary 2
sentinel down-after-milliseconds $SERVICE 1000
sentinel failover-timeout $SERVICE 5000"
    [ -z "$PASSWORD" ] || conf+="
sentinel auth-pass $SERVICE $PASSWORD
requirepass $PASSWORD
sentinel sentinel-pass $PASSWORD"
    declare -g "EXTRA_sentinel$i=$conf"
    launch "sentinel$i" "$conf"
    names+=("sentinel$i")
  done
  wait_up node2 "${names[@]}"
  wait_for "the sentinels to know the primary, its replica and each other" sentinels_know_all
  now_ms
  note "sentinel set-up up in $(((MS - started) / 1000)).$(printf '%03d' $(((MS - started) % 1000))) s"
  local scheme=redis+sentinel hosts=() name
  [ -z "$CERTDIR" ] || scheme=rediss+sentinel
  for name in "${names[@]}"; do hosts+=("127.0.0.1:$(port_of "$name")"); done
  local list
  list=$(IFS=,; echo "${hosts[*]}")
  echo "$scheme://${PASSWORD:+:$PASSWORD@}$list/$SERVICE${PASSWORD:+?sentinel_password=$PASSWORD}"
}

# The primary the first answering sentinel names, in PRIMARY (ip:port).
sentinel_primary() {
  local name out
  for name in $(servers sentinel); do
    out=$(rcli "$(port_of "$name")" SENTINEL GET-MASTER-ADDR-BY-NAME "$SERVICE" 2>/dev/null) || continue
    out=$(paste -sd: - <<<"$out")
    [[ $out =~ ^[0-9.]+:[0-9]+$ ]] || continue
    PRIMARY=$out
    return
  done
  die "no sentinel of $DIR names the primary"
}

# ---- the subcommands on a running topology ----

cmd_primary_of() {
  load_state
  if [ "$KIND" = sentinel ]; then
    sentinel_primary
  else
    key_slot "${1:?primary-of DIR KEY}"
    cluster_nodes "$ANY_PORT" && primary_in_view "$SLOT" || die "no primary serves slot $SLOT"
  fi
  echo "$PRIMARY"
}

cmd_reshard() {
  load_state
  [ "$KIND" = cluster ] || die "reshard: $DIR holds a $KIND set-up, not a cluster"
  local key=${1:?reshard DIR KEY}
  key_slot "$key"
  cluster_nodes "$ANY_PORT" && primary_in_view "$SLOT" || die "no primary serves slot $SLOT"
  local from=$PRIMARY from_id=$PRIMARY_ID to to_id
  read -r to_id to < <(awk -v from="$from_id" '$3 ~ /master/ && $3 !~ /fail/ && $1 != from && NF >= 9 {
    a = $2; sub(/@.*/, "", a); print $1, a; exit }' <<<"$NODES")
  [ -n "${to:-}" ] || die "no other primary to move slot $SLOT to"
  local from_port=${from##*:} to_port=${to##*:}
  [ "$(rcli "$to_port" CLUSTER SETSLOT "$SLOT" IMPORTING "$from_id")" = OK ] || die "SETSLOT IMPORTING on $to failed"
  [ "$(rcli "$from_port" CLUSTER SETSLOT "$SLOT" MIGRATING "$to_id")" = OK ] || die "SETSLOT MIGRATING on $from failed"
  local keys out auth=()
  [ -z "$PASSWORD" ] || auth=(AUTH "$PASSWORD")
  while :; do
    keys=$(rcli "$from_port" CLUSTER GETKEYSINSLOT "$SLOT" 100) || die "GETKEYSINSLOT on $from failed"
    [ -n "$keys" ] || break
    mapfile -t keys_list <<<"$keys"
    # The password goes in the MIGRATE command (to the target), sent over redis-cli's
    # stdin rather than its command line.
    out=$(quoted MIGRATE 127.0.0.1 "$to_port" "" 0 5000 "${auth[@]}" KEYS "${keys_list[@]}" | rcli "$from_port") ||
      die "MIGRATE from $from failed"
    [[ $out == OK* || $out == NOKEY* ]] || die "MIGRATE from $from: $out"
  done
  local name port
  # The target first, then the source, then every other primary (as the Redis manual says).
  rcli "$to_port" CLUSTER SETSLOT "$SLOT" NODE "$to_id" >/dev/null || die "SETSLOT NODE on $to failed"
  rcli "$from_port" CLUSTER SETSLOT "$SLOT" NODE "$to_id" >/dev/null || die "SETSLOT NODE on $from failed"
  for name in $(servers node); do
    port=$(port_of "$name")
    [ "$port" != "$to_port" ] && [ "$port" != "$from_port" ] || continue
    cluster_nodes "$port" || continue
    grep -q 'myself,master' <<<"$NODES" || continue
    rcli "$port" CLUSTER SETSLOT "$SLOT" NODE "$to_id" >/dev/null || die "SETSLOT NODE on 127.0.0.1:$port failed"
  done
  TARGET=$to
  wait_for "every node to see slot $SLOT on $to" slot_moved
  echo "from $from to $to"
}

# ARGS as one line redis-cli reads from its stdin: each in double quotes, \ and " escaped.
quoted() {
  local arg line=""
  for arg in "$@"; do
    arg=${arg//\\/\\\\}
    line+="\"${arg//\"/\\\"}\" "
  done
  printf '%s\n' "$line"
}

# Whether the cluster has settled with SLOT served by TARGET.
slot_moved() {
  cluster_settled || return 1
  primary_in_view "$SLOT" && [ "$PRIMARY" = "$TARGET" ] || { WHY="slot $SLOT still on $PRIMARY"; return 1; }
}

# Whether the cluster has settled with SLOT served by another primary than VICTIM.
slot_failed_over() {
  cluster_settled || return 1
  primary_in_view "$SLOT" && [ "$PRIMARY" != "$VICTIM" ] || { WHY="no replica serves slot $SLOT yet"; return 1; }
}

# Whether every live sentinel names a new primary, and it says it is one.
sentinels_failed_over() {
  local name out first=""
  for name in $(servers sentinel); do
    out=$(rcli "$(port_of "$name")" SENTINEL GET-MASTER-ADDR-BY-NAME "$SERVICE" 2>/dev/null) || { WHY="$name does not answer"; return 1; }
    out=$(paste -sd: - <<<"$out")
    [ "$out" != "$VICTIM" ] || { WHY="$name still names $VICTIM"; return 1; }
    [ -z "$first" ] || [ "$out" = "$first" ] || { WHY="the sentinels disagree"; return 1; }
    first=$out
  done
  [ -n "$first" ] || { WHY="no sentinel answers"; return 1; }
  [ "$(rcli "${first##*:}" ROLE 2>/dev/null | head -n 1)" = master ] || { WHY="$first is not master yet"; return 1; }
  PRIMARY=$first
}

cmd_fail_primary() {
  load_state
  if [ "$KIND" = sentinel ]; then
    sentinel_primary
  else
    key_slot "${1:?fail-primary DIR KEY}"
    cluster_nodes "$ANY_PORT" && primary_in_view "$SLOT" || die "no primary serves slot $SLOT"
    grep -Eq "slave $PRIMARY_ID " <<<"$NODES" || die "$PRIMARY has no replica to take over (--replicas 0?)"
  fi
  VICTIM=$PRIMARY
  local name pid started
  name=$(name_of_port "${VICTIM##*:}") || die "$VICTIM is no server of $DIR"
  pid=$(pid_of "$name")
  alive "$pid" || die "$name ($VICTIM) is not running"
  now_ms
  started=$MS
  kill -KILL "$pid"
  rm -f "$DIR/$name/redis.pid"
  if [ "$KIND" = sentinel ]; then
    wait_for "a replica to take over from $VICTIM" sentinels_failed_over
  else
    wait_for "a replica to take over slot $SLOT from $VICTIM" slot_failed_over
  fi
  now_ms
  note "$VICTIM killed; $PRIMARY serves now"
  printf '%d.%03d\n' $(((MS - started) / 1000)) $(((MS - started) % 1000))
}

# Whether the revived server at port REVIVED is a replica whose link to its primary is up.
revived_replica() {
  local info
  info=$(rcli "$REVIVED" INFO replication 2>/dev/null) || { WHY="$REVIVED does not answer"; return 1; }
  grep -q '^role:slave' <<<"$info" && grep -q '^master_link_status:up' <<<"$info" || {
    WHY="$REVIVED is no replica in sync yet"
    return 1
  }
}

cmd_revive() {
  load_state
  local name started revived=()
  now_ms
  started=$MS
  for name in $(servers node all); do
    ! alive "$(pid_of "$name")" || continue
    redis-server "$DIR/$name/redis.conf" >"$DIR/$name/start.out" 2>&1 || die "$name did not start: $(tail -n 5 "$DIR/$name/start.out")"
    revived+=("$name")
  done
  [ ${#revived[@]} -gt 0 ] || die "every data node of $DIR is running"
  wait_up "${revived[@]}"
  if [ "$KIND" = sentinel ]; then
    # What the sentinels would do once they look at it again (up to 10 s later):
    # follow the primary they name.
    sentinel_primary
    for name in "${revived[@]}"; do
      rcli "$(port_of "$name")" REPLICAOF "${PRIMARY%:*}" "${PRIMARY##*:}" >/dev/null ||
        die "$name did not take REPLICAOF $PRIMARY"
    done
  fi
  for name in "${revived[@]}"; do
    REVIVED=$(port_of "$name")
    wait_for "$name (port $REVIVED) to serve as a replica" revived_replica
  done
  if [ "$KIND" = cluster ]; then
    wait_for "the cluster to settle" cluster_settled
  fi
  now_ms
  note "${revived[*]} back, as replicas"
  printf '%d.%03d\n' $(((MS - started) / 1000)) $(((MS - started) % 1000))
}

cmd_each() {
  [ $# -eq 1 ] || usage
  local kind=$1 line name reply count=0
  case $kind in node | sentinel) ;; *) usage ;; esac
  load_state
  IFS= read -r line || die "each: no command on stdin"
  for name in $(servers "$kind"); do
    reply=$(rcli "$(port_of "$name")" <<<"$line" 2>&1) || die "$name: $reply"
    case $reply in ERR* | NOPERM* | WRONGPASS* | NOAUTH* | "(error)"*) die "$name: $reply" ;; esac
    count=$((count + 1))
  done
  [ "$count" -gt 0 ] || die "no live $kind in $DIR"
  echo "ok $count"
}

cmd_stop() {
  [ -d "$DIR" ] || return 0
  local f pid pids=()
  for f in "$DIR"/*/redis.pid; do
    [ -f "$f" ] || continue
    pid=$(cat "$f" 2>/dev/null || true)
    if alive "$pid"; then
      kill -KILL "$pid" 2>/dev/null || true
      pids+=("$pid")
    fi
    rm -f "$f"
  done
  local deadline
  now_ms
  deadline=$((MS + WAIT_S * 1000))
  for pid in "${pids[@]}"; do
    while alive "$pid"; do
      now_ms
      [ "$MS" -lt "$deadline" ] || die "process $pid did not end"
      sleep 0.02
    done
  done
  echo "stopped ${#pids[@]}"
}

command -v redis-server >/dev/null || die "redis-server is not installed"
command -v redis-cli >/dev/null || die "redis-cli is not installed"
[ $# -ge 2 ] || usage
SUBCOMMAND=$1
DIR=$2
shift 2
case $SUBCOMMAND in
cluster) cmd_cluster "$@" ;;
sentinel) cmd_sentinel "$@" ;;
primary-of) cmd_primary_of "$@" ;;
reshard) cmd_reshard "$@" ;;
fail-primary) cmd_fail_primary "$@" ;;
revive) cmd_revive "$@" ;;
each) cmd_each "$@" ;;
stop) cmd_stop ;;
*) usage ;;
esac
