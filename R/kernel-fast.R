# The vector exp of the fast kernel blocks (src/kernel_fast.c), for the
# tests: exp(x) by the AVX2 copy (avx2 = TRUE) or the SSE2 one; NULL where
# that copy does not exist or the CPU lacks AVX2.
kernel_vector_exp <- function(x, avx2) .Call(C_kernel_vector_exp, as.double(x), avx2)
