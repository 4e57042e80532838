// The GPU test of vector_add: sums computed on the device must equal, bit for
// bit, the same float additions on the host (IEEE 754 single-precision
// addition is correctly rounded on both). It prints one line per case and a
// closing "N passed, N failed" line, and exits 1 on any mismatch or CUDA
// error, 2 when there is no usable CUDA device.
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <vector>

#include <cuda_runtime.h>

#include "vector_add.h"

namespace {

// next_value returns a float in [-100, 100) from a fixed linear congruential
// generator, so a failing case reproduces exactly.
float next_value(uint32_t *state) {
  *state = *state * 1664525u + 1013904223u;
  return static_cast<float>(*state >> 8) / 16777216.0f * 200.0f - 100.0f;
}

// check_size adds two vectors of n floats on the device and compares every
// element with the host's sum; it returns true when all match.
bool check_size(size_t n) {
  std::vector<float> a(n), b(n), want(n), got(n, -1.0f);
  uint32_t state = 12345u + static_cast<uint32_t>(n);
  for (size_t i = 0; i < n; ++i) {
    a[i] = next_value(&state);
    b[i] = next_value(&state);
    want[i] = a[i] + b[i];
  }
  const cudaError_t err = vector_add(a.data(), b.data(), got.data(), n);
  if (err != cudaSuccess) {
    std::printf("FAIL n=%zu: vector_add: %s (%s)\n", n, cudaGetErrorName(err), cudaGetErrorString(err));
    return false;
  }
  size_t mismatches = 0;
  size_t first = 0;
  for (size_t i = 0; i < n; ++i) {
    if (std::memcmp(&got[i], &want[i], sizeof(float)) != 0) {
      if (mismatches == 0) first = i;
      ++mismatches;
    }
  }
  if (mismatches > 0) {
    std::printf("FAIL n=%zu: %zu element(s) differ; first at %zu: %.9g + %.9g gave %.9g, want %.9g\n", n, mismatches,
                first, a[first], b[first], got[first], want[first]);
    return false;
  }
  std::printf("ok   n=%zu\n", n);
  return true;
}

}  // namespace

int main() {
  int devices = 0;
  const cudaError_t err = cudaGetDeviceCount(&devices);
  if (err != cudaSuccess) {
    std::printf("no usable CUDA device: %s (%s)\n", cudaGetErrorName(err), cudaGetErrorString(err));
    return 2;
  }
  if (devices == 0) {
    std::printf("no usable CUDA device: the driver reports none\n");
    return 2;
  }
  cudaDeviceProp prop;
  if (cudaGetDeviceProperties(&prop, 0) == cudaSuccess) {
    std::printf("device 0: %s, compute capability %d.%d\n", prop.name, prop.major, prop.minor);
  }
  // Empty, one element, around one block, a megabyte-sized vector, and one
  // larger than the grid (65535 blocks of 256 threads) so the stride loop runs.
  const size_t sizes[] = {0, 1, 255, 256, 257, size_t{1} << 20, (size_t{1} << 24) + 3};
  int passed = 0;
  int failed = 0;
  for (const size_t n : sizes) {
    if (check_size(n)) {
      ++passed;
    } else {
      ++failed;
    }
  }
  std::printf("%d passed, %d failed\n", passed, failed);
  return failed == 0 ? 0 : 1;
}
