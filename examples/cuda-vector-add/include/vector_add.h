/* vector_add: the example's CUDA library, out[i] = a[i] + b[i] on the GPU. */
#ifndef VECTOR_ADD_H
#define VECTOR_ADD_H

#include <stddef.h>

#include <cuda_runtime.h>

#ifdef __cplusplus
extern "C" {
#endif

/* vector_add adds the n floats of the host arrays a and b into the host array
 * out on the current CUDA device. out must not overlap a or b. It returns
 * cudaSuccess, or the first CUDA error met (out is then unspecified). */
cudaError_t vector_add(const float *a, const float *b, float *out, size_t n);

#ifdef __cplusplus
}
#endif

#endif /* VECTOR_ADD_H */
