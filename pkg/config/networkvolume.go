package config

import (
	"fmt"

	"github.com/org/runpod-gpu/pkg/lazyre"
)

// NetworkVolume names a RunPod network volume of the account holding warm
// data (test data, model weights, compiler caches) that every pod of the lane
// mounts. A network volume lives in one data center, so naming one restricts
// the plan to that data center. The lane never writes it: a refresh workflow
// does (see the configuration page).
type NetworkVolume struct {
	// ID is the volume's RunPod id (GET /v2/network-volumes lists them).
	ID string `yaml:"id" json:"id"`
	// Path is where pods mount it; empty means DefaultNetworkVolumePath.
	Path string `yaml:"path" json:"path,omitempty"`
	// WhenOutOfStock says what the lane does when the volume's data center
	// has no stock of a reviewed GPU; empty means FallbackWait.
	WhenOutOfStock VolumeFallback `yaml:"when_out_of_stock" json:"when_out_of_stock,omitempty"`
}

// DefaultNetworkVolumePath is where a pod mounts the network volume unless
// network_volume.path says otherwise (RunPod's own convention for Serverless workers).
const DefaultNetworkVolumePath = "/runpod-volume"

// VolumeFallback is what a lane does when the network volume's data center has no stock.
type VolumeFallback string

// The fallbacks.
const (
	// FallbackWait re-reads the catalog until the data center has stock, up
	// to a bounded wait, and creates no pod elsewhere.
	FallbackWait VolumeFallback = "wait"
	// FallbackWithoutVolume plans as if no volume were named: the pod may land
	// anywhere and mounts nothing, and the job downloads what it needs.
	FallbackWithoutVolume VolumeFallback = "without_volume"
)

// volumeIDPattern is what a RunPod network volume id looks like ("agv6w2qcg7";
// the contract's examples also show "vol_abc123"); it reaches the create body only.
const volumeIDPattern = `^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$`

var volumeIDRE = lazyre.Regexp{Pattern: volumeIDPattern}

// MountPath is where pods mount the volume.
func (v *NetworkVolume) MountPath() string {
	if v.Path == "" {
		return DefaultNetworkVolumePath
	}
	return v.Path
}

// Fallback is the configured fallback, FallbackWait when none is.
func (v *NetworkVolume) Fallback() VolumeFallback {
	if v.WhenOutOfStock == "" {
		return FallbackWait
	}
	return v.WhenOutOfStock
}

// networkVolume checks the network_volume mapping and that it is the pod's only mount.
func (v *validator) networkVolume(c *Config) {
	nv := c.NetworkVolume
	if nv == nil {
		return
	}
	if !volumeIDRE.MatchString(nv.ID) {
		v.add("network_volume.id", quote(nv.ID), "a RunPod network volume id such as agv6w2qcg7 (letters, digits, _ and -; GET /v2/network-volumes lists yours)")
	}
	if p := nv.MountPath(); len(p) > maxVolumePathLength || !volumePathRE.MatchString(p) {
		v.add("network_volume.path", quote(p), "an absolute path such as /runpod-volume (letters, digits and ._- in each part, no . or .. parts, at most 255 characters)")
	}
	switch nv.Fallback() {
	case FallbackWait, FallbackWithoutVolume:
	default:
		v.add("network_volume.when_out_of_stock", quote(string(nv.WhenOutOfStock)), fmt.Sprintf("one of %s, %s", FallbackWait, FallbackWithoutVolume))
	}
	if c.Volume != nil {
		v.add("network_volume", "", "no `volume` beside it: RunPod mounts a persistent volume or a network volume on a pod, not both")
	}
}
