#!/usr/bin/env bash
# A throwaway PostgreSQL cluster for the state tests (design: state.backends).
#   scripts/pg-throwaway.sh start DIR   initdb in DIR (as the postgres user when run as root),
#                                       start it on a free loopback port with no fsync, and
#                                       print its URL: postgres://specc@127.0.0.1:PORT
#   scripts/pg-throwaway.sh stop DIR    stop it (immediate) and remove DIR
# Export the URL as SPECC_TEST_PG_URL and the tests make a database each in it; without it,
# each test binary starts a cluster of its own the same way.
set -euo pipefail
cmd=${1:?start or stop}
dir=${2:?a directory}
bin=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1)
[ -x "$bin/initdb" ] || { echo "no PostgreSQL server binaries (apt-get install postgresql)" >&2; exit 2; }
as_pg() { if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi; }
case "$cmd" in
  start)
    mkdir -p "$dir"
    [ "$(id -u)" = 0 ] && chown postgres "$dir"
    as_pg "$bin/initdb" -D "$dir/data" -A trust -U specc -E UTF8 > "$dir/initdb.log"
    port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
    as_pg "$bin/pg_ctl" -D "$dir/data" -o "-h 127.0.0.1 -p $port -k $dir -F" -l "$dir/log" -w start > /dev/null
    echo "postgres://specc@127.0.0.1:$port"
    ;;
  stop)
    as_pg "$bin/pg_ctl" -D "$dir/data" -m immediate stop > /dev/null 2>&1 || true
    rm -rf "$dir"
    ;;
  *) echo "start or stop" >&2; exit 2 ;;
esac
