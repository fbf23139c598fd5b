/* examples/spmv_example.c: the public API in one page: read a matrix, compile the SpMV
 * kernel that fits it (or load it from the cache), run it on device vectors, print what
 * was built. Usage: spmv_example MATRIX.mtx */
#include <stdio.h>
#include <stdlib.h>

#include <cuda_runtime_api.h>

#include "sparseditto.h"

#define CHECK(call)                                                                        \
    do {                                                                                   \
        sd_status s_ = (call);                                                             \
        if (s_ != SD_OK) {                                                                 \
            fprintf(stderr, "%s: %s (%s)\n", #call, sd_status_string(s_), sd_last_error()); \
            goto done;                                                                     \
        }                                                                                  \
    } while (0)

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: %s MATRIX.mtx\n", argv[0]);
        return 2;
    }
    int rc = 1;
    sd_csr a = {0};
    sd_context *ctx = NULL;
    sd_kernel *kern = NULL;
    float *x = NULL, *y = NULL, *hx = NULL, *hy = NULL;
    char *json = NULL;
    CHECK(sd_csr_read(argv[1], &a));
    CHECK(sd_context_create(NULL, &ctx)); /* device 0, default cache directory */
    CHECK(sd_compile(ctx, &a, SD_OP_SPMV, 0, NULL, &kern));
    hx = malloc((size_t)a.cols * sizeof *hx);
    hy = malloc((size_t)a.rows * sizeof *hy);
    if (hx == NULL || hy == NULL)
        goto done;
    for (int32_t j = 0; j < a.cols; j++)
        hx[j] = 1.0f;
    if (cudaMalloc((void **)&x, (size_t)a.cols * sizeof *x) != cudaSuccess ||
        cudaMalloc((void **)&y, (size_t)a.rows * sizeof *y) != cudaSuccess)
        goto done;
    cudaMemcpy(x, hx, (size_t)a.cols * sizeof *x, cudaMemcpyHostToDevice);
    CHECK(sd_spmv(kern, x, y, NULL)); /* asynchronous on the default stream */
    cudaMemcpy(hy, y, (size_t)a.rows * sizeof *y, cudaMemcpyDeviceToHost);
    printf("y[0] = %g (row sum of A)\n", a.rows > 0 ? hy[0] : 0.0f);
    json = malloc(1 << 20);
    if (json && sd_kernel_describe(kern, json, 1 << 20) == SD_OK)
        printf("%.400s...\n", json);
    rc = 0;
done:
    free(json);
    free(hx);
    free(hy);
    cudaFree(x);
    cudaFree(y);
    sd_kernel_destroy(kern);
    sd_context_destroy(ctx);
    sd_csr_free(&a);
    return rc;
}
