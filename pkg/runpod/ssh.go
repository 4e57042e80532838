package runpod

// PodSSH is a pod's ssh block: the proxy endpoint RunPod always offers, and
// the direct one (the host's public IP and the public port mapped to 22/tcp)
// once the pod runs with 22/tcp published.
type PodSSH struct {
	Proxy  *SSHEndpoint `json:"proxy,omitempty"`
	Direct *SSHEndpoint `json:"direct,omitempty"`
}

// SSHEndpoint is one way to reach a pod's sshd.
type SSHEndpoint struct {
	Host     string `json:"host"`
	Port     int    `json:"port"`
	Username string `json:"username"`
	Command  string `json:"command,omitempty"`
}

// DirectSSH returns the pod's direct endpoint: ssh.direct, or failing that
// the runtime's public mapping of 22/tcp. ok is false while the pod has none
// (not RUNNING, or 22/tcp not published).
func (p Pod) DirectSSH() (SSHEndpoint, bool) {
	if p.SSH != nil && p.SSH.Direct != nil && p.SSH.Direct.Host != "" && p.SSH.Direct.Port > 0 {
		e := *p.SSH.Direct
		if e.Username == "" {
			e.Username = "root"
		}
		return e, true
	}
	if p.Runtime != nil {
		for _, port := range p.Runtime.Ports {
			if port.Private == 22 && port.Type == "tcp" && port.Public != nil && *port.Public > 0 && port.IP != "" {
				return SSHEndpoint{Host: port.IP, Port: *port.Public, Username: "root"}, true
			}
		}
	}
	return SSHEndpoint{}, false
}
