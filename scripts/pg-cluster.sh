#!/usr/bin/env bash
# Starts or stops a throwaway PostgreSQL 15 cluster for tests: its own data folder, socket folder and
# port, run as a non-root user (initdb refuses root). Prints the URL to use on start.
#   scripts/pg-cluster.sh start DIR PORT   -> prints postgres://gatehouse@127.0.0.1:PORT/gatehouse?sslmode=disable
#   scripts/pg-cluster.sh stop DIR
set -euo pipefail
command=${1:?start or stop}
dir=${2:?cluster folder}
bindir=$(pg_config --bindir)

as_owner() {
    if [ "$(id -u)" -eq 0 ]; then
        runuser -u "${PG_CLUSTER_USER:-postgres}" -- "$@"
    else
        "$@"
    fi
}

case "$command" in
start)
    port=${3:?port}
    mkdir -p "$dir"
    if [ "$(id -u)" -eq 0 ]; then chown "${PG_CLUSTER_USER:-postgres}" "$dir"; fi
    as_owner "$bindir/initdb" -D "$dir/data" -U gatehouse --auth=trust --encoding=UTF8 --no-locale >"$dir/initdb.log" 2>&1
    as_owner "$bindir/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w \
        -o "-p $port -k $dir -c listen_addresses=127.0.0.1 -c max_connections=200 -c fsync=off" start >/dev/null
    as_owner "$bindir/createdb" -h 127.0.0.1 -p "$port" -U gatehouse gatehouse
    echo "postgres://gatehouse@127.0.0.1:$port/gatehouse?sslmode=disable"
    ;;
stop)
    if [ -d "$dir/data" ]; then
        as_owner "$bindir/pg_ctl" -D "$dir/data" -m fast -w stop >/dev/null 2>&1 || true
    fi
    rm -rf "$dir"
    ;;
*)
    echo "usage: $0 start DIR PORT | stop DIR" >&2
    exit 2
    ;;
esac
