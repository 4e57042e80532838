package runpodsim

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Cloud tiers, as the API spells them.
const (
	Secure    = "SECURE"
	Community = "COMMUNITY"
)

// ErrInvalidMarket is wrapped by every error New returns for a malformed Market.
var ErrInvalidMarket = errors.New("runpodsim: invalid market")

// GPUType is one entry of the GPU catalog. Prices are USD per hour for a single GPU.
type GPUType struct {
	ID              string // "NVIDIA GeForce RTX 4090": what pods ask for
	Name            string // "RTX 4090"
	Pool            string // serverless pool, e.g. "ADA_24"; "" renders as null
	Manufacturer    string // NVIDIA, AMD or UNKNOWN; "" means NVIDIA
	MemoryGB        int
	SecurePrice     float64
	CommunityPrice  float64
	ServerlessPrice float64 // 0 omits price.serverless
}

// DataCenter is one location of the catalog.
type DataCenter struct {
	ID                 string // "US-KS-2"
	Name               string // "US Kansas 2"
	Region             string // DataCenterRegion enum, e.g. NORTH_AMERICA
	CountryCode        string // ISO 3166-1 alpha-2, used by the countryCodes filter
	GlobalNetwork      bool
	NetworkVolumeTypes []string // STANDARD, HIGH_PERFORMANCE
	Compliance         []string // Compliance enum values
}

// HostProfile describes one simulated machine. Stock is the hosts' free GPUs:
// a pod of gpu.count N takes N GPUs of one host until it stops or is deleted.
type HostProfile struct {
	ID           string
	DataCenterID string
	GPUTypeID    string
	Cloud        string // Secure or Community; "" means Secure
	GPUCount     int    // GPUs in the machine; 0 means 1
	// DriverCUDA is the CUDA API version the driver reports ("12.8"); it is the
	// pod's cudaVersion and what gpu.minCudaVersion is checked against.
	DriverCUDA string
	// MaxPTXISA is the newest PTX ISA the driver loads ("8.7"); "" derives it from DriverCUDA.
	MaxPTXISA string
	VRAMGB    int // 0 takes the GPU type's memory
	// BootSeconds is how long the pod stays STARTING before its container runs.
	BootSeconds int
	// Healthy is false for a machine whose GPU does not work (the CUDA proof
	// fails on it). The zero value is an unhealthy host: set it.
	Healthy bool
	// DiesDuringBoot makes every pod on this host end in ERROR halfway through STARTING.
	DiesDuringBoot bool
	// LosesRuntimeAfter > 0 makes a running pod's runtime turn null that long
	// after its container started, while its status stays RUNNING.
	LosesRuntimeAfter time.Duration
}

// GPUUUID is the UUID nvidia-smi reports for GPU i of a pod on this machine
// ("GPU-" and 8-4-4-4-12 hex digits), derived from the machine's ID. The
// simulator's faults are per machine (Healthy, DiesDuringBoot), so every pod
// on it sees the same GPUs from index 0: what the pod reports identifies its
// machine, as it does for the lane's reputation.
func (h HostProfile) GPUUUID(i int) string {
	sum := sha256.Sum256([]byte(fmt.Sprintf("%s/gpu%d", h.ID, i)))
	x := hex.EncodeToString(sum[:16])
	return "GPU-" + x[0:8] + "-" + x[8:12] + "-" + x[12:16] + "-" + x[16:20] + "-" + x[20:32]
}

// Market is the simulated cloud's supply: what the catalog lists and where pods can land.
type Market struct {
	GPUTypes    []GPUType
	DataCenters []DataCenter
	Hosts       []HostProfile
}

// cudaVersion is a "major.minor" version compared numerically (12.11 > 12.2).
type cudaVersion struct{ major, minor int }

func (v cudaVersion) less(o cudaVersion) bool {
	return v.major < o.major || (v.major == o.major && v.minor < o.minor)
}

func (v cudaVersion) String() string { return fmt.Sprintf("%d.%d", v.major, v.minor) }

// parseVersion reads "major.minor"; with majorOnly it also takes a bare "major"
// (meaning major.0), as the catalog's minCudaVersion filter does.
func parseVersion(s string, majorOnly bool) (cudaVersion, error) {
	majorText, minorText, hasMinor := strings.Cut(s, ".")
	if !hasMinor && !majorOnly {
		return cudaVersion{}, fmt.Errorf("%q is not a major.minor version", s)
	}
	major, err := parseDigits(majorText)
	if err != nil {
		return cudaVersion{}, fmt.Errorf("%q is not a version: %w", s, err)
	}
	minor := 0
	if hasMinor {
		if minor, err = parseDigits(minorText); err != nil {
			return cudaVersion{}, fmt.Errorf("%q is not a version: %w", s, err)
		}
	}
	return cudaVersion{major, minor}, nil
}

// parseDigits accepts only ASCII digits (no sign, no spaces), as the API's ^\d+$ patterns do.
func parseDigits(s string) (int, error) {
	if s == "" || strings.TrimLeft(s, "0123456789") != "" {
		return 0, fmt.Errorf("%q is not a number", s)
	}
	n, err := strconv.Atoi(s)
	if err != nil {
		return 0, fmt.Errorf("%q is out of range", s)
	}
	return n, nil
}

// ptxISAForCUDA maps a driver's CUDA version to the newest PTX ISA it loads
// (NVIDIA's PTX ISA release table); versions between entries take the lower one.
var ptxISAForCUDA = []struct{ cuda, ptx string }{
	{"11.8", "7.8"}, {"12.0", "8.0"}, {"12.1", "8.1"}, {"12.2", "8.2"}, {"12.3", "8.3"},
	{"12.4", "8.4"}, {"12.5", "8.5"}, {"12.7", "8.6"}, {"12.8", "8.7"}, {"12.9", "8.8"},
	{"13.0", "9.0"}, {"13.1", "9.1"}, {"13.2", "9.2"},
}

func defaultPTXISA(driver cudaVersion) string {
	ptx := ""
	for _, e := range ptxISAForCUDA {
		v, _ := parseVersion(e.cuda, false)
		if driver.less(v) {
			break
		}
		ptx = e.ptx
	}
	return ptx
}

var (
	regions         = enumSet("NORTH_AMERICA", "SOUTH_AMERICA", "EUROPE", "ASIA", "MIDDLE_EAST", "AFRICA", "OCEANIA", "ANTARCTICA", "UNKNOWN")
	volumeTypes     = enumSet("STANDARD", "HIGH_PERFORMANCE")
	complianceKinds = enumSet("GDPR", "ISO_IEC_27001", "ISO_14001", "PCI_DSS", "HITRUST", "SOC_1_TYPE_2", "SOC_2_TYPE_2", "SOC_3_TYPE_2", "ITAR", "FISMA_HIGH", "HIPAA", "RENEWABLE")
	manufacturers   = enumSet("NVIDIA", "AMD", "UNKNOWN")
)

func enumSet(values ...string) map[string]bool {
	m := make(map[string]bool, len(values))
	for _, v := range values {
		m[v] = true
	}
	return m
}

// market is a validated Market with its hosts' mutable stock.
type market struct {
	gpus    []GPUType
	gpuByID map[string]*GPUType
	dcs     []DataCenter
	dcByID  map[string]*DataCenter
	hosts   []*host
}

type host struct {
	profile HostProfile
	driver  cudaVersion
	free    int // GPUs not held by a pod
	ip      string
}

// compile checks m and fills in its documented defaults.
func (m Market) compile() (*market, error) {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%w: %s", ErrInvalidMarket, fmt.Sprintf(format, args...))
	}
	c := &market{gpuByID: map[string]*GPUType{}, dcByID: map[string]*DataCenter{}}
	c.gpus = append([]GPUType(nil), m.GPUTypes...)
	for i := range c.gpus {
		g := &c.gpus[i]
		switch {
		case g.ID == "":
			return nil, bad("GPU type %d: id is empty", i)
		case c.gpuByID[g.ID] != nil:
			return nil, bad("GPU type %q is listed twice", g.ID)
		case g.SecurePrice < 0 || g.CommunityPrice < 0 || g.ServerlessPrice < 0:
			return nil, bad("GPU type %q: prices must not be negative", g.ID)
		case g.MemoryGB < 0:
			return nil, bad("GPU type %q: memory %d GB must not be negative", g.ID, g.MemoryGB)
		}
		if g.Manufacturer == "" {
			g.Manufacturer = "NVIDIA"
		}
		if !manufacturers[g.Manufacturer] {
			return nil, bad("GPU type %q: manufacturer %q is not NVIDIA, AMD or UNKNOWN", g.ID, g.Manufacturer)
		}
		if g.Name == "" {
			g.Name = g.ID
		}
		c.gpuByID[g.ID] = g
	}
	c.dcs = append([]DataCenter(nil), m.DataCenters...)
	for i := range c.dcs {
		d := &c.dcs[i]
		switch {
		case d.ID == "":
			return nil, bad("data center %d: id is empty", i)
		case c.dcByID[d.ID] != nil:
			return nil, bad("data center %q is listed twice", d.ID)
		case !regions[d.Region]:
			return nil, bad("data center %q: region %q is not a DataCenterRegion", d.ID, d.Region)
		case len(d.CountryCode) != 2 || strings.ToUpper(d.CountryCode) != d.CountryCode:
			return nil, bad("data center %q: country code %q is not two upper-case letters", d.ID, d.CountryCode)
		}
		for _, v := range d.NetworkVolumeTypes {
			if !volumeTypes[v] {
				return nil, bad("data center %q: network volume type %q is not STANDARD or HIGH_PERFORMANCE", d.ID, v)
			}
		}
		for _, v := range d.Compliance {
			if !complianceKinds[v] {
				return nil, bad("data center %q: compliance %q is not a Compliance value", d.ID, v)
			}
		}
		if d.Name == "" {
			d.Name = d.ID
		}
		c.dcByID[d.ID] = d
	}
	seen := map[string]bool{}
	for i, p := range m.Hosts {
		switch {
		case p.ID == "":
			return nil, bad("host %d: id is empty", i)
		case seen[p.ID]:
			return nil, bad("host %q is listed twice", p.ID)
		case c.dcByID[p.DataCenterID] == nil:
			return nil, bad("host %q: data center %q is not in the market", p.ID, p.DataCenterID)
		case c.gpuByID[p.GPUTypeID] == nil:
			return nil, bad("host %q: GPU type %q is not in the market", p.ID, p.GPUTypeID)
		case p.GPUCount < 0:
			return nil, bad("host %q: gpuCount %d must not be negative", p.ID, p.GPUCount)
		case p.BootSeconds < 0:
			return nil, bad("host %q: bootSeconds %d must not be negative", p.ID, p.BootSeconds)
		case p.LosesRuntimeAfter < 0:
			return nil, bad("host %q: losesRuntimeAfter %s must not be negative", p.ID, p.LosesRuntimeAfter)
		}
		seen[p.ID] = true
		if p.Cloud == "" {
			p.Cloud = Secure
		}
		if p.Cloud != Secure && p.Cloud != Community {
			return nil, bad("host %q: cloud %q is not SECURE or COMMUNITY", p.ID, p.Cloud)
		}
		if p.GPUCount == 0 {
			p.GPUCount = 1
		}
		driver, err := parseVersion(p.DriverCUDA, false)
		if err != nil {
			return nil, bad("host %q: driverCUDA: %v", p.ID, err)
		}
		if p.MaxPTXISA == "" {
			p.MaxPTXISA = defaultPTXISA(driver)
		} else if _, err := parseVersion(p.MaxPTXISA, false); err != nil {
			return nil, bad("host %q: maxPTXISA: %v", p.ID, err)
		}
		if p.VRAMGB == 0 {
			p.VRAMGB = c.gpuByID[p.GPUTypeID].MemoryGB
		}
		c.hosts = append(c.hosts, &host{profile: p, driver: driver, free: p.GPUCount, ip: hostIP(i)})
	}
	return c, nil
}

// hostIP gives each host a stable address from the documentation ranges (RFC 5737).
func hostIP(i int) string {
	nets := []string{"203.0.113", "198.51.100", "192.0.2"}
	return fmt.Sprintf("%s.%d", nets[(i/250)%len(nets)], i%250+1)
}
