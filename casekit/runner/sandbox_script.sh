# casekit sandbox wrapper: runs as root inside fresh mount/pid/net/ipc/uts namespaces.
# Inputs (environment): CK_RUN (host run dir with in/ and out/), CK_MNT (work mount point under /run),
# CK_DISK_MB, CK_CACHE (optional persistent home), CK_HIDE (colon-separated host paths to hide),
# CK_KEEP (colon-separated host paths that stay visible, read-only, even inside hidden ones),
# CK_DROP (1: drop to uid/gid CK_UID/CK_GID), CK_START_FD, CK_END_FD, CK_TIMING (harness|wrapper|none),
# CK_LIMITS (prlimit options).  The untrusted command is "$@".
set -u
fail() { echo "casekit sandbox: $1" >&2; exit 90; }
mount --make-rprivate / || fail "cannot make mounts private"
# the new network namespace has only a loopback interface, down: bring it up (nothing outside is
# reachable through it; Open MPI's singleton start needs an interface)
ip link set lo up 2>/dev/null || ifconfig lo up 2>/dev/null || true
# the PID namespace's own /proc: host processes disappear, and /proc/<pid> is the run's own
# (MPI transports open their shared memory through /proc/<pid>/fd)
mount -t proc -o nosuid,nodev,noexec proc /proc || fail "cannot mount a private /proc"
# a private /run (the host's sockets and state disappear) holding the work tmpfs
mount -t tmpfs -o size=1m,mode=0755 casekit-run /run || fail "cannot replace /run"
mkdir -p "$CK_MNT" /run/lock || fail "cannot create $CK_MNT"
mount -t tmpfs -o "size=${CK_DISK_MB}m,mode=0755" casekit-work "$CK_MNT" || fail "cannot mount the work tmpfs"
mkdir "$CK_MNT/work" "$CK_MNT/home"
cp -a "$CK_RUN/in/." "$CK_MNT/work/" || fail "cannot copy the inputs"
if [ -n "${CK_CACHE:-}" ]; then mount --bind "$CK_CACHE" "$CK_MNT/home" || fail "cannot mount the cache"; fi
if [ "${CK_DROP:-0}" = 1 ]; then
  chown -R "$CK_UID:$CK_GID" "$CK_MNT/work" "$CK_MNT/home" || fail "cannot hand the work dir to the sandbox user"
  drop=(setpriv --reuid="$CK_UID" --regid="$CK_GID" --clear-groups --no-new-privs --inh-caps=-all --bounding-set=-all)
else
  drop=()
fi
# keep: stage the paths that must stay visible, hide, then put the kept paths back read-only
IFS=: read -r -a keeps <<< "${CK_KEEP:-}"
mkdir "$CK_MNT/keep"
for i in "${!keeps[@]}"; do
  mkdir "$CK_MNT/keep/$i" && mount --bind "${keeps[$i]}" "$CK_MNT/keep/$i" || fail "cannot keep ${keeps[$i]}"
done
hidden=()
IFS=: read -r -a paths <<< "${CK_HIDE:-}"
for p in "${paths[@]}"; do
  if [ -n "$p" ] && [ -d "$p" ]; then
    mount -t tmpfs -o size=1m,mode=0755 casekit-hidden "$p" && hidden+=("$p") || fail "cannot hide $p"
  fi
done
# private, size-limited scratch instead of the host's world-writable directories
for p in /tmp /var/tmp /dev/shm /run/lock; do
  if [ -d "$(dirname "$p")" ]; then
    mkdir -p "$p" 2>/dev/null
    mount -t tmpfs -o "size=${CK_DISK_MB}m,mode=1777" casekit-scratch "$p" && hidden+=("$p") || fail "cannot replace $p"
  fi
done
for i in "${!keeps[@]}"; do
  k=${keeps[$i]}
  mkdir -p "$k" 2>/dev/null
  mount --bind "$CK_MNT/keep/$i" "$k" && mount -o remount,bind,ro "$k" || fail "cannot restore $k"
  umount "$CK_MNT/keep/$i"
done
rmdir "$CK_MNT"/keep/* "$CK_MNT/keep" 2>/dev/null
cd "$CK_MNT/work" || fail "cannot enter the work dir"
read -r -a limits <<< "$CK_LIMITS"
# the command never sees the end descriptor, nor the start one unless its harness writes it
redirect="$CK_END_FD>&-"
[ "$CK_TIMING" = harness ] || redirect="$redirect $CK_START_FD>&-"
if [ "$CK_TIMING" = wrapper ]; then printf s >&"$CK_START_FD"; fi
eval 'prlimit "${limits[@]}" -- "${drop[@]}" "$@" '"$redirect" && status=0 || status=$?
printf e >&"$CK_END_FD"
for k in "${keeps[@]}"; do umount "$k" 2>/dev/null; done
for ((i=${#hidden[@]}-1; i>=0; i--)); do umount "${hidden[$i]}"; done
find . -maxdepth 1 -type f -exec cp --no-dereference -t "$CK_RUN/out/" {} + 2>/dev/null
exit "$status"
