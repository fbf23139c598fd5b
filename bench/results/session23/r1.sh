# session 23 call 1: (a) GPU lane test_spmm on branch s23 (= main + s22-acc-zero) is run by
# gpu-lane.sh --tests; (b) SpGEMM on small real products: every candidate's time (--progress),
# the winner's bins, and Nsight per-kernel durations of the winner (what a 100-us product of
# 200K products spends where).
export SD_LANE_T0=$(date +%s)
M=shared/matrices/suitesparse; [ -d $M ] || M=../shared/matrices/suitesparse
B=build-gpu/sparseditto
export SPARSEDITTO_CACHE=/tmp/c_sg
for m in USAir97 jazz G51 hep-th Chem97Zt ca-GrQc Si2 bp_1200 cavity14 wiki-Vote; do
  echo "=== $m"
  timeout 60 $B compile $M/$m.mtx.gz --op spgemm --no-vendor --progress --json > $OUT/sg_$m.json 2> $OUT/sg_$m.progress
  tail -n 40 $OUT/sg_$m.progress
  python3 -c "
import json,sys
d=json.load(open('$OUT/sg_$m.json'))
def walk(x,p=''):
    if isinstance(x,dict):
        for k,v in x.items(): walk(v,p+'.'+k)
    elif isinstance(x,list):
        pass
    else:
        if any(s in p for s in ('bins','config','us','launch','family','nnz_c','u_')): print(p,x)
walk(d)" 2>&1 | head -30
  timeout 60 ncu --clock-control none --csv --metrics gpu__time_duration.sum,launch__grid_size,launch__block_size,launch__registers_per_thread,launch__shared_mem_per_block_dynamic $B run $M/$m.mtx.gz --op spgemm --no-vendor --iters 2 > $OUT/ncu_$m.csv 2> $OUT/ncu_$m.err
  python3 - $OUT/ncu_$m.csv <<'PY'
import csv,sys,collections
rows=[r for r in csv.reader(open(sys.argv[1])) if len(r)>10]
if not rows: print("no ncu rows"); sys.exit()
h=rows[0]; ix={k:i for i,k in enumerate(h)}
per=collections.OrderedDict()
for r in rows[1:]:
    key=(r[ix["ID"]],r[ix["Kernel Name"]][:60])
    per.setdefault(key,{})[r[ix["Metric Name"]]]=r[ix["Metric Value"]]
for (i,k),v in per.items():
    print("%4s %-60s %10s ns grid %8s blk %5s regs %4s smem %7s"%(i,k,v.get("gpu__time_duration.sum"),v.get("launch__grid_size"),v.get("launch__block_size"),v.get("launch__registers_per_thread"),v.get("launch__shared_mem_per_block_dynamic")))
PY
done
