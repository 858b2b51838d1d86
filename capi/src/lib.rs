//! C ABI for topk-kernels (work in progress).
