#!/usr/bin/env bash
# A single-node SLURM cluster on this machine, to run the pipeline through
# `--profile pipelines/profiles/slurm` without a real cluster (tests/pipelines/test_slurm.py).
#
#   sudo bash scripts/slurm_local.sh           # install (once), configure, start; idempotent
#   sudo bash scripts/slurm_local.sh --status  # exit 0 when it is up (sinfo shows the node)
#   sudo bash scripts/slurm_local.sh --stop    # stop the daemons this script started
#
# What it sets up (Debian packages, no systemd needed: each daemon is started directly, as
# in a container):
# * munge (authentication), MariaDB + slurmdbd (accounting: the executor plugin polls job
#   states with `sacct` and checks `slurm_account` with `sacctmgr`), slurmctld, slurmd;
# * one node, this host (`hostname -s`), with nproc CPUs, 90% of the memory, and one `gpu`
#   GRES backed by no device (gres.conf `File=/dev/null`, AutoDetect=off): GPU requests
#   (`--gpus=1`, `--gres=gpu:1`) are accepted and counted, nothing runs on a GPU;
# * two partitions over that node named as the profile's placeholders, `cpu` (default) and
#   `gpu`, and an account `sparling` (SLURM_LOCAL_ACCOUNT) that root and the sudo user use.
#
# Files: configs in /etc/slurm (refused when one not written by this script is there), state
# in /var/lib/sparling-slurm, logs in /var/log/sparling-slurm, pid files in /run/sparling-slurm.
# Only for a scratch machine or container: never run it on a node of a real cluster.
set -euo pipefail

ACCOUNT="${SLURM_LOCAL_ACCOUNT:-sparling}"
CLUSTER="${SLURM_LOCAL_CLUSTER:-sparling}"
CONF=/etc/slurm
STATE=/var/lib/sparling-slurm
LOGS=/var/log/sparling-slurm
RUN=/run/sparling-slurm
MARK="# Written by sparling-genomics scripts/slurm_local.sh"
NODE="$(hostname -s)"

say() { echo "slurm_local: $*"; }
die() { echo "slurm_local: error: $*" >&2; exit 1; }

# A pid file's process, if it is alive: prints the pid, exit 1 otherwise.
alive() {
    local pid
    [ -s "$1" ] || return 1
    pid="$(tr -dc '0-9' < "$1")"
    [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null && echo "$pid"
}

# Wait up to $1 seconds for the command that follows to succeed.
wait_for() {
    local seconds="$1"; shift
    local i
    for ((i = 0; i < seconds * 2; i++)); do
        if "$@" >/dev/null 2>&1; then return 0; fi
        sleep 0.5
    done
    return 1
}

# Stop the daemon whose pid file is $2 (named $1), if running: TERM, then KILL after 20 s.
stop_daemon() {
    local name="$1" pidfile="$2" pid i
    if pid="$(alive "$pidfile")"; then
        kill "$pid" 2>/dev/null || true
        for ((i = 0; i < 40; i++)); do
            kill -0 "$pid" 2>/dev/null || break
            sleep 0.5
        done
        if kill -0 "$pid" 2>/dev/null; then kill -9 "$pid" 2>/dev/null || true; fi
        say "stopped $name (pid $pid)"
    fi
    rm -f "$pidfile"
}

node_state() { { sinfo -h -N -n "$NODE" -o %T 2>/dev/null || true; } | head -n1; }

stop_all() {
    # Reverse order of start. MariaDB and munged only when this script started them (their
    # pid files under $RUN): a database or munge of the machine's own is left running.
    stop_daemon slurmd "$RUN/slurmd.pid"
    stop_daemon slurmctld "$RUN/slurmctld.pid"
    stop_daemon slurmdbd "$RUN/slurmdbd.pid"
    stop_daemon mariadb "$RUN/mariadb.pid"
    stop_daemon munged "$RUN/munged.pid"
}

case "${1:-}" in
    --stop)
        [ "$(id -u)" = 0 ] || die "run as root (sudo bash $0 --stop)"
        stop_all
        say "stopped"
        exit 0
        ;;
    --status)
        command -v sinfo >/dev/null 2>&1 || exit 1
        state="$(node_state)"
        say "node $NODE: ${state:-unknown}"
        [ -n "$state" ] && alive "$RUN/slurmctld.pid" >/dev/null \
            && alive "$RUN/slurmd.pid" >/dev/null
        exit
        ;;
    "") ;;
    *) die "unknown option $1 (none, --status or --stop)" ;;
esac

[ "$(id -u)" = 0 ] || die "run as root (sudo bash $0): it installs packages and starts daemons"

# --- 1. Packages (Debian's): installed once -------------------------------------------------
packages=(slurm-wlm slurmdbd munge mariadb-server)
missing=()
for p in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || missing+=("$p")
done
if [ "${#missing[@]}" -gt 0 ]; then
    command -v apt-get >/dev/null 2>&1 || die "needs ${missing[*]} and apt-get is not here"
    say "installing ${missing[*]} (apt-get)"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -q >/dev/null
    # The packages' own start-up of their services (systemd or init.d) is not used: in a
    # container it fails or does nothing; the daemons are started below.
    apt-get install -y -q --no-install-recommends "${missing[@]}" >/dev/null
fi

mkdir -p "$STATE/ctld" "$STATE/d" "$LOGS" "$RUN" "$CONF"
chmod 755 "$STATE" "$LOGS" "$RUN"

# --- 2. munge: a key, and munged ------------------------------------------------------------
install -d -o munge -g munge -m 0700 /etc/munge /var/lib/munge /var/log/munge
install -d -o munge -g munge -m 0755 /run/munge
if [ ! -s /etc/munge/munge.key ]; then
    say "creating /etc/munge/munge.key"
    if command -v mungekey >/dev/null 2>&1; then
        mungekey --create --keyfile=/etc/munge/munge.key
    else
        dd if=/dev/urandom of=/etc/munge/munge.key bs=1024 count=1 status=none
    fi
fi
chown munge:munge /etc/munge/munge.key
chmod 0400 /etc/munge/munge.key
if ! munge -n 2>/dev/null | unmunge >/dev/null 2>&1; then
    say "starting munged"
    runuser -u munge -- /usr/sbin/munged
    wait_for 20 sh -c 'munge -n | unmunge' || die "munged did not start (see /var/log/munge/)"
    cp /run/munge/munged.pid "$RUN/munged.pid"
fi

# --- 3. The configuration files (only ours are rewritten) ------------------------------------
for f in slurm.conf gres.conf slurmdbd.conf; do
    if [ -e "$CONF/$f" ] && ! grep -qF "$MARK" "$CONF/$f"; then
        die "$CONF/$f exists and was not written by this script: a SLURM is configured on" \
            "this machine already; use it (set the profile's account/partitions) or move it away"
    fi
done
cpus="$(nproc)"
mem_kb="$(awk '/^MemTotal:/ {print $2}' /proc/meminfo)"
real_mb=$((mem_kb * 9 / 10 / 1024))   # a bit under the machine's: slurmd drains a node
                                     # whose configured memory is above what it finds
# A database password, made once and kept (root only).
if [ ! -s "$STATE/db.pass" ]; then
    (umask 077; head -c 18 /dev/urandom | base64 | tr -dc 'A-Za-z0-9' > "$STATE/db.pass")
fi
db_pass="$(cat "$STATE/db.pass")"

cat > "$STATE/slurm.conf.new" <<EOF
$MARK for host $NODE ($cpus CPUs, ${real_mb} MB): a one-node test cluster.
ClusterName=$CLUSTER
SlurmctldHost=$NODE(127.0.0.1)
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
StateSaveLocation=$STATE/ctld
SlurmdSpoolDir=$STATE/d
SlurmctldPidFile=$RUN/slurmctld.pid
SlurmdPidFile=$RUN/slurmd.pid
SlurmctldLogFile=$LOGS/slurmctld.log
SlurmdLogFile=$LOGS/slurmd.log
# No cgroups (a container has none to give): processes tracked through /proc.
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/linux
JobAcctGatherFrequency=10
# CPUs, memory and GPUs are all consumable: a job waits for what it asked for.
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
SchedulerType=sched/backfill
GresTypes=gpu
# A node that went down (this script stopped, the machine restarted) comes back by itself.
ReturnToService=2
# Finished jobs stay in squeue for 5 minutes (the plugin can use squeue then; it uses sacct).
MinJobAge=300
MpiDefault=none
AccountingStorageType=accounting_storage/slurmdbd
AccountingStorageHost=localhost
AccountingStorageTRES=gres/gpu
# sacct shows the plugin's job comment (rule_<rule>_wildcards_<...>).
AccountingStoreFlags=job_comment
JobCompType=jobcomp/none
NodeName=$NODE NodeAddr=127.0.0.1 CPUs=$cpus RealMemory=$real_mb Gres=gpu:1 State=UNKNOWN
# Named as pipelines/profiles/slurm's placeholders, both over the one node.
PartitionName=cpu Nodes=$NODE Default=YES MaxTime=INFINITE State=UP
PartitionName=gpu Nodes=$NODE MaxTime=INFINITE State=UP
EOF

cat > "$STATE/gres.conf.new" <<EOF
$MARK: one GPU GRES backed by no device.
AutoDetect=off
NodeName=$NODE Name=gpu Count=1 File=/dev/null
EOF

cat > "$STATE/slurmdbd.conf.new" <<EOF
$MARK: accounting in MariaDB (local socket).
AuthType=auth/munge
DbdHost=localhost
SlurmUser=root
PidFile=$RUN/slurmdbd.pid
LogFile=$LOGS/slurmdbd.log
StorageType=accounting_storage/mysql
StorageHost=localhost
StorageLoc=slurm_acct_db
StorageUser=slurm
StoragePass=$db_pass
EOF

changed=0
for f in slurm.conf gres.conf slurmdbd.conf; do
    if ! cmp -s "$STATE/$f.new" "$CONF/$f"; then
        install -m 0644 "$STATE/$f.new" "$CONF/$f"
        changed=1
    fi
    rm -f "$STATE/$f.new"
done
chmod 0600 "$CONF/slurmdbd.conf"   # holds the database password; slurmdbd insists on 0600
if [ "$changed" = 1 ]; then
    say "wrote $CONF/slurm.conf, gres.conf, slurmdbd.conf (node $NODE: $cpus CPUs," \
        "${real_mb} MB, gpu:1)"
    # Daemons running on an older configuration are restarted.
    stop_daemon slurmd "$RUN/slurmd.pid"
    stop_daemon slurmctld "$RUN/slurmctld.pid"
    stop_daemon slurmdbd "$RUN/slurmdbd.pid"
fi

# --- 4. MariaDB and slurmdbd (accounting) ----------------------------------------------------
if ! mariadb-admin ping >/dev/null 2>&1; then
    if [ ! -d /var/lib/mysql/mysql ]; then
        say "initialising MariaDB in /var/lib/mysql"
        mariadb-install-db --user=mysql --datadir=/var/lib/mysql >/dev/null
    fi
    install -d -o mysql -g mysql -m 0755 /run/mysqld
    say "starting MariaDB"
    # mariadbd stays in the foreground: detached here, its pid recorded in $RUN (ours to
    # stop); socket only, no native AIO (a container may refuse io_setup), slurmdbd's
    # suggested lock timeout.
    setsid /usr/sbin/mariadbd --user=mysql --pid-file=/run/mysqld/sparling-slurm.pid \
        --socket=/run/mysqld/mysqld.sock --skip-networking --innodb-lock-wait-timeout=900 \
        --innodb-use-native-aio=0 \
        >>"$LOGS/mariadb.log" 2>&1 < /dev/null &
    wait_for 60 mariadb-admin ping || die "MariaDB did not start (see $LOGS/mariadb.log)"
    cp /run/mysqld/sparling-slurm.pid "$RUN/mariadb.pid"   # written as mysql, kept as ours
fi
# root reaches MariaDB through its socket (unix_socket authentication, Debian's default).
mariadb <<EOF
CREATE USER IF NOT EXISTS 'slurm'@'localhost' IDENTIFIED BY '$db_pass';
ALTER USER 'slurm'@'localhost' IDENTIFIED BY '$db_pass';
CREATE DATABASE IF NOT EXISTS slurm_acct_db;
GRANT ALL ON slurm_acct_db.* TO 'slurm'@'localhost';
EOF
if ! alive "$RUN/slurmdbd.pid" >/dev/null; then
    say "starting slurmdbd"
    /usr/sbin/slurmdbd
    wait_for 60 sacctmgr -n list cluster || die "slurmdbd did not answer (see $LOGS/slurmdbd.log)"
fi
# The cluster, the account, and its users (-i: no confirmation; an existing entry is fine).
if [ -z "$(sacctmgr -n -P list cluster "$CLUSTER" format=cluster)" ]; then
    sacctmgr -i add cluster "$CLUSTER" >/dev/null
fi
if [ -z "$(sacctmgr -n -P list account "$ACCOUNT" format=account)" ]; then
    sacctmgr -i add account "$ACCOUNT" cluster="$CLUSTER" \
        description="sparling-genomics test account" >/dev/null
fi
users=(root)
if [ -n "${SUDO_USER:-}" ] && [ "$SUDO_USER" != root ]; then users+=("$SUDO_USER"); fi
for user in "${users[@]}"; do
    if [ -z "$(sacctmgr -n -P list assoc user="$user" account="$ACCOUNT" format=user)" ]; then
        sacctmgr -i add user "$user" account="$ACCOUNT" defaultaccount="$ACCOUNT" \
            cluster="$CLUSTER" >/dev/null
    fi
done

# --- 5. slurmctld and slurmd -----------------------------------------------------------------
if ! alive "$RUN/slurmctld.pid" >/dev/null; then
    say "starting slurmctld"
    /usr/sbin/slurmctld
    wait_for 30 scontrol ping || die "slurmctld did not answer (see $LOGS/slurmctld.log)"
fi
if ! alive "$RUN/slurmd.pid" >/dev/null; then
    say "starting slurmd"
    /usr/sbin/slurmd
fi

# --- 6. Wait for the node to be idle ---------------------------------------------------------
node_idle() { [[ "$(node_state)" =~ ^(idle|mixed|allocated) ]]; }
if ! wait_for 60 node_idle; then
    # A node drained or down (e.g. killed earlier) is put back once, then waited for again.
    scontrol update nodename="$NODE" state=resume >/dev/null 2>&1 || true
    wait_for 30 node_idle || die "node $NODE is '$(node_state)', not idle:" \
        "$(scontrol show node "$NODE" | grep -o 'Reason=.*' || true)" \
        "(see $LOGS/slurmd.log, $LOGS/slurmctld.log)"
fi

say "up: SLURM $(sinfo -V | awk '{print $2}'), cluster $CLUSTER, account $ACCOUNT"
sinfo -o "%P %a %D %t %c %m %G %N"
say "try: sbatch -A $ACCOUNT -p gpu --gpus=1 --wrap 'echo \$CUDA_VISIBLE_DEVICES'; squeue; sacct"
say "stop: sudo bash $0 --stop"
