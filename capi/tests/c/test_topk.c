/* The C ABI from C: the four DirectML examples of docs/CONTRACT.md §7, a strided case with guard values, long
 * sequences (thousands of elements, K in the hundreds) and the side-by-side path (a {n, 64} tensor along
 * axis 0, K up to 16 and above) checked against a reference with guard regions around the outputs, and
 * every error status, each checked to leave the outputs untouched. Prints "N passed, M failed" last and exits
 * non-zero on any failure. Built and run by capi/tests/run_c_tests.sh. */

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "topk_kernels.h"

static int passed = 0;
static int failed = 0;

#define CHECK(cond, ...)                                                       \
    do {                                                                       \
        if (cond) {                                                            \
            passed++;                                                          \
        } else {                                                               \
            failed++;                                                          \
            fprintf(stderr, "FAIL %s:%d: %s: ", __FILE__, __LINE__, #cond);    \
            fprintf(stderr, __VA_ARGS__);                                      \
            fprintf(stderr, "\n");                                             \
        }                                                                      \
    } while (0)

static topk_tensor_desc desc(uint32_t data_type, uint32_t dimension_count, const uint32_t *sizes,
                             const uint32_t *strides, uint64_t bytes, void *data) {
    topk_tensor_desc d;
    d.data_type = data_type;
    d.dimension_count = dimension_count;
    d.sizes = sizes;
    d.strides = strides;
    d.total_tensor_size_in_bytes = bytes;
    d.data = data;
    return d;
}

static const float SEQUENTIAL[12] = {0, 1, 10, 11, 3, 2, 9, 8, 4, 5, 6, 7};
static const float TIED[12] = {1, 2, 2, 3, 3, 4, 5, 5, 6, 6, 6, 6};

/* Scratch for every call: 64-bit words are 8-byte aligned, as TOPK_SCRATCH_ALIGNMENT asks. */
static uint64_t scratch[64];

/* One DirectML example: input {1,1,3,4} f32, UINT32 indices, expected outputs of `count` elements. */
static void example(const char *name, const float *input_data, uint32_t axis, uint32_t k, uint32_t direction,
                    const float *want_values, const uint32_t *want_indices) {
    static const uint32_t in_sizes[4] = {1, 1, 3, 4};
    uint32_t out_sizes[4] = {1, 1, 3, 4};
    out_sizes[axis] = k;
    size_t count = (size_t)out_sizes[2] * out_sizes[3];
    float values[12];
    uint32_t indices[12];
    float input[12];
    memcpy(input, input_data, sizeof input);
    for (int i = 0; i < 12; i++) {
        values[i] = -1.0f;
        indices[i] = 0xDEADBEEFu;
    }
    topk_tensor_desc in = desc(TOPK_DATA_TYPE_FLOAT32, 4, in_sizes, NULL, sizeof input, input);
    topk_tensor_desc v = desc(TOPK_DATA_TYPE_FLOAT32, 4, out_sizes, NULL, count * sizeof(float), values);
    topk_tensor_desc ix = desc(TOPK_DATA_TYPE_UINT32, 4, out_sizes, NULL, count * sizeof(uint32_t), indices);

    size_t need = 0;
    int32_t status = topk1_scratch_bytes(&in, axis, k, &need);
    CHECK(status == TOPK_STATUS_OK, "%s: topk1_scratch_bytes: %s", name, topk_status_message(status));
    CHECK(need > 0 && need <= sizeof scratch && need % 8 == 0, "%s: scratch bytes %zu", name, need);

    status = topk1(&in, &v, &ix, axis, k, direction, scratch, need);
    CHECK(status == TOPK_STATUS_OK, "%s: topk1: %s", name, topk_status_message(status));
    for (size_t i = 0; i < count; i++) {
        CHECK(values[i] == want_values[i], "%s: value %zu is %g, want %g", name, i, values[i], want_values[i]);
        CHECK(indices[i] == want_indices[i], "%s: index %zu is %u, want %u", name, i, indices[i],
              want_indices[i]);
    }
    for (size_t i = count; i < 12; i++) {
        CHECK(values[i] == -1.0f && indices[i] == 0xDEADBEEFu, "%s: element %zu past the output written", name,
              i);
    }
}

static void directml_examples(void) {
    {
        const float v[6] = {11, 10, 9, 8, 7, 6};
        const uint32_t i[6] = {3, 2, 2, 3, 3, 2};
        example("example 1", SEQUENTIAL, 3, 2, TOPK_AXIS_DIRECTION_DECREASING, v, i);
    }
    {
        const float v[8] = {4, 5, 10, 11, 3, 2, 9, 8};
        const uint32_t i[8] = {2, 2, 0, 0, 1, 1, 1, 1};
        example("example 2", SEQUENTIAL, 2, 2, TOPK_AXIS_DIRECTION_DECREASING, v, i);
    }
    {
        const float v[9] = {3, 2, 2, 5, 5, 4, 6, 6, 6};
        const uint32_t i[9] = {3, 1, 2, 2, 3, 1, 0, 1, 2};
        example("example 3", TIED, 3, 3, TOPK_AXIS_DIRECTION_DECREASING, v, i);
    }
    {
        const float v[9] = {1, 2, 2, 3, 4, 5, 6, 6, 6};
        const uint32_t i[9] = {0, 1, 2, 0, 1, 2, 0, 1, 2};
        example("example 4", TIED, 3, 3, TOPK_AXIS_DIRECTION_INCREASING, v, i);
    }
}

/* UINT32 indices every other word of a uint64_t buffer (stride 2), values every third float, the input
 * read transposed through strides: nothing outside the views may change. */
static void strided(void) {
    /* The input is SEQUENTIAL stored column-major ({4,3} row-major), read as {3,4} with strides {1,3}. */
    float column_major[12];
    for (int r = 0; r < 3; r++) {
        for (int c = 0; c < 4; c++) {
            column_major[c * 3 + r] = SEQUENTIAL[r * 4 + c];
        }
    }
    const uint32_t in_sizes[2] = {3, 4};
    const uint32_t in_strides[2] = {1, 3};
    const uint32_t out_sizes[2] = {3, 2};
    const uint32_t value_strides[2] = {6, 3};
    const uint32_t index_strides[2] = {4, 2};
    float values[18];
    uint64_t index_words[6];
    for (int i = 0; i < 18; i++) {
        values[i] = -1.0f;
    }
    for (int i = 0; i < 6; i++) {
        index_words[i] = 0xAAAAAAAAAAAAAAAAull;
    }
    topk_tensor_desc in = desc(TOPK_DATA_TYPE_FLOAT32, 2, in_sizes, in_strides, sizeof column_major, column_major);
    topk_tensor_desc v = desc(TOPK_DATA_TYPE_FLOAT32, 2, out_sizes, value_strides, sizeof values, values);
    topk_tensor_desc ix = desc(TOPK_DATA_TYPE_UINT32, 2, out_sizes, index_strides, sizeof index_words, index_words);
    int32_t status = topk1(&in, &v, &ix, 1, 2, TOPK_AXIS_DIRECTION_DECREASING, scratch, sizeof scratch);
    CHECK(status == TOPK_STATUS_OK, "strided: %s", topk_status_message(status));

    const float want_values[6] = {11, 10, 9, 8, 7, 6};
    const uint32_t want_indices[6] = {3, 2, 2, 3, 3, 2};
    for (int i = 0; i < 18; i++) {
        float want = i % 3 == 0 ? want_values[i / 3] : -1.0f;
        CHECK(values[i] == want, "strided: values[%d] is %g, want %g", i, values[i], want);
    }
    uint32_t words32[12];
    memcpy(words32, index_words, sizeof words32);
    for (int i = 0; i < 12; i++) {
        uint32_t want = i % 2 == 0 ? want_indices[i / 2] : 0xAAAAAAAAu;
        CHECK(words32[i] == want, "strided: index word %d is %#x, want %#x", i, words32[i], want);
    }
}

/* INT64 values and indices, increasing, with the extremes (no negation tricks). */
static void int64_extremes(void) {
    int64_t input[5] = {INT64_MAX, INT64_MIN, 0, INT64_MIN, -1};
    const uint32_t in_sizes[1] = {5};
    const uint32_t out_sizes[1] = {3};
    int64_t values[3] = {7, 7, 7};
    int64_t indices[3] = {-7, -7, -7};
    topk_tensor_desc in = desc(TOPK_DATA_TYPE_INT64, 1, in_sizes, NULL, sizeof input, input);
    topk_tensor_desc v = desc(TOPK_DATA_TYPE_INT64, 1, out_sizes, NULL, sizeof values, values);
    topk_tensor_desc ix = desc(TOPK_DATA_TYPE_INT64, 1, out_sizes, NULL, sizeof indices, indices);
    int32_t status = topk1(&in, &v, &ix, 0, 3, TOPK_AXIS_DIRECTION_INCREASING, scratch, sizeof scratch);
    CHECK(status == TOPK_STATUS_OK, "int64: %s", topk_status_message(status));
    CHECK(values[0] == INT64_MIN && values[1] == INT64_MIN && values[2] == -1, "int64 values");
    CHECK(indices[0] == 1 && indices[1] == 3 && indices[2] == 4, "int64 indices");

    /* K = 0: success, nothing written, scratch may be NULL. */
    const uint32_t empty_sizes[1] = {0};
    topk_tensor_desc v0 = desc(TOPK_DATA_TYPE_INT64, 1, empty_sizes, NULL, 0, NULL);
    topk_tensor_desc i0 = desc(TOPK_DATA_TYPE_INT64, 1, empty_sizes, NULL, 0, NULL);
    size_t need = 99;
    status = topk1_scratch_bytes(&in, 0, 0, &need);
    CHECK(status == TOPK_STATUS_OK && need == 0, "k=0 scratch bytes %zu (%d)", need, status);
    status = topk1(&in, &v0, &i0, 0, 0, TOPK_AXIS_DIRECTION_DECREASING, NULL, 0);
    CHECK(status == TOPK_STATUS_OK, "k=0: %s", topk_status_message(status));
}

/* Guard elements on each side of an output, which must keep their sentinel bytes. */
#define GUARD 16
#define SENTINEL 0xA5

/* An element of a reference sort: the value as a double (exact for every value used) and its position. */
typedef struct keyed {
    double key;
    uint32_t index;
} keyed;

/* docs/CONTRACT.md's order for values without NaN or -0: by value, then by position, both directions. */
static int decreasing_first(const void *a, const void *b) {
    const keyed *x = a, *y = b;
    if (x->key != y->key) {
        return x->key > y->key ? -1 : 1;
    }
    return x->index < y->index ? -1 : x->index > y->index;
}

static int increasing_first(const void *a, const void *b) {
    const keyed *x = a, *y = b;
    if (x->key != y->key) {
        return x->key < y->key ? -1 : 1;
    }
    return x->index < y->index ? -1 : x->index > y->index;
}

static double element(uint32_t data_type, const void *data, size_t i) {
    switch (data_type) {
    case TOPK_DATA_TYPE_FLOAT32:
        return ((const float *)data)[i];
    case TOPK_DATA_TYPE_INT32:
        return ((const int32_t *)data)[i];
    default:
        return ((const uint16_t *)data)[i];
    }
}

static size_t element_size(uint32_t data_type) {
    return data_type == TOPK_DATA_TYPE_UINT16 ? 2 : data_type == TOPK_DATA_TYPE_INT64 ? 8 : 4;
}

/* An output buffer of `count` elements of `size` bytes between two guard regions, all sentinel bytes. */
static unsigned char *guarded(size_t count, size_t size) {
    size_t bytes = (count + 2 * GUARD) * size;
    unsigned char *buffer = malloc(bytes);
    if (buffer != NULL) {
        memset(buffer, SENTINEL, bytes);
    }
    return buffer;
}

static int guards_intact(const unsigned char *buffer, size_t count, size_t size) {
    for (size_t i = 0; i < GUARD * size; i++) {
        if (buffer[i] != SENTINEL || buffer[(GUARD + count) * size + i] != SENTINEL) {
            return 0;
        }
    }
    return 1;
}

/* A two-dimensional {rows, columns} input of `data_type` with many ties (values from a small range),
 * selected along `axis` (1: each row is a sequence; 0: the columns are sequences side by side), checked
 * element by element against a sorted copy of every sequence, with guard regions around both outputs. */
static void against_reference(const char *name, uint32_t data_type, uint32_t rows, uint32_t columns, uint32_t axis,
                              uint32_t k, uint32_t direction, uint32_t index_type, uint32_t seed) {
    size_t n = (size_t)rows * columns;
    size_t size = element_size(data_type);
    void *input = malloc(n * size);
    uint32_t state = seed;
    for (size_t i = 0; i < n && input != NULL; i++) {
        state = state * 1664525u + 1013904223u;
        uint32_t r = (state >> 8) % 1000;
        if (data_type == TOPK_DATA_TYPE_FLOAT32) {
            ((float *)input)[i] = (float)r - 500.0f;
        } else if (data_type == TOPK_DATA_TYPE_INT32) {
            ((int32_t *)input)[i] = (int32_t)r * 1000003 - 500000000;
        } else {
            ((uint16_t *)input)[i] = (uint16_t)(r * 61);
        }
    }
    uint32_t len = axis == 1 ? columns : rows;
    uint32_t sequences = axis == 1 ? rows : columns;
    uint32_t in_sizes[2] = {rows, columns};
    uint32_t out_sizes[2] = {rows, columns};
    out_sizes[axis] = k;
    size_t count = (size_t)k * sequences;
    size_t index_size = index_type == TOPK_DATA_TYPE_INT64 ? 8 : 4;
    unsigned char *values = guarded(count, size);
    unsigned char *indices = guarded(count, index_size);
    keyed *sorted = malloc(len * sizeof *sorted);
    size_t need = 0;
    int32_t status = TOPK_STATUS_INTERNAL;
    void *work = NULL;
    if (input != NULL && values != NULL && indices != NULL && sorted != NULL) {
        topk_tensor_desc in = desc(data_type, 2, in_sizes, NULL, n * size, input);
        topk_tensor_desc v = desc(data_type, 2, out_sizes, NULL, count * size, values + GUARD * size);
        topk_tensor_desc ix = desc(index_type, 2, out_sizes, NULL, count * index_size, indices + GUARD * index_size);
        status = topk1_scratch_bytes(&in, axis, k, &need);
        CHECK(status == TOPK_STATUS_OK, "%s: topk1_scratch_bytes: %s", name, topk_status_message(status));
        /* malloc's alignment covers TOPK_SCRATCH_ALIGNMENT. */
        work = malloc(need > 0 ? need : 1);
        if (work != NULL) {
            status = topk1(&in, &v, &ix, axis, k, direction, work, need);
        }
    }
    CHECK(status == TOPK_STATUS_OK, "%s: topk1: %s", name, topk_status_message(status));
    if (status == TOPK_STATUS_OK) {
        int wrong = 0;
        for (uint32_t s = 0; s < sequences && !wrong; s++) {
            for (uint32_t p = 0; p < len; p++) {
                size_t at = axis == 1 ? (size_t)s * columns + p : (size_t)p * columns + s;
                sorted[p].key = element(data_type, input, at);
                sorted[p].index = p;
            }
            qsort(sorted, len, sizeof *sorted,
                  direction == TOPK_AXIS_DIRECTION_DECREASING ? decreasing_first : increasing_first);
            for (uint32_t j = 0; j < k; j++) {
                size_t out = axis == 1 ? (size_t)s * k + j : (size_t)j * columns + s;
                double value = element(data_type, values + GUARD * size, out);
                int64_t index;
                if (index_size == 8) {
                    memcpy(&index, indices + (GUARD + out) * 8, 8);
                } else {
                    uint32_t narrow;
                    memcpy(&narrow, indices + (GUARD + out) * 4, 4);
                    index = narrow;
                }
                if (value != sorted[j].key || index != (int64_t)sorted[j].index) {
                    CHECK(0, "%s: sequence %u, output %u: %g at %lld, want %g at %u", name, s, j, value,
                          (long long)index, sorted[j].key, sorted[j].index);
                    wrong = 1;
                    break;
                }
            }
        }
        CHECK(!wrong, "%s: outputs differ from the reference", name);
    }
    CHECK(values != NULL && guards_intact(values, count, size), "%s: a value guard changed", name);
    CHECK(indices != NULL && guards_intact(indices, count, index_size), "%s: an index guard changed", name);
    free(work);
    free(sorted);
    free(indices);
    free(values);
    free(input);
}

static void long_and_side_by_side(void) {
    const uint32_t D = TOPK_AXIS_DIRECTION_DECREASING, I = TOPK_AXIS_DIRECTION_INCREASING;
    /* Long sequences: thousands of elements, K in the hundreds. */
    against_reference("f32 4x5000 K=100", TOPK_DATA_TYPE_FLOAT32, 4, 5000, 1, 100, D, TOPK_DATA_TYPE_UINT32, 1);
    against_reference("f32 3x6000 K=300 inc", TOPK_DATA_TYPE_FLOAT32, 3, 6000, 1, 300, I, TOPK_DATA_TYPE_INT64, 2);
    against_reference("i32 2x4096 K=500", TOPK_DATA_TYPE_INT32, 2, 4096, 1, 500, D, TOPK_DATA_TYPE_UINT32, 3);
    against_reference("u16 1x20000 K=257", TOPK_DATA_TYPE_UINT16, 1, 20000, 1, 257, I, TOPK_DATA_TYPE_UINT32, 4);
    /* Side by side: 64 sequences along axis 0 of a {n, 64} tensor, K up to 16 and above. */
    against_reference("f32 300x64 axis 0 K=8", TOPK_DATA_TYPE_FLOAT32, 300, 64, 0, 8, D, TOPK_DATA_TYPE_UINT32, 5);
    against_reference("f32 300x64 axis 0 K=16", TOPK_DATA_TYPE_FLOAT32, 300, 64, 0, 16, I, TOPK_DATA_TYPE_INT64, 6);
    against_reference("f32 1000x64 axis 0 K=40", TOPK_DATA_TYPE_FLOAT32, 1000, 64, 0, 40, D, TOPK_DATA_TYPE_UINT32, 7);
    against_reference("i32 2000x64 axis 0 K=200", TOPK_DATA_TYPE_INT32, 2000, 64, 0, 200, I, TOPK_DATA_TYPE_UINT32, 8);
    against_reference("u16 500x64 axis 0 K=17", TOPK_DATA_TYPE_UINT16, 500, 64, 0, 17, D, TOPK_DATA_TYPE_INT64, 9);
}

/* The state an error case starts from: a valid request (example 1) whose pieces a case breaks. */
typedef struct request {
    float input[12];
    float values[8];
    uint32_t indices[8];
    uint32_t in_sizes[4];
    uint32_t out_sizes[4];
    uint32_t strides[4];
    topk_tensor_desc in, v, ix;
    uint32_t axis, k, direction;
    void *scratch;
    size_t scratch_bytes;
} request;

static void reset(request *r) {
    memcpy(r->input, SEQUENTIAL, sizeof r->input);
    for (int i = 0; i < 8; i++) {
        r->values[i] = -1.0f;
        r->indices[i] = 0xDEADBEEFu;
    }
    const uint32_t in_sizes[4] = {1, 1, 3, 4};
    const uint32_t out_sizes[4] = {1, 1, 3, 2};
    memcpy(r->in_sizes, in_sizes, sizeof in_sizes);
    memcpy(r->out_sizes, out_sizes, sizeof out_sizes);
    memset(r->strides, 0, sizeof r->strides);
    r->in = desc(TOPK_DATA_TYPE_FLOAT32, 4, r->in_sizes, NULL, sizeof r->input, r->input);
    r->v = desc(TOPK_DATA_TYPE_FLOAT32, 4, r->out_sizes, NULL, 6 * sizeof(float), r->values);
    r->ix = desc(TOPK_DATA_TYPE_UINT32, 4, r->out_sizes, NULL, 6 * sizeof(uint32_t), r->indices);
    r->axis = 3;
    r->k = 2;
    r->direction = TOPK_AXIS_DIRECTION_DECREASING;
    r->scratch = scratch;
    r->scratch_bytes = sizeof scratch;
}

static int32_t call(request *r, const topk_tensor_desc *in, const topk_tensor_desc *v, const topk_tensor_desc *ix) {
    return topk1(in, v, ix, r->axis, r->k, r->direction, r->scratch, r->scratch_bytes);
}

static int untouched(const request *r) {
    for (int i = 0; i < 8; i++) {
        if (r->values[i] != -1.0f || r->indices[i] != 0xDEADBEEFu) {
            return 0;
        }
    }
    return memcmp(r->input, SEQUENTIAL, sizeof r->input) == 0;
}

static void expect_status(const char *name, int32_t status, int32_t want, const request *r) {
    CHECK(status == want, "%s: status %d (%s), want %d (%s)", name, status, topk_status_message(status), want,
          topk_status_message(want));
    const char *message = topk_status_message(status);
    CHECK(message != NULL && message[0] != '\0', "%s: empty message", name);
    CHECK(untouched(r), "%s: an output was written on error", name);
}

static void errors(void) {
    request r;
    /* The valid request works, so each case below fails for its one reason. */
    reset(&r);
    CHECK(call(&r, &r.in, &r.v, &r.ix) == TOPK_STATUS_OK, "the base request fails");

#define CASE(name, want, setup, ...)                  \
    do {                                              \
        reset(&r);                                    \
        setup;                                        \
        expect_status(name, (__VA_ARGS__), want, &r); \
    } while (0)

    CASE("NULL input", TOPK_STATUS_NULL_DESCRIPTOR, (void)0, call(&r, NULL, &r.v, &r.ix));
    CASE("NULL values", TOPK_STATUS_NULL_DESCRIPTOR, (void)0, call(&r, &r.in, NULL, &r.ix));
    CASE("NULL indices", TOPK_STATUS_NULL_DESCRIPTOR, (void)0, call(&r, &r.in, &r.v, NULL));
    CASE("NULL sizes", TOPK_STATUS_NULL_SIZES, r.v.sizes = NULL, call(&r, &r.in, &r.v, &r.ix));
    CASE("NULL data", TOPK_STATUS_NULL_DATA, r.ix.data = NULL, call(&r, &r.in, &r.v, &r.ix));
    CASE("NULL scratch", TOPK_STATUS_NULL_SCRATCH, r.scratch = NULL, call(&r, &r.in, &r.v, &r.ix));
    CASE("dimension_count 0", TOPK_STATUS_DIMENSION_COUNT, r.in.dimension_count = 0, call(&r, &r.in, &r.v, &r.ix));
    CASE("dimension_count 9", TOPK_STATUS_DIMENSION_COUNT, r.v.dimension_count = 9, call(&r, &r.in, &r.v, &r.ix));
    CASE("dimension_count mismatch", TOPK_STATUS_DIMENSION_COUNT_MISMATCH,
         (r.ix.dimension_count = 3, r.ix.sizes = r.out_sizes + 1), call(&r, &r.in, &r.v, &r.ix));
    CASE("unknown data type", TOPK_STATUS_DATA_TYPE, (r.in.data_type = 12, r.v.data_type = 12),
         call(&r, &r.in, &r.v, &r.ix));
    CASE("values data type", TOPK_STATUS_VALUES_DATA_TYPE, r.v.data_type = TOPK_DATA_TYPE_INT32,
         call(&r, &r.in, &r.v, &r.ix));
    CASE("indices data type", TOPK_STATUS_INDICES_DATA_TYPE, r.ix.data_type = TOPK_DATA_TYPE_UINT16,
         call(&r, &r.in, &r.v, &r.ix));
    CASE("axis direction", TOPK_STATUS_AXIS_DIRECTION, r.direction = 2, call(&r, &r.in, &r.v, &r.ix));
    CASE("axis", TOPK_STATUS_AXIS, r.axis = 4, call(&r, &r.in, &r.v, &r.ix));
    CASE("k", TOPK_STATUS_K, (r.k = 5, r.out_sizes[3] = 5), call(&r, &r.in, &r.v, &r.ix));
    CASE("output sizes", TOPK_STATUS_OUTPUT_SIZES, (r.out_sizes[2] = 2), call(&r, &r.in, &r.v, &r.ix));
    CASE("out of bounds", TOPK_STATUS_OUT_OF_BOUNDS, r.v.total_tensor_size_in_bytes = 23,
         call(&r, &r.in, &r.v, &r.ix));
    CASE("overflow", TOPK_STATUS_OVERFLOW, r.v.total_tensor_size_in_bytes = UINT64_MAX,
         call(&r, &r.in, &r.v, &r.ix));
    CASE("output aliasing", TOPK_STATUS_OUTPUT_ALIASING, (r.strides[2] = 0, r.strides[3] = 1, r.v.strides = r.strides),
         call(&r, &r.in, &r.v, &r.ix));
    CASE("outputs overlap", TOPK_STATUS_OUTPUTS_OVERLAP, r.ix.data = (char *)r.values + 4,
         call(&r, &r.in, &r.v, &r.ix));
    CASE("input overlaps output", TOPK_STATUS_INPUT_OUTPUT_OVERLAP, r.v.data = r.input + 6,
         call(&r, &r.in, &r.v, &r.ix));
    CASE("scratch overlap", TOPK_STATUS_SCRATCH_OVERLAP, (r.scratch = r.input, r.scratch_bytes = 32),
         call(&r, &r.in, &r.v, &r.ix));
    CASE("misaligned data", TOPK_STATUS_MISALIGNED_DATA, r.ix.data = (char *)r.indices + 1,
         call(&r, &r.in, &r.v, &r.ix));
    CASE("misaligned scratch", TOPK_STATUS_MISALIGNED_SCRATCH, r.scratch = (char *)scratch + 4,
         call(&r, &r.in, &r.v, &r.ix));
    CASE("scratch too small", TOPK_STATUS_SCRATCH_TOO_SMALL, r.scratch_bytes = 8, call(&r, &r.in, &r.v, &r.ix));
    /* An index type too narrow needs more than 2^32 positions: only the 64-bit build can describe it, and
     * its input size check comes first, so it is tested in Rust (tests/capi.rs) with a huge broadcast. */

    size_t need = 12345;
    reset(&r);
    CHECK(topk1_scratch_bytes(&r.in, 3, 2, NULL) == TOPK_STATUS_NULL_RESULT, "scratch_bytes NULL result");
    CHECK(topk1_scratch_bytes(NULL, 3, 2, &need) == TOPK_STATUS_NULL_DESCRIPTOR, "scratch_bytes NULL input");
    CHECK(topk1_scratch_bytes(&r.in, 4, 2, &need) == TOPK_STATUS_AXIS, "scratch_bytes axis");
    CHECK(topk1_scratch_bytes(&r.in, 3, 5, &need) == TOPK_STATUS_K, "scratch_bytes k");
    CHECK(need == 12345, "scratch_bytes wrote its result on error");

    /* Every status has its own non-empty message; unknown ones get one too. */
    for (int32_t s = TOPK_STATUS_INTERNAL; s <= TOPK_STATUS_OK; s++) {
        const char *m = topk_status_message(s);
        CHECK(m != NULL && m[0] != '\0', "message of %d", s);
        for (int32_t t = TOPK_STATUS_INTERNAL; t < s; t++) {
            CHECK(strcmp(m, topk_status_message(t)) != 0, "statuses %d and %d share a message", s, t);
        }
    }
    const int32_t unknown[4] = {1, -26, INT32_MIN, INT32_MAX};
    for (int i = 0; i < 4; i++) {
        const char *m = topk_status_message(unknown[i]);
        CHECK(m != NULL && strcmp(m, "unknown status") == 0, "message of unknown status %d", unknown[i]);
    }
}

int main(void) {
    directml_examples();
    strided();
    int64_extremes();
    long_and_side_by_side();
    errors();
    printf("%d passed, %d failed\n", passed, failed);
    return failed == 0 ? 0 : 1;
}
