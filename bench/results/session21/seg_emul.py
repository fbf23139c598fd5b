# Emulates spmm_csr_split.cuh SD_MODE 2 (segments) for one K column: segments run in a random
# order, each as a unit; checks every row is written exactly once (plain store, zero, or the
# finisher) with the exact sum, and that counters return to zero.
import random
def run(rows, rowptr, CH, order_seed):
    nnz = rowptr[-1]
    rowind = [r for r in range(rows) for _ in range(rowptr[r], rowptr[r+1])]
    val = [random.randint(-3, 3) for _ in range(nnz)]
    ref = [sum(val[rowptr[r]:rowptr[r+1]]) for r in range(rows)]
    nseg = (nnz + CH - 1)//CH if nnz > 0 else 1
    C = [None]*rows; writes = [0]*rows
    ws = {}; cnt = [0]*nseg
    def store(r, v): C[r] = v; writes[r] += 1
    def finish(row, seg, acc):
        rs, re = rowptr[row], rowptr[row+1]
        c0, c1 = rs//CH, (re-1)//CH
        key = (seg, 1 if c0 == seg else 0)
        assert key not in ws, ("slot reused", key); ws[key] = acc
        old = cnt[c0]; cnt[c0] += 1
        if old != c1 - c0: return
        s = sum(ws[(q, 1 if q == c0 else 0)] for q in range(c0, c1+1))
        store(row, s); cnt[c0] = 0
    segs = list(range(nseg)); random.Random(order_seed).shuffle(segs)
    for seg in segs:
        s0 = seg*CH; s1 = min(s0+CH, nnz)
        cur = rowind[s0] if s0 < nnz else rows
        prev = rowind[s0-1] if s0 > 0 else -1
        for r in range(prev+1, cur): store(r, 0)
        if s1 <= s0: continue
        head_split = prev == cur; in_head = True; hrow = -1; acc = 0; hacc = 0
        for e in range(s0, s1):
            if rowind[e] != cur:
                if in_head and head_split: hrow = cur; hacc = acc
                else: store(cur, acc)
                in_head = False
                for r in range(cur+1, rowind[e]): store(r, 0)
                cur = rowind[e]; acc = 0
            acc += val[e]
        tail_split = s1 < nnz and rowind[s1] == cur
        split_end = tail_split or (in_head and head_split)
        if not split_end: store(cur, acc)
        if s1 == nnz:
            for r in range(cur+1, rows): store(r, 0)
        if hrow >= 0: finish(hrow, seg, hacc)
        if split_end: finish(cur, seg, acc)
    assert all(w == 1 for w in writes), ("writes", writes)
    assert C == ref, ("values", C, ref)
    assert all(c == 0 for c in cnt), "counter left"
random.seed(1)
n = 0
for trial in range(3000):
    rows = random.randint(1, 40)
    kind = random.random()
    lens = []
    for r in range(rows):
        if random.random() < 0.3: lens.append(0)
        elif random.random() < 0.1: lens.append(random.randint(20, 120))
        else: lens.append(random.randint(1, 6))
    if kind < 0.05: lens = [0]*rows
    rowptr = [0]
    for l in lens: rowptr.append(rowptr[-1]+l)
    for CH in (1, 2, 3, 5, 16, 32):
        run(rows, rowptr, CH, trial*7+CH); n += 1
print("ok", n, "cases")
