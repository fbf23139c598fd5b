#!/usr/bin/env bash
# tests/cpu/cli_rooms.sh: the rules of the rooms (docs/ARCHITECTURE.md "Rooms and their
# dependencies"), read from the source tree: runtime includes no header of lower, tune, plan,
# model, isolate, api or cli; plan none of model; core includes no other room; analysis,
# plan, formats, model and ref reach no CUDA header, directly or through the headers they
# include (what lets the CPU lane build and test them without a device). Each violation is
# printed as file:line: include. A quoted include resolves as the compiler does: beside the
# file, then src/, then include/. Two rules of the code's shape too: no file of src/ over
# 900 lines, and no switch over the families (a `case` of a family id, a `switch` on a
# family / template field) outside the family files of src/plan/families/ (docs/ARCHITECTURE.md
# "Families": the search, reports and lowering reach a family through its table entry).
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
  plan) forbidden=' model ' ;;
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
        violation "$f:$n: $text ($room includes no header of $to)"
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

# No file of src/ over 900 lines: a file that grows past it is split by concern.
max_lines=900 longest=0
for f in "${sources[@]}"; do
  n=$(wc -l <"$f")
  [ "$n" -le "$max_lines" ] || violation "$f has $n lines (at most $max_lines)"
  [ "$n" -le "$longest" ] || longest=$n
done

# No switch over the families outside src/plan/families/. The family ids are the enumerators
# of the operators' family enums (sdi_spmv_family, sdi_spmm_template, sdi_spgemm_family in
# src/plan/*.h), their count markers aside; the list below keeps the rule when a header moves.
ids=$(awk '
  /typedef enum[[:space:]]*\{/ { inside = 1; list = ""; next }
  inside && /^[[:space:]]*\}/ {
    if ($0 ~ /sdi_(spmv_family|spmm_template|spgemm_family)[[:space:]]*;/) print list
    inside = 0; next
  }
  inside { while (match($0, /SDI_SP(MV|MM|GEMM)_[A-Z0-9_]+/)) { w = substr($0, RSTART, RLENGTH); $0 = substr($0, RSTART + RLENGTH)
                                                if (w !~ /_N(FAMILIES|TEMPLATES)$/) list = list " " w } }
' src/plan/*.h 2>/dev/null | tr ' ' '\n' | sort -u | grep . || true)
ids+=" SDI_SPMV_CSR_VEC SDI_SPMV_CSR_ADAPTIVE SDI_SPMV_MERGE SDI_SPMV_TINY SDI_SPMV_SELL SDI_SPMV_ELL"
ids+=" SDI_SPMV_BSR SDI_SPMV_TILES16 SDI_SPMV_COO SDI_SPMV_DIA SDI_SPMM_CSR_ROW SDI_SPMM_CSR_SPLIT"
ids+=" SDI_SPMM_CSR_WINDOW SDI_SPMM_BSR SDI_SPMM_BELL SDI_SPMM_PCSR SDI_SPMM_COL_WINDOW SDI_SPMM_BSR_TC"
ids+=" SDI_SPGEMM_HASH SDI_SPGEMM_TILED SDI_SPGEMM_HYBRID SDI_SPGEMM_DENSE"
id_re=$(tr ' ' '\n' <<<"$ids" | grep . | sort -u | paste -sd'|')
switches=0
for f in "${sources[@]}"; do
  case "$f" in src/plan/families/*) continue ;; esac
  while IFS= read -r line; do
    text=${line#*:}
    violation "$f:${line%%:*}: ${text#"${text%%[![:space:]]*}"} (a switch over the families outside src/plan/families/)"
    switches=$((switches + 1))
  done < <(grep -nE "case[[:space:]]+($id_re)[[:space:]]*:|switch[[:space:]]*\([^()]*(family|tmpl)[[:space:]]*\)" "$f" || true)
done

if [ "$fails" -gt 0 ]; then
  echo "cli_rooms: $fails violation(s) of the rules of docs/ARCHITECTURE.md \"Rooms and their dependencies\""
  exit 1
fi
echo "cli_rooms: $edges cross-room includes of runtime, plan and core, all allowed;" \
  "$clean files of analysis, plan, formats, model and ref reach no CUDA header;" \
  "no file of src/ over $max_lines lines (the longest has $longest); no switch over the families" \
  "outside src/plan/families/"
