/* topk1 timed from C the way `topk bench` times the Rust engine: the same data patterns, 0.2 s of
 * warm-up calls, then the median of REPS calls, each followed by one read of the whole input (as the
 * bench's floor measurement leaves the caches between its calls). Every call is a whole topk1: the
 * descriptors checked, the plan made, the scratch zeroed, as a C program pays for it.
 *
 * Usage: bench SHAPE DTYPE AXIS K DIRECTION DATA REPS
 *   SHAPE: sizes comma-separated (32,128256); DTYPE: f32 f16 i32 u8; DIRECTION: decreasing|increasing;
 *   DATA: uniform|normal|ascending.
 * Prints one line: `median_s=<seconds> engine_checked=1`. */
#define _POSIX_C_SOURCE 199309L
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "topk_kernels.h"

/* The Rust bench's generator (fastrand 2's wyrand, seed 7) and its f64 in [0, 1): both benches time the
 * same data, but for rounding to f16 where the two may differ in the last place. */
static uint64_t rng_state = 7;
__extension__ typedef unsigned __int128 u128; /* GCC and Clang on 64-bit targets */

static uint64_t next_u64(void) {
    uint64_t s = (rng_state += 0x2d358dccaa6c78a5u);
    u128 t = (u128)s * (s ^ 0x8bb84b93962eacc9u);
    return (uint64_t)t ^ (uint64_t)(t >> 64);
}

static double next_f64(void) {
    for (;;) {
        double x = (double)(next_u64() >> 1) * (1.0 / 9223372036854775808.0);
        if (x < 1.0) return x;
    }
}

/* Standard normal (Box-Muller), as the Rust bench draws it. */
static double next_normal(void) {
    double u = 1.0 - next_f64();
    double v = next_f64();
    return sqrt(-2.0 * log(u)) * cos(6.283185307179586 * v);
}

/* IEEE half from a float, rounded to nearest even (normal and subnormal range; no NaN input here). */
static uint16_t to_f16(float f) {
    uint32_t x;
    memcpy(&x, &f, 4);
    uint32_t sign = (x >> 16) & 0x8000u;
    int32_t exp = (int32_t)((x >> 23) & 0xFF) - 127 + 15;
    uint32_t mant = x & 0x7FFFFFu;
    if (exp >= 31) return (uint16_t)(sign | 0x7C00u);
    if (exp <= 0) {
        if (exp < -10) return (uint16_t)sign;
        mant |= 0x800000u;
        uint32_t shift = (uint32_t)(14 - exp);
        uint32_t half = mant >> shift, rest = mant & ((1u << shift) - 1), mid = 1u << (shift - 1);
        if (rest > mid || (rest == mid && (half & 1))) half++;
        return (uint16_t)(sign | half);
    }
    uint32_t half = ((uint32_t)exp << 10) | (mant >> 13), rest = mant & 0x1FFFu;
    if (rest > 0x1000u || (rest == 0x1000u && (half & 1))) half++;
    return (uint16_t)(sign | half);
}

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static int compare_doubles(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static void die(const char *what) {
    fprintf(stderr, "bench: %s\n", what);
    exit(2);
}

int main(int argc, char **argv) {
    if (argc != 8) die("usage: bench SHAPE DTYPE AXIS K DIRECTION DATA REPS");
    uint32_t sizes[TOPK_MAX_DIMENSION_COUNT], out_sizes[TOPK_MAX_DIMENSION_COUNT];
    uint32_t rank = 0;
    size_t elements = 1;
    for (char *p = argv[1]; *p; rank++) {
        if (rank == TOPK_MAX_DIMENSION_COUNT) die("too many dimensions");
        sizes[rank] = (uint32_t)strtoul(p, &p, 10);
        elements *= sizes[rank];
        if (*p == ',') p++;
    }
    const char *dtype = argv[2];
    uint32_t axis = (uint32_t)atoi(argv[3]), k = (uint32_t)atoi(argv[4]);
    uint32_t direction = strcmp(argv[5], "increasing") == 0 ? TOPK_AXIS_DIRECTION_INCREASING
                                                             : TOPK_AXIS_DIRECTION_DECREASING;
    const char *data = argv[6];
    int reps = atoi(argv[7]);
    if (axis >= rank || reps < 1) die("bad axis or reps");

    uint32_t code;
    size_t size;
    if (strcmp(dtype, "f32") == 0) code = TOPK_DATA_TYPE_FLOAT32, size = 4;
    else if (strcmp(dtype, "f16") == 0) code = TOPK_DATA_TYPE_FLOAT16, size = 2;
    else if (strcmp(dtype, "i32") == 0) code = TOPK_DATA_TYPE_INT32, size = 4;
    else if (strcmp(dtype, "u8") == 0) code = TOPK_DATA_TYPE_UINT8, size = 1;
    else die("dtype: f32 f16 i32 u8");

    /* The Rust bench's patterns: integers from uniform scaled as peers.py does, ascending wraps. */
    unsigned char *input = aligned_alloc(64, (elements * size + 63) / 64 * 64);
    if (!input) die("out of memory");
    for (size_t i = 0; i < elements; i++) {
        double x = strcmp(data, "normal") == 0      ? next_normal()
                   : strcmp(data, "ascending") == 0 ? (double)i
                                                    : next_f64();
        if (code == TOPK_DATA_TYPE_FLOAT32) ((float *)input)[i] = (float)x;
        else if (code == TOPK_DATA_TYPE_FLOAT16) ((uint16_t *)input)[i] = to_f16((float)x);
        else if (code == TOPK_DATA_TYPE_INT32)
            ((int32_t *)input)[i] = strcmp(data, "ascending") == 0 ? (int32_t)i
                                    : strcmp(data, "normal") == 0  ? (int32_t)(x * 134217728.0)
                                                                   : (int32_t)(x * 2147483648.0);
        else
            input[i] = strcmp(data, "ascending") == 0 ? (uint8_t)i
                       : strcmp(data, "normal") == 0  ? (uint8_t)(int)(x * 16.0)
                                                      : (uint8_t)(x * 255.0);
    }
    memcpy(out_sizes, sizes, sizeof sizes);
    out_sizes[axis] = k;
    size_t out_elements = elements / sizes[axis] * k;
    void *values = malloc(out_elements * size + 1);
    uint32_t *indices = malloc(out_elements * sizeof(uint32_t) + 1);
    if (!values || !indices) die("out of memory");

    topk_tensor_desc in = {
        .data_type = code,
        .dimension_count = rank,
        .sizes = sizes,
        .total_tensor_size_in_bytes = elements * size,
        .data = input,
    };
    topk_tensor_desc out_values = {
        .data_type = code,
        .dimension_count = rank,
        .sizes = out_sizes,
        .total_tensor_size_in_bytes = out_elements * size,
        .data = values,
    };
    topk_tensor_desc out_indices = {
        .data_type = TOPK_DATA_TYPE_UINT32,
        .dimension_count = rank,
        .sizes = out_sizes,
        .total_tensor_size_in_bytes = out_elements * sizeof(uint32_t),
        .data = indices,
    };
    size_t scratch_bytes = 0;
    int32_t status = topk1_scratch_bytes(&in, axis, k, &scratch_bytes);
    if (status != TOPK_STATUS_OK) die(topk_status_message(status));
    void *scratch = aligned_alloc(64, scratch_bytes / 64 * 64 + 64);
    if (!scratch) die("out of memory");

    uint64_t sink = 0;
    double warm = now();
    do {
        status = topk1(&in, &out_values, &out_indices, axis, k, direction, scratch, scratch_bytes);
        if (status != TOPK_STATUS_OK) die(topk_status_message(status));
    } while (now() - warm < 0.2);
    double *times = malloc((size_t)reps * sizeof(double));
    if (!times) die("out of memory");
    for (int r = 0; r < reps; r++) {
        double start = now();
        status = topk1(&in, &out_values, &out_indices, axis, k, direction, scratch, scratch_bytes);
        times[r] = now() - start;
        if (status != TOPK_STATUS_OK) die(topk_status_message(status));
        /* One read of the input between calls, as the Rust bench's floor measurement makes. */
        for (size_t i = 0; i + 8 <= elements * size; i += 8) {
            uint64_t word;
            memcpy(&word, input + i, 8);
            sink ^= word;
        }
    }
    qsort(times, (size_t)reps, sizeof(double), compare_doubles);

    /* A light check of the last call (the test suites check the results in full): each value is the
     * input's at its index, for the last-axis and first-axis rows alike. */
    size_t inner = 1;
    for (uint32_t d = axis + 1; d < rank; d++) inner *= sizes[d];
    for (size_t o = 0; o < out_elements; o++) {
        size_t outer = o / (k * inner), within = o % inner;
        size_t at = (outer * sizes[axis] + indices[o]) * inner + within;
        if (indices[o] >= sizes[axis] || memcmp((unsigned char *)values + o * size, input + at * size, size) != 0)
            die("a value is not the input's at its index");
    }
    printf("median_s=%.9f sink=%llu\n", times[reps / 2], (unsigned long long)(sink & 1));
    return 0;
}
