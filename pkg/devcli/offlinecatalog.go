package devcli

import "github.com/org/runpod-gpu/pkg/runpod"

// offlineCatalog is the GPU catalog init resolves names with when it has no
// RunPod key: the common types' exact RunPod ids, VRAM and list prices (which
// only order the tiers) as of this release. With a key, init reads RunPod's
// live catalog instead.
var offlineCatalog = []runpod.GPUType{
	{ID: "NVIDIA RTX A4000", Name: "RTX A4000", Pool: "AMPERE_16", Manufacturer: "Nvidia", Memory: 16, Secure: true, Community: true, Price: runpod.GPUPrice{Secure: 0.25, Community: 0.17}},
	{ID: "NVIDIA RTX A5000", Name: "RTX A5000", Pool: "AMPERE_24", Manufacturer: "Nvidia", Memory: 24, Secure: true, Community: true, Price: runpod.GPUPrice{Secure: 0.27, Community: 0.16}},
	{ID: "NVIDIA GeForce RTX 3090", Name: "RTX 3090", Pool: "AMPERE_24", Manufacturer: "Nvidia", Memory: 24, Secure: true, Community: true, Price: runpod.GPUPrice{Secure: 0.46, Community: 0.22}},
	{ID: "NVIDIA L4", Name: "L4", Pool: "AMPERE_24", Manufacturer: "Nvidia", Memory: 24, Secure: true, Community: true, Price: runpod.GPUPrice{Secure: 0.43, Community: 0.28}},
	{ID: "NVIDIA GeForce RTX 4090", Name: "RTX 4090", Pool: "ADA_24", Manufacturer: "Nvidia", Memory: 24, Secure: true, Community: true, Price: runpod.GPUPrice{Secure: 0.69, Community: 0.34}},
	{ID: "NVIDIA RTX A6000", Name: "RTX A6000", Pool: "AMPERE_48", Manufacturer: "Nvidia", Memory: 48, Secure: true, Community: true, Price: runpod.GPUPrice{Secure: 0.49, Community: 0.33}},
	{ID: "NVIDIA A40", Name: "A40", Pool: "AMPERE_48", Manufacturer: "Nvidia", Memory: 48, Secure: true, Community: true, Price: runpod.GPUPrice{Secure: 0.44, Community: 0.35}},
	{ID: "NVIDIA L40S", Name: "L40S", Pool: "ADA_48_PRO", Manufacturer: "Nvidia", Memory: 48, Secure: true, Community: true, Price: runpod.GPUPrice{Secure: 0.86, Community: 0.79}},
	{ID: "NVIDIA RTX 6000 Ada Generation", Name: "RTX 6000 Ada", Pool: "ADA_48_PRO", Manufacturer: "Nvidia", Memory: 48, Secure: true, Community: true, Price: runpod.GPUPrice{Secure: 0.77, Community: 0.74}},
	{ID: "NVIDIA A100 80GB PCIe", Name: "A100 PCIe", Pool: "AMPERE_80", Manufacturer: "Nvidia", Memory: 80, Secure: true, Community: true, Price: runpod.GPUPrice{Secure: 1.64, Community: 1.19}},
	{ID: "NVIDIA A100-SXM4-80GB", Name: "A100 SXM", Pool: "AMPERE_80", Manufacturer: "Nvidia", Memory: 80, Secure: true, Community: true, Price: runpod.GPUPrice{Secure: 1.89, Community: 1.49}},
	{ID: "NVIDIA H100 80GB HBM3", Name: "H100 SXM", Pool: "ADA_80_PRO", Manufacturer: "Nvidia", Memory: 80, Secure: true, Community: true, Price: runpod.GPUPrice{Secure: 2.99, Community: 2.69}},
	{ID: "NVIDIA H100 PCIe", Name: "H100 PCIe", Pool: "ADA_80_PRO", Manufacturer: "Nvidia", Memory: 80, Secure: true, Community: true, Price: runpod.GPUPrice{Secure: 2.39, Community: 1.99}},
	{ID: "NVIDIA H200", Name: "H200 SXM", Pool: "HOPPER_141", Manufacturer: "Nvidia", Memory: 141, Secure: true, Community: true, Price: runpod.GPUPrice{Secure: 3.59, Community: 3.59}},
}
