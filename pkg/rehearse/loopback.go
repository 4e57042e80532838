package rehearse

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"sync"
)

// ErrNotLoopback is returned for a connection to anything but this machine:
// a rehearsal sends nothing outside it.
var ErrNotLoopback = fmt.Errorf("rehearse: refused: a rehearsal connects to loopback addresses only")

// dialLoopback dials only literal loopback addresses (127.0.0.0/8, ::1) and
// localhost, before any name is resolved: even a DNS lookup would leave the machine.
func dialLoopback(ctx context.Context, network, addr string) (net.Conn, error) {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, fmt.Errorf("%w: %q: %v", ErrNotLoopback, addr, err)
	}
	if ip := net.ParseIP(host); (ip == nil || !ip.IsLoopback()) && host != "localhost" {
		return nil, fmt.Errorf("%w: %s is not one", ErrNotLoopback, addr)
	}
	if host == "localhost" {
		addr = net.JoinHostPort("127.0.0.1", addr[len(host)+1:])
	}
	var d net.Dialer
	return d.DialContext(ctx, network, addr)
}

// LoopbackTransport is an HTTP transport that connects to loopback
// addresses only and uses no proxy (a proxy would carry the request off the machine).
func LoopbackTransport() *http.Transport {
	return &http.Transport{DialContext: dialLoopback, Proxy: nil, ForceAttemptHTTP2: false, MaxIdleConnsPerHost: 16}
}

// guardMu serialises rehearsals in one process: each swaps the default transport.
var guardMu sync.Mutex

// loopbackOnly runs f with http.DefaultTransport replaced by a
// LoopbackTransport, so every client the lane's action code builds while f
// runs (they start from the default transport, or a clone of it) can reach
// only this machine; the transport is put back after.
func loopbackOnly(f func() error) error {
	guardMu.Lock()
	defer guardMu.Unlock()
	saved := http.DefaultTransport
	http.DefaultTransport = LoopbackTransport()
	defer func() { http.DefaultTransport = saved }()
	return f()
}
