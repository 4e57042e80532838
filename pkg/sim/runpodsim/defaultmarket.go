package runpodsim

import (
	"fmt"
	"strings"
	"time"
)

// DefaultMarket returns a realistic market: fourteen GPU types at prices of
// the order RunPod lists (late 2026), ten data centers on four continents, and
// 42 machines (222 GPUs) in both clouds on drivers from CUDA 12.4 to 13.0.
//
// Secure-cloud machines are all healthy. Two community offers are traps a
// provisioner must survive: one RTX 3090 machine in EU-SE-1 has a broken GPU
// (Healthy false), and one RTX A5000 machine in CA-MTL-1 loses its runtime
// five minutes after its container starts. Machines on CUDA 12.4 are excluded
// by a 12.6 floor. Every call returns a fresh copy.
func DefaultMarket() Market {
	m := Market{
		GPUTypes: []GPUType{
			{ID: "NVIDIA RTX A4000", Name: "RTX A4000", Pool: "AMPERE_16", MemoryGB: 16, SecurePrice: 0.25, CommunityPrice: 0.17, ServerlessPrice: 0.58},
			{ID: "NVIDIA RTX A5000", Name: "RTX A5000", Pool: "AMPERE_24", MemoryGB: 24, SecurePrice: 0.27, CommunityPrice: 0.16, ServerlessPrice: 0.68},
			{ID: "NVIDIA GeForce RTX 3090", Name: "RTX 3090", Pool: "AMPERE_24", MemoryGB: 24, SecurePrice: 0.46, CommunityPrice: 0.22, ServerlessPrice: 0.68},
			{ID: "NVIDIA L4", Name: "L4", Pool: "AMPERE_24", MemoryGB: 24, SecurePrice: 0.43, CommunityPrice: 0.28, ServerlessPrice: 0.68},
			{ID: "NVIDIA GeForce RTX 4090", Name: "RTX 4090", Pool: "ADA_24", MemoryGB: 24, SecurePrice: 0.69, CommunityPrice: 0.34, ServerlessPrice: 1.1},
			{ID: "NVIDIA RTX A6000", Name: "RTX A6000", Pool: "AMPERE_48", MemoryGB: 48, SecurePrice: 0.49, CommunityPrice: 0.33, ServerlessPrice: 1.22},
			{ID: "NVIDIA A40", Name: "A40", Pool: "AMPERE_48", MemoryGB: 48, SecurePrice: 0.44, CommunityPrice: 0.35, ServerlessPrice: 1.22},
			{ID: "NVIDIA L40S", Name: "L40S", Pool: "ADA_48_PRO", MemoryGB: 48, SecurePrice: 0.86, CommunityPrice: 0.79, ServerlessPrice: 1.9},
			{ID: "NVIDIA RTX 6000 Ada Generation", Name: "RTX 6000 Ada", Pool: "ADA_48_PRO", MemoryGB: 48, SecurePrice: 0.77, CommunityPrice: 0.74, ServerlessPrice: 1.9},
			{ID: "NVIDIA A100 80GB PCIe", Name: "A100 PCIe", Pool: "AMPERE_80", MemoryGB: 80, SecurePrice: 1.64, CommunityPrice: 1.19, ServerlessPrice: 2.72},
			{ID: "NVIDIA A100-SXM4-80GB", Name: "A100 SXM", Pool: "AMPERE_80", MemoryGB: 80, SecurePrice: 1.89, CommunityPrice: 1.49, ServerlessPrice: 2.72},
			{ID: "NVIDIA H100 80GB HBM3", Name: "H100 SXM", Pool: "ADA_80_PRO", MemoryGB: 80, SecurePrice: 2.99, CommunityPrice: 2.69, ServerlessPrice: 4.18},
			{ID: "NVIDIA H100 PCIe", Name: "H100 PCIe", Pool: "ADA_80_PRO", MemoryGB: 80, SecurePrice: 2.39, CommunityPrice: 1.99, ServerlessPrice: 4.18},
			{ID: "NVIDIA H200", Name: "H200 SXM", Pool: "HOPPER_141", MemoryGB: 141, SecurePrice: 3.59, CommunityPrice: 3.59, ServerlessPrice: 5.58},
		},
		DataCenters: []DataCenter{
			{ID: "US-KS-2", Name: "US Kansas 2", Region: "NORTH_AMERICA", CountryCode: "US", GlobalNetwork: true, NetworkVolumeTypes: []string{"STANDARD", "HIGH_PERFORMANCE"}, Compliance: []string{"SOC_2_TYPE_2", "ISO_IEC_27001"}},
			{ID: "US-TX-3", Name: "US Texas 3", Region: "NORTH_AMERICA", CountryCode: "US", GlobalNetwork: true, NetworkVolumeTypes: []string{"STANDARD"}, Compliance: []string{"SOC_2_TYPE_2"}},
			{ID: "US-CA-2", Name: "US California 2", Region: "NORTH_AMERICA", CountryCode: "US", NetworkVolumeTypes: []string{"STANDARD"}, Compliance: []string{}},
			{ID: "CA-MTL-1", Name: "CA Montreal 1", Region: "NORTH_AMERICA", CountryCode: "CA", GlobalNetwork: true, NetworkVolumeTypes: []string{"STANDARD"}, Compliance: []string{"ISO_IEC_27001"}},
			{ID: "EU-RO-1", Name: "EU Romania 1", Region: "EUROPE", CountryCode: "RO", GlobalNetwork: true, NetworkVolumeTypes: []string{"STANDARD", "HIGH_PERFORMANCE"}, Compliance: []string{"GDPR", "ISO_IEC_27001"}},
			{ID: "EU-SE-1", Name: "EU Sweden 1", Region: "EUROPE", CountryCode: "SE", NetworkVolumeTypes: []string{"STANDARD"}, Compliance: []string{"GDPR"}},
			{ID: "EUR-IS-1", Name: "EUR Iceland 1", Region: "EUROPE", CountryCode: "IS", NetworkVolumeTypes: []string{"STANDARD"}, Compliance: []string{"GDPR", "RENEWABLE"}},
			{ID: "EU-NL-1", Name: "EU Netherlands 1", Region: "EUROPE", CountryCode: "NL", GlobalNetwork: true, NetworkVolumeTypes: []string{"STANDARD"}, Compliance: []string{"GDPR", "SOC_2_TYPE_2"}},
			{ID: "AP-JP-1", Name: "AP Japan 1", Region: "ASIA", CountryCode: "JP", NetworkVolumeTypes: []string{"STANDARD"}, Compliance: []string{"ISO_IEC_27001"}},
			{ID: "OC-AU-1", Name: "OC Australia 1", Region: "OCEANIA", CountryCode: "AU", NetworkVolumeTypes: []string{}, Compliance: []string{}},
		},
	}
	// One row per group of identical machines: where, what, which driver, how many, how big, how slow to boot.
	offers := []struct {
		dc, gpu, cloud, driver string
		machines, gpus, boot   int
	}{
		{"US-TX-3", "NVIDIA RTX A4000", Secure, "12.8", 2, 4, 40},
		{"EU-RO-1", "NVIDIA RTX A4000", Secure, "12.6", 1, 4, 45},
		{"US-CA-2", "NVIDIA RTX A4000", Community, "12.4", 2, 2, 55},
		{"EU-SE-1", "NVIDIA RTX A4000", Community, "12.8", 1, 4, 60},
		{"US-KS-2", "NVIDIA RTX A5000", Secure, "12.8", 1, 4, 40},
		{"CA-MTL-1", "NVIDIA RTX A5000", Community, "12.6", 2, 2, 60},
		{"EU-SE-1", "NVIDIA GeForce RTX 3090", Community, "12.8", 2, 2, 55},
		{"US-TX-3", "NVIDIA GeForce RTX 3090", Secure, "12.4", 1, 4, 40},
		{"US-KS-2", "NVIDIA L4", Secure, "12.8", 1, 8, 35},
		{"EU-NL-1", "NVIDIA L4", Secure, "13.0", 1, 8, 35},
		{"US-KS-2", "NVIDIA GeForce RTX 4090", Secure, "12.8", 2, 8, 35},
		{"EU-RO-1", "NVIDIA GeForce RTX 4090", Secure, "12.9", 1, 8, 40},
		{"US-CA-2", "NVIDIA GeForce RTX 4090", Community, "12.6", 3, 4, 65},
		{"EUR-IS-1", "NVIDIA GeForce RTX 4090", Secure, "13.0", 1, 8, 45},
		{"AP-JP-1", "NVIDIA GeForce RTX 4090", Community, "12.8", 1, 2, 70},
		{"US-TX-3", "NVIDIA RTX A6000", Secure, "12.6", 1, 8, 40},
		{"CA-MTL-1", "NVIDIA RTX A6000", Community, "12.8", 1, 4, 60},
		{"EU-SE-1", "NVIDIA A40", Secure, "12.8", 1, 8, 40},
		{"EU-RO-1", "NVIDIA A40", Community, "12.4", 1, 4, 60},
		{"US-KS-2", "NVIDIA L40S", Secure, "12.8", 1, 8, 45},
		{"EU-NL-1", "NVIDIA L40S", Secure, "12.9", 1, 4, 45},
		{"US-CA-2", "NVIDIA L40S", Community, "13.0", 1, 4, 65},
		{"EUR-IS-1", "NVIDIA RTX 6000 Ada Generation", Secure, "12.8", 1, 8, 45},
		{"US-TX-3", "NVIDIA RTX 6000 Ada Generation", Community, "12.6", 1, 4, 60},
		{"US-KS-2", "NVIDIA A100 80GB PCIe", Secure, "12.8", 1, 8, 50},
		{"CA-MTL-1", "NVIDIA A100 80GB PCIe", Community, "12.6", 1, 4, 70},
		{"US-TX-3", "NVIDIA A100-SXM4-80GB", Secure, "13.0", 1, 8, 50},
		{"EU-RO-1", "NVIDIA A100-SXM4-80GB", Secure, "12.6", 1, 8, 55},
		{"US-KS-2", "NVIDIA H100 80GB HBM3", Secure, "12.8", 1, 8, 50},
		{"EU-NL-1", "NVIDIA H100 80GB HBM3", Secure, "13.0", 1, 8, 50},
		{"AP-JP-1", "NVIDIA H100 80GB HBM3", Secure, "12.9", 1, 8, 60},
		{"US-CA-2", "NVIDIA H100 PCIe", Secure, "12.6", 1, 2, 50},
		{"OC-AU-1", "NVIDIA H100 PCIe", Community, "12.8", 1, 2, 75},
		{"US-TX-3", "NVIDIA H200", Secure, "13.0", 1, 8, 55},
		{"EUR-IS-1", "NVIDIA H200", Secure, "12.9", 1, 8, 60},
	}
	for _, o := range offers {
		for n := 1; n <= o.machines; n++ {
			m.Hosts = append(m.Hosts, HostProfile{
				ID:           fmt.Sprintf("%s-%s-%s-%d", strings.ToLower(o.dc), hostSlug(o.gpu), strings.ToLower(o.cloud[:1]), n),
				DataCenterID: o.dc,
				GPUTypeID:    o.gpu,
				Cloud:        o.cloud,
				GPUCount:     o.gpus,
				DriverCUDA:   o.driver,
				BootSeconds:  o.boot,
				Healthy:      true,
			})
		}
	}
	for i := range m.Hosts {
		switch m.Hosts[i].ID {
		case "eu-se-1-rtx-3090-c-2":
			m.Hosts[i].Healthy = false
		case "ca-mtl-1-rtx-a5000-c-1":
			m.Hosts[i].LosesRuntimeAfter = 5 * time.Minute
		}
	}
	return m
}

// hostSlug shortens a GPU id for host ids: "NVIDIA GeForce RTX 3090" → "rtx-3090".
func hostSlug(gpuID string) string {
	s := strings.ToLower(gpuID)
	for _, prefix := range []string{"nvidia ", "geforce "} {
		s = strings.TrimPrefix(s, prefix)
	}
	return strings.NewReplacer(" ", "-", "_", "-").Replace(s)
}
