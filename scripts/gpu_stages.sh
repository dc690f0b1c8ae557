# Sourced by the GPU scripts. `start_log NAME`: the results folder `dest` ($OUT/NAME when OUT
# is set, else runs/NAME), with everything the script prints also written to dest/NAME.log.
# `stage NAME SECONDS CMD...` runs CMD with a time limit inside the script's whole budget
# (`budget` seconds from `t0`), reports its time and exit status, and sets `status=1` when it
# fails or is skipped (a stage that would start with under 20 s left).
t0=${t0:-$(date +%s)}
status=0
start_log() {
  dest="${OUT:-runs}/$1"
  mkdir -p "$dest"
  exec > >(tee "$dest/$1.log") 2>&1
}
stage() {
  local name=$1 limit=$2 s rc left; shift 2
  s=$(date +%s)
  left=$(( budget - (s - t0) ))
  if [ "$left" -lt 20 ]; then echo "== $name: skipped (the ${budget}s budget is spent)"; status=1; return; fi
  [ "$limit" -gt "$left" ] && limit=$left
  echo "== $name (limit ${limit}s)"
  timeout "$limit" "$@"; rc=$?
  echo "== $name: exit $rc after $(( $(date +%s) - s )) s"
  [ "$rc" = 0 ] || status=1
}
