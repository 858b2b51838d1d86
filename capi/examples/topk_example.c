/* The three largest logits of each of two rows, with their positions: topk1 from the installed library.
 * Build: make (see Makefile). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <topk_kernels.h>

int main(void) {
    /* A header and a library of two releases would disagree on the ABI. */
    if (topk_version_number() != TOPK_KERNELS_VERSION_NUMBER) {
        fprintf(stderr, "header %s, library %s\n", TOPK_KERNELS_VERSION, topk_version());
        return 1;
    }
    float logits[2][6] = {
        {0.1f, 2.5f, -1.0f, 2.5f, 0.3f, 7.0f},
        {4.0f, -3.0f, 9.5f, 0.0f, 9.5f, 1.0f},
    };
    float values[2][3];
    int64_t indices[2][3];
    uint32_t sizes[2] = {2, 6}, out_sizes[2] = {2, 3};
    topk_tensor_desc input = {
        .data_type = TOPK_DATA_TYPE_FLOAT32,
        .dimension_count = 2,
        .sizes = sizes,
        .strides = NULL, /* packed row-major */
        .total_tensor_size_in_bytes = sizeof logits,
        .data = logits,
    };
    topk_tensor_desc out_values = {
        .data_type = TOPK_DATA_TYPE_FLOAT32,
        .dimension_count = 2,
        .sizes = out_sizes,
        .total_tensor_size_in_bytes = sizeof values,
        .data = values,
    };
    topk_tensor_desc out_indices = {
        .data_type = TOPK_DATA_TYPE_INT64,
        .dimension_count = 2,
        .sizes = out_sizes,
        .total_tensor_size_in_bytes = sizeof indices,
        .data = indices,
    };
    const uint32_t axis = 1, k = 3;

    /* Scratch: the size of the fastest path, aligned to TOPK_SCRATCH_ALIGNMENT (malloc's is enough). */
    size_t scratch_bytes = 0;
    int32_t status = topk1_scratch_bytes(&input, axis, k, &scratch_bytes);
    void *scratch = status == TOPK_STATUS_OK && scratch_bytes ? malloc(scratch_bytes) : NULL;
    if (status == TOPK_STATUS_OK)
        status = topk1(&input, &out_values, &out_indices, axis, k, TOPK_AXIS_DIRECTION_DECREASING, scratch,
                       scratch_bytes);
    free(scratch);
    if (status != TOPK_STATUS_OK) {
        fprintf(stderr, "topk1: %s\n", topk_status_message(status));
        return 1;
    }

    printf("topk-kernels %s\n", topk_version());
    for (int row = 0; row < 2; row++) {
        printf("row %d:", row);
        for (int i = 0; i < 3; i++) printf("  [%lld] %g", (long long)indices[row][i], values[row][i]);
        printf("\n");
    }
    /* Ties go to the lower position: 2.5 at 1 before 2.5 at 3, 9.5 at 2 before 9.5 at 4. */
    const int64_t expected[2][3] = {{5, 1, 3}, {2, 4, 0}};
    return memcmp(indices, expected, sizeof expected) == 0 ? 0 : 1;
}
