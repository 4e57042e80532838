package actionio

import "github.com/org/runpod-gpu/pkg/inputform"

// ServiceURLForm is what a ServiceURL input must hold.
const ServiceURLForm = inputform.ServiceURLForm

// ServiceURL is an input holding the base URL of an API the action sends a
// credential to (RunPod, a container registry), as inputform.CheckServiceURL
// accepts it: https without user info (plain http only on a loopback host).
// Empty means not given: the caller's default.
type ServiceURL string

// UnmarshalText accepts only what ServiceURLForm describes; the error's
// Shown() is the value without its user info.
func (s *ServiceURL) UnmarshalText(text []byte) error {
	if err := inputform.CheckServiceURL(string(text)); err != nil {
		return err
	}
	*s = ServiceURL(text)
	return nil
}

// String is the URL, "" when not given.
func (s ServiceURL) String() string { return string(s) }
