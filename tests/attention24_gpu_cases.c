/*
 * attention24_gpu_cases.c - the cuBLAS Attention-24 reference on ONNX case
 * folders (see attention24_gpu_cases.h). Cases are read with tools/onnx and
 * mapped by harness/onnx_attention_case.h; every output buffer starts as NaN
 * on the host and as all-ones bytes on the device.
 */
#include "tests/attention24_gpu_cases.h"

#include <stdio.h>
#include <string.h>

#include "harness/onnx_attention_case.h"
#include "tests/test_util.h"

/* One case: 0 identical, 1 f32 within 1 ulp, 2 failed; line says why. */
static int run_case(const char *path, opp_ref_gpu_t *ref, opp_a24g_ws_t *ws,
                    struct CUstream_st *stream, opp_a24g_cases_result_t *r, char *line,
                    size_t size) {
    char err[1024], prefix[300];
    opp_onnx_case_t c;
    opp_ref_attention24_desc_t d;
    opp_ref_attention24_tensors_t t;
    if (opp_onnx_attention_prepare(path, &c, &d, &t, err, sizeof(err)) != 0) {
        snprintf(line, size, "UNREADABLE: %s", err);
        return 2;
    }
    int rc = 2;
    const opp_status_t st = opp_a24g_run_host(ref, &d, &t, ws, stream);
    if (st != OPP_STATUS_SUCCESS) {
        snprintf(line, size, "GPU REFERENCE FAILED: %s: %s", opp_status_name(st),
                 opp_last_error_message());
        goto done;
    }
    snprintf(prefix, sizeof(prefix), "%s/", opp_onnx_case_name(path));
    opp_onnx_attention_result_t res;
    const int cmp = opp_onnx_attention_compare(&c, &d, &t, prefix, 5, &res, err, sizeof(err));
    if (cmp < 0) {
        snprintf(line, size, "ERROR: %s", err);
        goto done;
    }
    opp_onnx_attention_result_str(&res, line, size);
    if (d.dtype == OPP_DTYPE_F32) {
        for (int i = 0; i < res.n_compared; ++i) {
            r->f32_elems += res.stats[i].compared;
        }
        r->f32_flips += res.mismatches;
    }
    rc = cmp == 0 ? 0 : (d.dtype == OPP_DTYPE_F32 && res.max_ulp <= 1 ? 1 : 2);
done:
    opp_onnx_attention_free_outputs(&t);
    opp_onnx_case_free(&c);
    return rc;
}

void opp_a24g_run_cases(const char *env_var, const char *rel, int min_cases, opp_ref_gpu_t *ref,
                        opp_a24g_ws_t *ws, struct CUstream_st *stream, opp_a24g_cases_result_t *r) {
    char dir[4096], err[1024];
    char **cases = NULL;
    memset(r, 0, sizeof(*r));
    const int n =
        opp_onnx_case_folder(env_var, rel, min_cases, dir, sizeof(dir), &cases, err, sizeof(err));
    if (n < 0) {
        fail_msg("%s", err);
    }
    r->cases = n;
    for (int i = 0; i < n; ++i) {
        char line[2048];
        const int rc = run_case(cases[i], ref, ws, stream, r, line, sizeof(line));
        r->identical += rc == 0;
        r->within_1ulp += rc == 1;
        r->failed += rc == 2;
        printf("%-4s %s: %s\n", rc == 2 ? "FAIL" : "ok", opp_onnx_case_name(cases[i]), line);
    }
    printf("GPU reference on %s: %d cases, %d bit-identical, %d f32 within 1 ulp, %d failed; "
           "f32: %zu of %zu elements flipped by 1 ulp\n",
           dir, r->cases, r->identical, r->within_1ulp, r->failed, r->f32_flips, r->f32_elems);
    opp_onnx_case_list_free(cases, n);
}
