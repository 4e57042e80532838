package runpodsim

import (
	"fmt"
	"maps"
	"time"
)

// podBody is the contract's Pod. Fields the contract requires are never
// omitted; nullable ones are pointers.
type podBody struct {
	ID               string            `json:"id"`
	Name             string            `json:"name"`
	Status           string            `json:"status"`
	Actions          []string          `json:"actions"`
	Image            string            `json:"image"`
	Args             string            `json:"args"`
	Disk             int               `json:"disk"`
	Mounts           mountsBody        `json:"mounts"`
	Ports            []string          `json:"ports"`
	Env              map[string]string `json:"env"`
	Registry         *string           `json:"registry"`
	GPU              gpuBody           `json:"gpu"`
	Cloud            string            `json:"cloud"`
	DataCenterID     *string           `json:"dataCenterId"`
	CudaVersion      *string           `json:"cudaVersion"`
	SSH              sshBody           `json:"ssh"`
	Template         *string           `json:"template"`
	Cost             float64           `json:"cost"`
	Locked           bool              `json:"locked"`
	GlobalNetworking globalNetBody     `json:"globalNetworking"`
	Runtime          *runtimeBody      `json:"runtime"`
	CreatedAt        string            `json:"createdAt"`
	StartedAt        *string           `json:"startedAt"`
}

type gpuBody struct {
	ID    string `json:"id"`
	Count int    `json:"count"`
}

type sshBody struct {
	Proxy  *sshEndpoint `json:"proxy"`
	Direct *sshEndpoint `json:"direct"`
}

type sshEndpoint struct {
	Host     string `json:"host"`
	Port     int    `json:"port"`
	Username string `json:"username"`
	Command  string `json:"command"`
}

type globalNetBody struct {
	Enabled     bool   `json:"enabled"`
	IP          string `json:"ip,omitempty"`
	InternalDNS string `json:"internalDns,omitempty"`
}

type runtimeBody struct {
	Uptime int64         `json:"uptime"`
	GPUs   []gpuUtil     `json:"gpus"`
	CPU    utilization   `json:"cpu"`
	Memory utilization   `json:"memory"`
	Ports  []runtimePort `json:"ports"`
}

type gpuUtil struct {
	Util       int `json:"util"`
	MemoryUtil int `json:"memoryUtil"`
}

type utilization struct {
	Util int `json:"util"`
}

type runtimePort struct {
	Private int     `json:"private"`
	Public  *int    `json:"public"`
	Type    string  `json:"type"`
	IP      *string `json:"ip"`
}

// rfc3339 is the v2 timestamp layout; whole seconds print without a fraction.
func rfc3339(t time.Time) string { return t.UTC().Format(time.RFC3339Nano) }

// render shows p as GET /v2/pods/{id} would at now.
func (s *Server) render(p *pod, now time.Time) podBody {
	dc, cuda := p.host.profile.DataCenterID, p.host.profile.DriverCUDA
	b := podBody{
		ID: p.id, Name: p.name, Status: p.status,
		Actions: append([]string{}, actionsByStatus[p.status]...),
		Image:   p.image, Args: p.args, Disk: p.disk, Mounts: p.mounts,
		Ports: make([]string, 0, len(p.ports)), Env: maps.Clone(p.env), Registry: p.registry,
		GPU: gpuBody{ID: p.gpuID, Count: p.gpuCount}, Cloud: p.cloud,
		DataCenterID: &dc, CudaVersion: &cuda,
		SSH: sshBody{Proxy: &sshEndpoint{
			Host: "ssh.runpod.io", Port: 22, Username: p.sshUser,
			Command: fmt.Sprintf("ssh %s@ssh.runpod.io", p.sshUser),
		}},
		CreatedAt: rfc3339(p.createdAt),
	}
	for _, port := range p.ports {
		b.Ports = append(b.Ports, fmt.Sprintf("%d/%s", port.private, port.proto))
	}
	if p.globalIP != "" {
		b.GlobalNetworking = globalNetBody{Enabled: true, IP: p.globalIP, InternalDNS: p.id + ".runpod.internal"}
	}
	if !p.startedAt.IsZero() {
		started := rfc3339(p.startedAt)
		b.StartedAt = &started
	}
	switch p.status {
	case StatusExited, StatusTerminated, StatusError:
		// Nothing bills, so the pod reports no rate: capture the price while it runs.
	default:
		b.Cost = p.price
	}
	if p.status == StatusRunning && (p.lostAt.IsZero() || now.Before(p.lostAt)) {
		b.Runtime = s.runtime(p, now)
		for _, port := range p.ports {
			if port.private == 22 && port.proto == "tcp" {
				b.SSH.Direct = &sshEndpoint{
					Host: p.host.ip, Port: port.public, Username: "root",
					Command: fmt.Sprintf("ssh root@%s -p %d", p.host.ip, port.public),
				}
			}
		}
	}
	return b
}

func (s *Server) runtime(p *pod, now time.Time) *runtimeBody {
	rt := &runtimeBody{
		Uptime: int64(now.Sub(p.startedAt) / time.Second),
		GPUs:   make([]gpuUtil, p.gpuCount),
		Ports:  make([]runtimePort, 0, len(p.ports)),
	}
	for _, port := range p.ports {
		rp := runtimePort{Private: port.private, Type: port.proto}
		if port.proto != "http" { // http ports go through RunPod's proxy, not the host's address
			public, ip := port.public, p.host.ip
			rp.Public, rp.IP = &public, &ip
		}
		rt.Ports = append(rt.Ports, rp)
	}
	return rt
}
