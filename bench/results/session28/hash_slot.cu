// Session 28 microbenchmark (not part of the build): SpGEMM's shared-memory hash insert as
// the kernels do it now (volatile probe, CAS on the key, float atomicAdd on the value: the
// add compiles to a load/add/CAS loop on shared memory) against one 64-bit slot per entry
// (key high, value bits low) updated by a single 64-bit CAS loop that claims and adds.
// Each team (a warp or a CTA) fills its own table of 2^LCAP slots from P products whose
// columns take D distinct values; the table's contents are then reduced so that nothing is
// optimised away and the two variants can be checked against each other.
// build: nvcc -O3 -arch=sm_90 -o hash_slot hash_slot.cu; run: ./hash_slot
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>
#include <cmath>
#define EMPTY 0x7fffffff
#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { printf("CUDA %s at %d\n", cudaGetErrorString(e_), __LINE__); exit(1); } } while (0)

template <int LCAP> __device__ __forceinline__ unsigned hsh(int c) { return ((unsigned)c * 2654435769u) >> (32 - LCAP); }

template <int LCAP> __device__ __forceinline__ int ins_cur(int *keys, float *vals, int col, float v) {
  constexpr unsigned MASK = (1u << LCAP) - 1u; unsigned h = hsh<LCAP>(col); int claimed = 0;
  for (;;) { const int k = ((volatile int *)keys)[h]; if (k == col) break;
    if (k == EMPTY) { const int old = atomicCAS(keys + h, EMPTY, col); if (old == EMPTY) { claimed = 1; break; } if (old == col) break; }
    h = (h + 1u) & MASK; }
  atomicAdd(vals + h, v); return claimed; }

template <int LCAP> __device__ __forceinline__ int ins_64(unsigned long long *slots, int col, float v) {
  constexpr unsigned MASK = (1u << LCAP) - 1u; unsigned h = hsh<LCAP>(col);
  const unsigned long long empty = (unsigned long long)(unsigned)EMPTY << 32;
  unsigned long long cur = ((volatile unsigned long long *)slots)[h];
  for (;;) {
    const int k = (int)(cur >> 32);
    if (k == col) {
      const unsigned long long nw = (cur & 0xffffffff00000000ull) | __float_as_uint(__uint_as_float((unsigned)cur) + v);
      const unsigned long long old = atomicCAS(slots + h, cur, nw);
      if (old == cur) return 0; cur = old; continue; }
    if (k == EMPTY) {
      const unsigned long long nw = ((unsigned long long)(unsigned)col << 32) | __float_as_uint(v);
      const unsigned long long old = atomicCAS(slots + h, empty, nw);
      if (old == empty) return 1; cur = old; continue; }
    h = (h + 1u) & MASK; cur = ((volatile unsigned long long *)slots)[h]; } }

// TT threads share a table; blockDim 256; team t of the CTA handles products [t*P, (t+1)*P) of
// its block's slice.
template <int LCAP, int TT> __global__ void __launch_bounds__(256) k_cur(const int *c, const float *v, int P, float *out, int *cnt) {
  extern __shared__ unsigned char sm[];
  constexpr int CAP = 1 << LCAP; const int team = threadIdx.x / TT, lane = threadIdx.x % TT;
  int *keys = (int *)sm + team * CAP; float *vals = (float *)(sm + (256 / TT) * CAP * 4) + team * CAP;
  for (int s = lane; s < CAP; s += TT) { keys[s] = EMPTY; vals[s] = 0.f; }
  __syncthreads();
  const long long base = ((long long)blockIdx.x * (256 / TT) + team) * P;
  int m = 0;
  for (int i = lane; i < P; i += TT) m += ins_cur<LCAP>(keys, vals, __ldg(c + base + i), __ldg(v + base + i));
  __syncthreads();
  float s = 0.f; for (int q = lane; q < CAP; q += TT) if (keys[q] != EMPTY) s += vals[q] * (float)(keys[q] & 7);
  atomicAdd(out + blockIdx.x, s); atomicAdd(cnt + blockIdx.x, m); }

template <int LCAP, int TT> __global__ void __launch_bounds__(256) k_64(const int *c, const float *v, int P, float *out, int *cnt) {
  extern __shared__ unsigned char sm[];
  constexpr int CAP = 1 << LCAP; const int team = threadIdx.x / TT, lane = threadIdx.x % TT;
  unsigned long long *slots = (unsigned long long *)sm + team * CAP;
  for (int s = lane; s < CAP; s += TT) slots[s] = (unsigned long long)(unsigned)EMPTY << 32;
  __syncthreads();
  const long long base = ((long long)blockIdx.x * (256 / TT) + team) * P;
  int m = 0;
  for (int i = lane; i < P; i += TT) m += ins_64<LCAP>(slots, __ldg(c + base + i), __ldg(v + base + i));
  __syncthreads();
  float s = 0.f; for (int q = lane; q < CAP; q += TT) { const unsigned long long x = slots[q]; const int k = (int)(x >> 32); if (k != EMPTY) s += __uint_as_float((unsigned)x) * (float)(k & 7); }
  atomicAdd(out + blockIdx.x, s); atomicAdd(cnt + blockIdx.x, m); }

template <int LCAP, int TT> void run(int D, int P, int blocks) {
  const int teams = 256 / TT; const long long n = (long long)blocks * teams * P;
  std::vector<int> hc(n); std::vector<float> hv(n);
  unsigned r = 12345u + D * 7 + P;
  for (long long t = 0; t < (long long)blocks * teams; t++) {
    std::vector<int> cols(D);  // D distinct columns of a wide column space (as a row of C)
    const int base = (int)(t % 64) * 30000;
    for (int d = 0; d < D; d++) cols[d] = base + d * 13;  // distinct, spread as in a band
    for (int i = 0; i < P; i++) { r = r * 1664525u + 1013904223u; hc[t * P + i] = cols[(r >> 8) % D]; hv[t * P + i] = (float)((r >> 12) % 1000) / 1000.f; }
  }
  int *dc, *dcnt; float *dv, *dout;
  CK(cudaMalloc(&dc, n * 4)); CK(cudaMalloc(&dv, n * 4)); CK(cudaMalloc(&dout, blocks * 4 * 2)); CK(cudaMalloc(&dcnt, blocks * 4 * 2));
  CK(cudaMemcpy(dc, hc.data(), n * 4, cudaMemcpyHostToDevice)); CK(cudaMemcpy(dv, hv.data(), n * 4, cudaMemcpyHostToDevice));
  const size_t smem = (size_t)teams * (1 << LCAP) * 8;
  CK(cudaFuncSetAttribute(k_cur<LCAP, TT>, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem));
  CK(cudaFuncSetAttribute(k_64<LCAP, TT>, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem));
  cudaEvent_t e0, e1; CK(cudaEventCreate(&e0)); CK(cudaEventCreate(&e1));
  float t_cur = 1e30f, t_64 = 1e30f;
  std::vector<float> o1(blocks), o2(blocks); std::vector<int> c1(blocks), c2(blocks);
  for (int rep = 0; rep < 3; rep++) {
    for (int which = 0; which < 2; which++) {
      CK(cudaMemset(dout, 0, blocks * 4)); CK(cudaMemset(dcnt, 0, blocks * 4));
      if (which == 0) k_cur<LCAP, TT><<<blocks, 256, smem>>>(dc, dv, P, dout, dcnt); else k_64<LCAP, TT><<<blocks, 256, smem>>>(dc, dv, P, dout, dcnt);
      CK(cudaDeviceSynchronize());
      CK(cudaEventRecord(e0));
      for (int it = 0; it < 20; it++) {
        if (which == 0) k_cur<LCAP, TT><<<blocks, 256, smem>>>(dc, dv, P, dout, dcnt); else k_64<LCAP, TT><<<blocks, 256, smem>>>(dc, dv, P, dout, dcnt);
      }
      CK(cudaEventRecord(e1)); CK(cudaEventSynchronize(e1));
      float ms; CK(cudaEventElapsedTime(&ms, e0, e1)); ms /= 20;
      if (which == 0) t_cur = fminf(t_cur, ms); else t_64 = fminf(t_64, ms);
      CK(cudaMemset(dout, 0, blocks * 4)); CK(cudaMemset(dcnt, 0, blocks * 4));
      if (which == 0) k_cur<LCAP, TT><<<blocks, 256, smem>>>(dc, dv, P, dout, dcnt); else k_64<LCAP, TT><<<blocks, 256, smem>>>(dc, dv, P, dout, dcnt);
      CK(cudaDeviceSynchronize());
      CK(cudaMemcpy(which == 0 ? o1.data() : o2.data(), dout, blocks * 4, cudaMemcpyDeviceToHost));
      CK(cudaMemcpy(which == 0 ? c1.data() : c2.data(), dcnt, blocks * 4, cudaMemcpyDeviceToHost));
    }
  }
  double maxrel = 0; long long dc1 = 0, dc2 = 0;
  for (int b = 0; b < blocks; b++) { maxrel = fmax(maxrel, fabs(o1[b] - o2[b]) / (fabs(o1[b]) + 1e-6)); dc1 += c1[b]; dc2 += c2[b]; }
  printf("LCAP=%2d team=%3d D=%5d P=%6d load=%.2f prod/distinct=%6.1f | cur %8.1f us  64bit %8.1f us  ratio cur/64 %.2f | Gprod/s cur %.1f 64 %.1f | distinct %lld/%lld maxrel %.1e\n",
         LCAP, TT, D, P, (double)D / (1 << LCAP), (double)P / D, t_cur * 1e3, t_64 * 1e3, t_cur / t_64, n / (t_cur * 1e6), n / (t_64 * 1e6), dc1, dc2, maxrel);
  cudaFree(dc); cudaFree(dv); cudaFree(dout); cudaFree(dcnt);
}

int main() {
  const int B = 132 * 8;
  // warp teams (SgGroup, G = 32): tables of 256..1024 slots
  run<8, 32>(64, 512, B);  run<8, 32>(128, 512, B); run<8, 32>(128, 2048, B);
  run<10, 32>(256, 1024, B); run<10, 32>(512, 4096, B);
  // CTA teams: tables of 2048..4096 slots
  run<11, 256>(512, 8192, B); run<11, 256>(1024, 8192, B); run<11, 256>(1024, 32768, B);
  run<12, 256>(2048, 16384, B); run<12, 256>(1024, 65536, B);
  // heavy repeats (few distinct columns: dense-ish rows)
  run<11, 256>(128, 32768, B);
  return 0;
}
