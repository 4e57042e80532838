package actionio

import (
	"fmt"
	"net"
	"net/url"
	"strings"
)

// ServiceURLForm is what a ServiceURL input must hold.
const ServiceURLForm = "an https:// URL without user info, query or fragment (http:// only on a loopback host, for simulators and tests)"

// ServiceURL is an input holding the base URL of an API the action sends a
// credential to (RunPod, a container registry): https, so the credential is
// never sent in the clear, and without user info, so no credential rides in
// the URL itself (where logs and errors would show it). Plain http is taken
// only on a loopback host, where the simulated cloud serves. Empty means not
// given: the caller's default.
type ServiceURL string

// UnmarshalText accepts only what ServiceURLForm describes.
func (s *ServiceURL) UnmarshalText(text []byte) error {
	raw := string(text)
	u, err := url.Parse(raw)
	switch {
	case err != nil || u.Opaque != "" || u.Host == "" || strings.ContainsAny(raw, " \t\r\n"):
		return &serviceURLError{shown: raw}
	case u.User != nil:
		return &serviceURLError{shown: u.Scheme + "://***@" + u.Host + u.EscapedPath(), why: "user info"}
	case u.RawQuery != "" || u.Fragment != "" || strings.ContainsAny(raw, "?#"):
		return &serviceURLError{shown: raw, why: "a query or fragment"}
	case u.Scheme == "https":
	case u.Scheme == "http" && loopback(u.Hostname()):
	default:
		return &serviceURLError{shown: raw, why: "scheme " + u.Scheme + " on " + u.Hostname()}
	}
	*s = ServiceURL(raw)
	return nil
}

// String is the URL, "" when not given.
func (s ServiceURL) String() string { return string(s) }

func loopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// serviceURLError refuses a service URL, showing it without its user info.
type serviceURLError struct{ shown, why string }

func (e *serviceURLError) Error() string {
	if e.why == "" {
		return ServiceURLForm
	}
	return fmt.Sprintf("%s, not %s", ServiceURLForm, e.why)
}

// Shown is the refused value as an error may show it.
func (e *serviceURLError) Shown() string { return e.shown }
