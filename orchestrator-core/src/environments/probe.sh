# orch environment probe (contract orch-probe/1). POSIX sh only: it must run
# in any image. Prints `key=value` lines; the server reads the verdict from
# them. Inputs: ORCH_PROBE_TOOLS (declared tools) and ORCH_PROBE_DOMAINS
# (hosts or URLs that must answer), both space-separated.
echo "orch-probe=1"
echo "shell=$(readlink /proc/$$/exe 2>/dev/null || echo sh)"
echo "arch=$(uname -m 2>/dev/null)"
echo "kernel=$(uname -sr 2>/dev/null)"
if [ -r /etc/os-release ]; then
  . /etc/os-release
  echo "distro.id=${ID:-}"
  echo "distro.version=${VERSION_ID:-}"
  echo "distro.name=${PRETTY_NAME:-}"
fi
for c in sh bash git curl wget tar gzip unzip ssh make $ORCH_PROBE_TOOLS; do
  p=$(command -v "$c" 2>/dev/null) && echo "command.$c=$p"
done
for m in apt-get apk dnf microdnf yum zypper pacman; do
  if command -v "$m" >/dev/null 2>&1; then echo "package_manager=$m"; break; fi
done
version() { "$@" 2>&1 | head -n 1; }
command -v python3 >/dev/null 2>&1 && echo "runtime.python3=$(version python3 --version)"
command -v node >/dev/null 2>&1 && echo "runtime.node=$(version node --version)"
command -v rustc >/dev/null 2>&1 && echo "runtime.rustc=$(version rustc --version)"
command -v cargo >/dev/null 2>&1 && echo "runtime.cargo=$(version cargo --version)"
command -v go >/dev/null 2>&1 && echo "runtime.go=$(version go version)"
command -v java >/dev/null 2>&1 && echo "runtime.java=$(version java -version)"
command -v ruby >/dev/null 2>&1 && echo "runtime.ruby=$(version ruby --version)"
for d in $ORCH_PROBE_DOMAINS; do
  case "$d" in *://*) url="$d" ;; *) url="https://$d" ;; esac
  if command -v curl >/dev/null 2>&1; then
    curl -s -o /dev/null --max-time 10 "$url" && r=ok || r=unreachable
  elif command -v wget >/dev/null 2>&1; then
    wget -q -O /dev/null -T 10 "$url"; rc=$?
    # 8: the server answered with an error status, so it is reachable.
    if [ $rc -eq 0 ] || [ $rc -eq 8 ]; then r=ok; else r=unreachable; fi
  else
    r=unreachable
  fi
  echo "domain.$d=$r"
done
echo "orch-probe-end=1"
