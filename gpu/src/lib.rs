//! topk-kernels on the GPU (work in progress).
