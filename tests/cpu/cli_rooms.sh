#!/usr/bin/env bash
# tests/cpu/cli_rooms.sh: the include rules of the rooms (docs/ARCHITECTURE.md "Rooms and their
# dependencies"), read from the source tree: runtime includes no header of lower, tune, plan,
# model, isolate, api or cli; core includes no other room; analysis, plan, formats, model and
# ref reach no CUDA header, directly or through the headers they include (what lets the CPU
# lane build and test them without a device). Each violation is printed as file:line: include.
# A quoted include resolves as the compiler does: beside the file, then src/, then include/.
# Usage (ctest): bash cli_rooms.sh <sparseditto-binary> <matrices-dir> <tests/data-dir>
set -euo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$repo"
[ -d src/core ] || { echo "cli_rooms: FAIL: no src/core under $repo"; exit 1; }

cuda_header='^(cuda[^/]*|cusparse[^/]*|cublas[^/]*|nvrtc|nvJitLink|nvToolsExt[^/]*)\.h$'
declare -A included # file → "line<TAB>target<TAB>text" records, one a line
declare -A cuda_path # file → the include chain that reaches a CUDA header ("" when none)

room_of() { # a repository path → its room (src/<room>/...), "include", or "" outside both
  case "$1" in
  src/*/*) local r=${1#src/}; echo "${r%%/*}" ;;
  include/*) echo include ;;
  *) echo "" ;;
  esac
}

# The includes of a file: line, the repository path of a quoted header that exists (else
# "<name>" for a system header, "?name" for one found nowhere), and the line's text.
scan() {
  local f=$1 dir out="" n text name target cand
  dir=$(dirname "$f")
  while IFS=: read -r n text; do
    [[ $text =~ ^[[:space:]]*#[[:space:]]*include[[:space:]]*([\"\<])([^\"\>]+) ]] || continue
    name=${BASH_REMATCH[2]}
    if [ "${BASH_REMATCH[1]}" = '<' ]; then
      target="<$name>"
    else
      target="?$name"
      for cand in "$dir/$name" "src/$name" "include/$name"; do
        if [ -f "$cand" ]; then
          target=$(realpath -m --relative-to="$repo" "$cand")
          break
        fi
      done
    fi
    out+="$n"$'\t'"$target"$'\t'"$text"$'\n'
  done < <(grep -nE '^[[:space:]]*#[[:space:]]*include' "$f" || true)
  included[$f]=$out
}

# cuda_chain FILE: sets cuda_path[FILE] to "a.h:3 → b.h:7: #include <cuda.h>" when FILE
# reaches a CUDA header through quoted includes inside the repository, to "" otherwise.
cuda_chain() {
  local f=$1 n target text
  [ -n "${cuda_path[$f]+set}" ] && return 0
  cuda_path[$f]="" # cycles and guards stop here
  [ -n "${included[$f]+set}" ] || scan "$f"
  while IFS=$'\t' read -r n target text; do
    [ -n "$n" ] || continue
    case "$target" in
    \<*\> | \?*)
      local base=${target#[<?]}
      base=${base%>}
      if [[ ${base##*/} =~ $cuda_header ]]; then
        cuda_path[$f]="$f:$n: $text"
        return 0
      fi
      ;;
    *)
      cuda_chain "$target"
      if [ -n "${cuda_path[$target]}" ]; then
        cuda_path[$f]="$f:$n → ${cuda_path[$target]}"
        return 0
      fi
      ;;
    esac
  done <<<"${included[$f]}"
}

fails=0
violation() {
  echo "cli_rooms: FAIL: $1"
  fails=$((fails + 1))
}

mapfile -t sources < <(find src -type f \( -name '*.c' -o -name '*.h' -o -name '*.cuh' \) | sort)
[ "${#sources[@]}" -gt 0 ] || { echo "cli_rooms: FAIL: no sources under src/"; exit 1; }
edges=0 clean=0
for f in "${sources[@]}"; do
  room=$(room_of "$f")
  case "$room" in
  runtime) forbidden=' lower tune plan model isolate api cli ' ;;
  core) forbidden=any ;;
  *) forbidden='' ;;
  esac
  if [ -n "$forbidden" ]; then
    scan "$f"
    while IFS=$'\t' read -r n target text; do
      [ -n "$n" ] || continue
      case "$target" in \<*\> | \?*) continue ;; esac
      to=$(room_of "$target")
      [ "$to" = "$room" ] && continue
      if [ "$forbidden" = any ] && [ "$to" != include ]; then
        violation "$f:$n: $text (core includes only core and include/; this is $to)"
      elif [[ $forbidden == *" $to "* ]]; then
        violation "$f:$n: $text (runtime includes no header of $to)"
      fi
      edges=$((edges + 1))
    done <<<"${included[$f]}"
  fi
  case "$room" in
  analysis | plan | formats | model | ref)
    cuda_chain "$f"
    [ -z "${cuda_path[$f]}" ] || violation "${cuda_path[$f]} ($room reaches a CUDA header)"
    clean=$((clean + 1))
    ;;
  esac
done

if [ "$fails" -gt 0 ]; then
  echo "cli_rooms: $fails include(s) break the rules of docs/ARCHITECTURE.md \"Rooms and their dependencies\""
  exit 1
fi
echo "cli_rooms: $edges cross-room includes of runtime and core, all allowed;" \
  "$clean files of analysis, plan, formats, model and ref reach no CUDA header"
