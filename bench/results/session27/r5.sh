# session 27 call 5 (branch s27-call4): what the search measured for col_window's members
# on three twins at K = 8 and 32 (every trial in the search record; cwprobe.sh is the
# helper's s27-colwin.sh on three of its six twins, made here by
#   sed 's/^NAMES=.*/NAMES="Belcastro_mouse_gene Belcastro_human_gene1 Gupta_gupta3"/' s27-colwin.sh > cwprobe.sh)
export SD_LANE_T0=$(date +%s)
mkdir -p $OUT/cw && OUT=$OUT/cw bash cwprobe.sh > /dev/null 2>&1; cat $OUT/cw/summary.txt; cat $OUT/cw/runs.txt
