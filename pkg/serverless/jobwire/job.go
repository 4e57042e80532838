package jobwire

import (
	"crypto/sha256"
	"encoding/hex"
)

// JobInput is what the worker receives besides the payload.
type JobInput struct {
	PayloadB64      string    `json:"payload_b64"`
	PayloadSHA256   string    `json:"payload_sha256"`
	TestCommand     string    `json:"test_command"`
	DeadlineSeconds int       `json:"deadline_seconds"`
	MaxResultBytes  int64     `json:"max_result_bytes"`
	Smoke           SmokeArgs `json:"smoke"`
	// ExpectedGPU is the GPU type the endpoint asked for (e.g. "NVIDIA RTX
	// A4000"): the worker refuses to run the tests on any other device.
	ExpectedGPU string `json:"expected_gpu,omitempty"`
}

// SmokeArgs configure the worker's CUDA proof (the pod lane's smoke proof).
type SmokeArgs struct {
	MinCUDA   string `json:"min_cuda,omitempty"`
	MinVRAMGB int    `json:"min_vram_gb,omitempty"`
}

// JobOutput is what the Go worker returns (and the handler passes through).
type JobOutput struct {
	ResultB64     string         `json:"result_archive_b64,omitempty"`
	ResultSHA256  string         `json:"result_sha256,omitempty"`
	CUDAExecuted  bool           `json:"cuda_executed"`
	TestsExitCode *int           `json:"tests_exit_code,omitempty"`
	Error         string         `json:"error,omitempty"`
	Summary       map[string]any `json:"summary,omitempty"`
}

// SHA256Hex is the lowercase hex SHA-256 of data.
func SHA256Hex(data []byte) string {
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])
}
