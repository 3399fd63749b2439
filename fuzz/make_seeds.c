/*
 * make_seeds.c - writes the seed corpora of the descriptor and varlen fuzz
 * targets (fuzz/corpus/{desc,attention24_desc,varlen}/) in the input
 * format each target's file comment describes: valid descriptors of the
 * common shapes, one invalid field each, and the cu_seqlens faults. The ONNX
 * seeds are small files of testdata/ (fuzz/README.md).
 *   cc -std=c11 -I. fuzz/make_seeds.c lib/desc_size.c lib/status.c lib/version.c \
 *      -o build/make_seeds && build/make_seeds fuzz/corpus
 * Re-run it when a descriptor's layout changes (the seeds are raw structs).
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "lib/oppacked.h"

static int write_seed(const char *dir, const char *name, uint8_t sel, const void *body, size_t n) {
    char path[512];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "wb");
    if (f == NULL) {
        perror(path);
        return 1;
    }
    int bad = fwrite(&sel, 1, 1, f) != 1 || fwrite(body, 1, n, f) != n;
    bad |= fclose(f) != 0;
    return bad;
}

static opp_attention_desc_t packed(opp_dtype_t dt, int32_t hq, int32_t hkv, int32_t d) {
    opp_attention_desc_t x;
    opp_attention_desc_init(&x);
    x.q_dtype = x.k_dtype = x.v_dtype = x.out_dtype = dt;
    x.batch = 3;
    x.num_heads = hq;
    x.kv_num_heads = hkv;
    x.head_size = d;
    x.total_q = 100;
    x.total_kv = 120;
    x.max_seqlen_q = 50;
    x.max_seqlen_kv = 60;
    return x;
}

static opp_attention24_desc_t padded(opp_dtype_t dt, int32_t rank, int32_t d) {
    opp_attention24_desc_t x;
    opp_attention24_desc_init(&x);
    x.q_dtype = x.k_dtype = x.v_dtype = x.out_dtype = dt;
    x.input_rank = rank;
    x.batch = 2;
    x.num_heads = 8;
    x.kv_num_heads = 2;
    x.head_size = d;
    x.q_seqlen = 5;
    x.kv_seqlen = 40;
    return x;
}

static int desc_seeds(const char *root) {
    char dir[400];
    snprintf(dir, sizeof dir, "%s/desc", root);
    int bad = 0;
    opp_attention_desc_t x = packed(OPP_DTYPE_F16, 8, 2, 64);
    bad |= write_seed(dir, "f16_gqa_d64", 0, &x, sizeof x);
    x = packed(OPP_DTYPE_BF16, 32, 8, 128);
    x.is_causal = 1;
    x.softcap = 30.0f;
    x.q_row_stride = 32 * 128 * 3; /* q inside a fused qkv buffer */
    bad |= write_seed(dir, "bf16_causal_softcap_strided", 0, &x, sizeof x);
    x = packed(OPP_DTYPE_F32, 4, 0, 80);
    x.algo = OPP_ALGO_EXACT;
    x.v_head_size = 40;
    bad |= write_seed(dir, "f32_exact_dv", 0, &x, sizeof x);
    x = packed(OPP_DTYPE_F16, 8, 8, 256);
    x.algo = OPP_ALGO_FAST;
    x.scale = 0.125f;
    bad |= write_seed(dir, "f16_fast_d256_old_header", 1, &x, sizeof x);
    x = packed(OPP_DTYPE_F16, 6, 4, 64);
    bad |= write_seed(dir, "bad_kv_heads", 0, &x, sizeof x);
    x = packed(OPP_DTYPE_F16, 8, 2, 64);
    x.max_seqlen_q = 10; /* 3 * 10 < 100 */
    bad |= write_seed(dir, "bad_max_seqlen", 0, &x, sizeof x);
    x.max_seqlen_q = 50;
    x.k_row_stride = INT64_MAX / 4;
    bad |= write_seed(dir, "bad_stride_overflow", 0, &x, sizeof x);
    memset(&x, 0xAB, sizeof x);
    bad |= write_seed(dir, "all_0xab_raw_size", 7, &x, sizeof x);
    return bad;
}

static int a24_seeds(const char *root) {
    char dir[400];
    snprintf(dir, sizeof dir, "%s/attention24_desc", root);
    int bad = 0;
    opp_attention24_desc_t x = padded(OPP_DTYPE_F16, 4, 64);
    bad |= write_seed(dir, "f16_rank4", 0, &x, sizeof x);
    x = padded(OPP_DTYPE_BF16, 3, 128);
    x.is_causal = 1;
    bad |= write_seed(dir, "bf16_rank3_causal", 0, &x, sizeof x);
    x = padded(OPP_DTYPE_F32, 4, 40);
    x.algo = OPP_ALGO_EXACT;
    bad |= write_seed(dir, "f32_exact_old_header", 1, &x, sizeof x);
    x = padded(OPP_DTYPE_F16, 5, 64);
    bad |= write_seed(dir, "bad_rank", 0, &x, sizeof x);
    x = padded(OPP_DTYPE_F16, 4, 64);
    x.q_seqlen = INT32_MAX;
    x.batch = INT32_MAX;
    x.num_heads = 256;
    x.kv_num_heads = 1;
    bad |= write_seed(dir, "bad_extent", 0, &x, sizeof x);
    memset(&x, 0, sizeof x);
    bad |= write_seed(dir, "all_zero_raw_size", 7, &x, sizeof x);
    return bad;
}

/* varlen input: batch byte, count tweak, total_q, total_kv, max_q, max_kv, cu_q, cu_kv. */
static int varlen_seed(const char *dir, const char *name, uint8_t batch_byte, uint8_t tweak,
                       const int32_t hdr[4], const int32_t *cu, size_t n) {
    uint8_t buf[512];
    size_t k = 0;
    buf[k++] = tweak;
    memcpy(buf + k, hdr, 4 * sizeof(int32_t));
    k += 4 * sizeof(int32_t);
    memcpy(buf + k, cu, n * sizeof(int32_t));
    k += n * sizeof(int32_t);
    memcpy(buf + k, cu, n * sizeof(int32_t));
    k += n * sizeof(int32_t);
    return write_seed(dir, name, batch_byte, buf, k);
}

static int varlen_seeds(const char *root) {
    char dir[400];
    snprintf(dir, sizeof dir, "%s/varlen", root);
    int bad = 0;
    const int32_t hdr[4] = {30, 30, 15, 15};
    const int32_t ok[5] = {0, 5, 20, 20, 30};
    bad |= varlen_seed(dir, "valid_b4", 3, 0, hdr, ok, 5);
    const int32_t dec[5] = {0, 5, 20, 17, 30};
    bad |= varlen_seed(dir, "decreasing", 3, 0, hdr, dec, 5);
    const int32_t start[5] = {1, 5, 20, 25, 30};
    bad |= varlen_seed(dir, "bad_start", 3, 0, hdr, start, 5);
    const int32_t total[5] = {0, 5, 20, 25, 29};
    bad |= varlen_seed(dir, "bad_total", 3, 0, hdr, total, 5);
    const int32_t long_seq[5] = {0, 0, 0, 0, 30};
    bad |= varlen_seed(dir, "above_max_seqlen", 3, 0, hdr, long_seq, 5);
    bad |= varlen_seed(dir, "count_mismatch", 3, 7, hdr, ok, 5);
    return bad;
}

int main(int argc, char **argv) {
    const char *root = argc > 1 ? argv[1] : "fuzz/corpus";
    const int bad = desc_seeds(root) | a24_seeds(root) | varlen_seeds(root);
    printf("make_seeds: %s\n", bad ? "FAILED" : "ok");
    return bad;
}
