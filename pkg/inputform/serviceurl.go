package inputform

import (
	"fmt"
	"net"
	"net/url"
	"strings"
)

// ServiceURLForm is what the base URL of an API a credential is sent to
// must be.
const ServiceURLForm = "an https:// URL without user info, query or fragment (http:// only on a loopback host, for simulators and tests)"

// URLError refuses a service URL; Shown is the value without its user info.
type URLError struct{ shown, why string }

func (e *URLError) Error() string {
	if e.why == "" {
		return ServiceURLForm
	}
	return fmt.Sprintf("%s, not %s", ServiceURLForm, e.why)
}

// Shown is the refused value as an error may show it (user info as ***).
func (e *URLError) Shown() string { return e.shown }

// CheckServiceURL returns a *URLError unless raw is the base URL of an API a
// credential may be sent to (RunPod, GitHub, a registry): https, so the
// credential never travels in the clear, and without user info, so no
// credential rides in the URL itself, where logs and errors would show it.
// Plain http is taken only on a loopback host, where the simulated cloud serves.
func CheckServiceURL(raw string) error {
	u, err := url.Parse(raw)
	switch {
	case err != nil || u.Opaque != "" || u.Host == "" || strings.ContainsAny(raw, " \t\r\n"):
		return &URLError{shown: raw}
	case u.User != nil:
		return &URLError{shown: u.Scheme + "://***@" + u.Host + u.EscapedPath(), why: "user info"}
	case u.RawQuery != "" || u.Fragment != "" || strings.ContainsAny(raw, "?#"):
		return &URLError{shown: raw, why: "a query or fragment"}
	case u.Scheme == "https":
	case u.Scheme == "http" && LoopbackHost(u.Hostname()):
	default:
		return &URLError{shown: raw, why: "scheme " + u.Scheme + " on " + u.Hostname()}
	}
	return nil
}

// LoopbackHost reports whether host is this machine (localhost, 127.0.0.0/8,
// ::1), where plain http carries a credential nowhere else.
func LoopbackHost(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
