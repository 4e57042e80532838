// The example's kernel and its host wrapper.
#include "vector_add.h"

namespace {

constexpr int kThreadsPerBlock = 256;
// A grid of at most this many blocks; the kernel strides over the rest, so
// any n fits one launch.
constexpr size_t kMaxBlocks = 65535;

__global__ void vector_add_kernel(const float *__restrict__ a, const float *__restrict__ b,
                                  float *__restrict__ out, size_t n) {
  const size_t stride = static_cast<size_t>(blockDim.x) * gridDim.x;
  for (size_t i = static_cast<size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) {
    out[i] = a[i] + b[i];
  }
}

}  // namespace

extern "C" cudaError_t vector_add(const float *a, const float *b, float *out, size_t n) {
  if (n == 0) {
    return cudaSuccess;
  }
  const size_t bytes = n * sizeof(float);
  float *d_a = nullptr;
  float *d_b = nullptr;
  float *d_out = nullptr;
  cudaError_t err = cudaMalloc(&d_a, bytes);
  if (err == cudaSuccess) err = cudaMalloc(&d_b, bytes);
  if (err == cudaSuccess) err = cudaMalloc(&d_out, bytes);
  if (err == cudaSuccess) err = cudaMemcpy(d_a, a, bytes, cudaMemcpyHostToDevice);
  if (err == cudaSuccess) err = cudaMemcpy(d_b, b, bytes, cudaMemcpyHostToDevice);
  if (err == cudaSuccess) {
    const size_t wanted = (n + kThreadsPerBlock - 1) / kThreadsPerBlock;
    const unsigned blocks = static_cast<unsigned>(wanted < kMaxBlocks ? wanted : kMaxBlocks);
    vector_add_kernel<<<blocks, kThreadsPerBlock>>>(d_a, d_b, d_out, n);
    err = cudaGetLastError();  // a launch that could not start
  }
  // The copy back waits for the kernel, so it also reports a fault inside it.
  if (err == cudaSuccess) err = cudaMemcpy(out, d_out, bytes, cudaMemcpyDeviceToHost);
  cudaFree(d_a);  // cudaFree(nullptr) does nothing
  cudaFree(d_b);
  cudaFree(d_out);
  return err;
}
