package runpod

import (
	"context"
	"errors"
	"net/http"
	"testing"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"
)

func TestListSSHKeysDecodesTheContractExample(t *testing.T) {
	examples := responseExamples(t, "getSshKeys")
	assert.Assert(t, len(examples) > 0)
	for _, ex := range examples {
		if ex.status != "200" {
			continue
		}
		fake := newFake(t)
		fake.answer("GET /v2/account/ssh-keys", http.StatusOK, string(ex.value))
		client, _ := fake.client()
		keys, err := client.ListSSHKeys(context.Background())
		assert.NilError(t, err)
		assert.DeepEqual(t, keys, []string{"ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAILXGDN/SclOozk1xsDztpmhGiKkkrfQB9SKoO8dSIQQZ me@example.com"})
		got := fake.received()
		assert.Equal(t, len(got), 1)
		assert.Equal(t, got[0].method, http.MethodGet) // read only: never a PUT
	}
}

func TestListSSHKeysRefusesAnswersWithoutKeys(t *testing.T) {
	for _, tc := range []struct{ name, body string }{
		{"no keys member", `{}`},
		{"keys null", `{"keys":null}`},
		{"not an object", `[]`},
		{"keys not strings", `{"keys":[1]}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fake := newFake(t)
			fake.answer("GET /v2/account/ssh-keys", http.StatusOK, tc.body)
			client, _ := fake.client()
			_, err := client.ListSSHKeys(context.Background())
			assert.Assert(t, errors.Is(err, ErrMalformedResponse), "got %v", err)
			assert.Check(t, is.Contains(err.Error(), "list account SSH keys"))
		})
	}
	fake := newFake(t)
	fake.answer("GET /v2/account/ssh-keys", http.StatusOK, `{"keys":[]}`)
	client, _ := fake.client()
	keys, err := client.ListSSHKeys(context.Background())
	assert.NilError(t, err)
	assert.Equal(t, len(keys), 0)
}

func TestDirectSSHPrefersTheSSHBlockThenTheRuntimePort(t *testing.T) {
	port := 40022
	for _, tc := range []struct {
		name string
		pod  Pod
		want SSHEndpoint
		ok   bool
	}{
		{name: "ssh.direct", pod: Pod{SSH: &PodSSH{Direct: &SSHEndpoint{Host: "203.0.113.7", Port: 31022, Username: "root"}}},
			want: SSHEndpoint{Host: "203.0.113.7", Port: 31022, Username: "root"}, ok: true},
		{name: "runtime mapping of 22/tcp", pod: Pod{Runtime: &PodRuntime{Ports: []RuntimePort{{Private: 8888, Type: "http"}, {Private: 22, Public: &port, Type: "tcp", IP: "198.51.100.4"}}}},
			want: SSHEndpoint{Host: "198.51.100.4", Port: 40022, Username: "root"}, ok: true},
		{name: "proxy only", pod: Pod{SSH: &PodSSH{Proxy: &SSHEndpoint{Host: "ssh.runpod.io", Port: 22, Username: "x"}}}},
		{name: "22 not mapped yet", pod: Pod{Runtime: &PodRuntime{Ports: []RuntimePort{{Private: 22, Type: "tcp"}}}}},
		{name: "nothing", pod: Pod{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := tc.pod.DirectSSH()
			assert.Equal(t, ok, tc.ok)
			assert.DeepEqual(t, got, tc.want)
		})
	}
}
