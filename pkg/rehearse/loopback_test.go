package rehearse

import (
	"context"
	"errors"
	"net"
	"net/http"
	"testing"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"
)

// The rehearsal's transport connects to loopback addresses only, and
// refuses any other before a name is resolved.
func TestRehearseDialsLoopbackOnly(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	assert.NilError(t, err)
	defer l.Close()
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	_, port, _ := net.SplitHostPort(l.Addr().String())
	tests := []struct {
		addr    string
		refused bool
	}{
		{addr: "127.0.0.1:" + port},
		{addr: "localhost:" + port},
		{addr: "203.0.113.7:443", refused: true},
		{addr: "api.runpod.io:443", refused: true},
		{addr: "[2001:db8::1]:443", refused: true},
		{addr: "0.0.0.0:" + port, refused: true},
		{addr: "no-port", refused: true},
	}
	for _, tt := range tests {
		t.Run(tt.addr, func(t *testing.T) {
			c, err := dialLoopback(context.Background(), "tcp", tt.addr)
			if tt.refused {
				assert.Check(t, errors.Is(err, ErrNotLoopback), "%v", err)
				return
			}
			assert.NilError(t, err)
			c.Close()
		})
	}
}

// While a rehearsal plays, every client built from the default transport
// (as the lane's action code builds its clients) reaches this machine
// only; afterwards the default transport is what it was.
func TestRehearseSendsNothingOutsideTheMachine(t *testing.T) {
	before := http.DefaultTransport
	err := loopbackOnly(func() error {
		_, err := http.Get("https://api.github.com/")
		assert.Check(t, errors.Is(err, ErrNotLoopback), "%v", err)
		clone := http.DefaultTransport.(*http.Transport).Clone() // as the RunPod client does
		_, err = (&http.Client{Transport: clone}).Get("https://rest.runpod.io/v1/pods")
		assert.Check(t, errors.Is(err, ErrNotLoopback), "%v", err)
		return nil
	})
	assert.NilError(t, err)
	assert.Check(t, is.Equal(http.DefaultTransport, before))
}
