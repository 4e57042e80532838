package smoke

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// The magic-value kernel: *out = in + MagicAddend. The proof passes a fresh input on every run,
// so a driver (or stub) that returns zeros or a fixed value fails the read-back.
const (
	// KernelName is the entry point of both the hand-written PTX and the NVRTC source.
	KernelName = "smoke_magic"
	// MagicAddend is what the kernel adds to its input.
	MagicAddend uint32 = 0x5EEDC0DE
)

// ExpectedReadBack is the value the magic kernel writes for input.
func ExpectedReadBack(input uint32) uint32 { return input + MagicAddend }

// KernelSource is the CUDA C the NVRTC step compiles. extern "C" keeps the entry name
// unmangled so cuModuleGetFunction finds KernelName.
var KernelSource = fmt.Sprintf(`extern "C" __global__ void %s(unsigned int *out, unsigned int in)
{
    *out = in + 0x%08Xu;
}
`, KernelName, MagicAddend)

// ISA is a PTX instruction-set version, the X.Y of a module's ".version X.Y" directive.
type ISA struct {
	Major, Minor int
}

// String formats the ISA as "X.Y".
func (i ISA) String() string { return fmt.Sprintf("%d.%d", i.Major, i.Minor) }

// AtLeast reports whether i is j or newer.
func (i ISA) AtLeast(j ISA) bool {
	return i.Major > j.Major || (i.Major == j.Major && i.Minor >= j.Minor)
}

// MarshalText writes the ISA as "X.Y".
func (i ISA) MarshalText() ([]byte, error) { return []byte(i.String()), nil }

// UnmarshalText parses "X.Y", so reports can be read back.
func (i *ISA) UnmarshalText(b []byte) error {
	parsed, err := parseISA(string(b))
	if err != nil {
		return fmt.Errorf("PTX ISA %q: want X.Y such as 8.7", b)
	}
	*i = parsed
	return nil
}

// ptxISAByCUDA maps each CUDA release to the PTX ISA version it introduced, from the table
// "PTX ISA version / CUDA release" in NVIDIA's PTX ISA documentation, section "Release Notes"
// (https://docs.nvidia.com/cuda/parallel-thread-execution/#release-notes). The step from
// "ISA = CUDA − 4.0" breaks at 12.6, which kept ISA 8.5, so the table is spelled out rather than
// computed. A driver of CUDA release R loads PTX up to the ISA of R and refuses newer ones with
// CUDA_ERROR_UNSUPPORTED_PTX_VERSION (222): that refusal is what the proof exists to catch.
var ptxISAByCUDA = []struct {
	cuda Version
	isa  ISA
}{
	{Version{Major: 11, Minor: 0}, ISA{7, 0}},
	{Version{Major: 11, Minor: 1}, ISA{7, 1}},
	{Version{Major: 11, Minor: 2}, ISA{7, 2}},
	{Version{Major: 11, Minor: 3}, ISA{7, 3}},
	{Version{Major: 11, Minor: 4}, ISA{7, 4}},
	{Version{Major: 11, Minor: 5}, ISA{7, 5}},
	{Version{Major: 11, Minor: 6}, ISA{7, 6}},
	{Version{Major: 11, Minor: 7}, ISA{7, 7}},
	{Version{Major: 11, Minor: 8}, ISA{7, 8}},
	{Version{Major: 12, Minor: 0}, ISA{8, 0}},
	{Version{Major: 12, Minor: 1}, ISA{8, 1}},
	{Version{Major: 12, Minor: 2}, ISA{8, 2}},
	{Version{Major: 12, Minor: 3}, ISA{8, 3}},
	{Version{Major: 12, Minor: 4}, ISA{8, 4}},
	{Version{Major: 12, Minor: 5}, ISA{8, 5}},
	{Version{Major: 12, Minor: 6}, ISA{8, 5}},
	{Version{Major: 12, Minor: 7}, ISA{8, 6}},
	{Version{Major: 12, Minor: 8}, ISA{8, 7}},
	{Version{Major: 12, Minor: 9}, ISA{8, 8}},
	{Version{Major: 13, Minor: 0}, ISA{9, 0}},
	{Version{Major: 13, Minor: 1}, ISA{9, 1}},
}

// PTXISAFor returns the PTX ISA version of CUDA release cuda (12.6 → 8.5, 12.8 → 8.7). Only
// releases in NVIDIA's table are known: guessing a newer mapping could emit PTX that a
// compatible driver rejects, failing good hosts.
func PTXISAFor(cuda Version) (ISA, error) {
	for _, row := range ptxISAByCUDA {
		if row.cuda == cuda {
			return row.isa, nil
		}
	}
	first, last := ptxISAByCUDA[0].cuda, ptxISAByCUDA[len(ptxISAByCUDA)-1].cuda
	return ISA{}, fmt.Errorf("CUDA %s has no known PTX ISA version (known: %s to %s)", cuda, first, last)
}

// newestPTXISAUpTo returns the ISA of the newest known release not newer than cuda. It serves
// NVRTC, whose exact release may be newer than the table; its output ISA is then at least this.
func newestPTXISAUpTo(cuda Version) (ISA, bool) {
	var found ISA
	ok := false
	for _, row := range ptxISAByCUDA {
		if cuda.AtLeast(row.cuda) {
			found, ok = row.isa, true
		}
	}
	return found, ok
}

// ComputeCapability is a device's compute capability, e.g. 8.9 for an RTX 4090.
type ComputeCapability struct {
	Major, Minor int
}

// String formats the capability as "MAJOR.MINOR".
func (c ComputeCapability) String() string { return fmt.Sprintf("%d.%d", c.Major, c.Minor) }

// SM is the PTX target name, e.g. "sm_89".
func (c ComputeCapability) SM() string { return fmt.Sprintf("sm_%d%d", c.Major, c.Minor) }

// Compute is the NVRTC virtual architecture name, e.g. "compute_89".
func (c ComputeCapability) Compute() string { return fmt.Sprintf("compute_%d%d", c.Major, c.Minor) }

// AtLeast reports whether c is d or newer.
func (c ComputeCapability) AtLeast(d ComputeCapability) bool {
	return c.Major > d.Major || (c.Major == d.Major && c.Minor >= d.Minor)
}

// MarshalText writes the capability as "MAJOR.MINOR".
func (c ComputeCapability) MarshalText() ([]byte, error) { return []byte(c.String()), nil }

// UnmarshalText parses "MAJOR.MINOR", so reports can be read back.
func (c *ComputeCapability) UnmarshalText(b []byte) error {
	isa, err := parseISA(string(b)) // same shape: one or two digits, a dot, one or two digits
	if err != nil {
		return fmt.Errorf("compute capability %q: want MAJOR.MINOR such as 8.9", b)
	}
	*c = ComputeCapability{Major: isa.Major, Minor: isa.Minor}
	return nil
}

// ptxTargets lists the portable PTX targets (sm_XY, never the architecture-specific sm_XYa or
// family sm_XYf, whose code runs on one chip or family only) with the first PTX ISA that knows
// each, from the "Target ISA Notes" of NVIDIA's PTX ISA documentation (the same minimums as
// LLVM's NVPTX.td). sm_101 is left out: CUDA 13 renamed it sm_110, and its devices run sm_100 code.
var ptxTargets = []struct {
	cc     ComputeCapability
	minISA ISA
}{
	{ComputeCapability{5, 0}, ISA{4, 0}},
	{ComputeCapability{5, 2}, ISA{4, 0}},
	{ComputeCapability{5, 3}, ISA{4, 2}},
	{ComputeCapability{6, 0}, ISA{5, 0}},
	{ComputeCapability{6, 1}, ISA{5, 0}},
	{ComputeCapability{6, 2}, ISA{5, 0}},
	{ComputeCapability{7, 0}, ISA{6, 0}},
	{ComputeCapability{7, 2}, ISA{6, 1}},
	{ComputeCapability{7, 5}, ISA{6, 3}},
	{ComputeCapability{8, 0}, ISA{7, 0}},
	{ComputeCapability{8, 6}, ISA{7, 1}},
	{ComputeCapability{8, 7}, ISA{7, 4}},
	{ComputeCapability{8, 8}, ISA{9, 0}},
	{ComputeCapability{8, 9}, ISA{7, 8}},
	{ComputeCapability{9, 0}, ISA{7, 8}},
	{ComputeCapability{10, 0}, ISA{8, 6}},
	{ComputeCapability{10, 3}, ISA{8, 8}},
	{ComputeCapability{11, 0}, ISA{9, 0}},
	{ComputeCapability{12, 0}, ISA{8, 7}},
	{ComputeCapability{12, 1}, ISA{8, 8}},
}

// PTXTarget picks the ".target" for a module of ISA isa on a device of capability device: the
// device's own sm_XY when isa knows it, otherwise the newest portable target isa knows that is
// not above the device. PTX is forward compatible (the driver JIT-compiles sm_XY code for any
// device of capability ≥ X.Y), so the capped target still runs, while a target the ISA does not
// know would be refused by the JIT as invalid PTX, blaming a good host; an RTX 5090 (12.0) under
// the 12.6 tier (ISA 8.5) therefore gets sm_90. Devices below sm_50, which no CUDA 12 driver
// supports, are refused with ErrDeviceUnsupported.
func PTXTarget(device ComputeCapability, isa ISA) (ComputeCapability, error) {
	var best ComputeCapability
	found := false
	for _, t := range ptxTargets {
		if device.AtLeast(t.cc) && isa.AtLeast(t.minISA) && (!found || t.cc.AtLeast(best)) {
			best, found = t.cc, true
		}
	}
	if !found {
		return ComputeCapability{}, fmt.Errorf("%w: compute capability %s with PTX ISA %s has no portable target (oldest is sm_50)",
			ErrDeviceUnsupported, device, isa)
	}
	return best, nil
}

// KernelPTX returns the magic kernel as PTX text of ISA isa for target, the module the proof
// loads with cuModuleLoadData. It is the code NVCC emits for KernelSource, written out by hand so
// that the proof needs no compiler and its ISA is exactly the tier's.
func KernelPTX(isa ISA, target ComputeCapability) string {
	return fmt.Sprintf(`//
// cuda-smoke magic kernel: *out = in + 0x%08X
//
.version %s
.target %s
.address_size 64

.visible .entry %s(
	.param .u64 %[5]s_param_0,
	.param .u32 %[5]s_param_1
)
{
	.reg .b32 	%%r<3>;
	.reg .b64 	%%rd<3>;

	ld.param.u64 	%%rd1, [%[5]s_param_0];
	ld.param.u32 	%%r1, [%[5]s_param_1];
	cvta.to.global.u64 	%%rd2, %%rd1;
	add.u32 	%%r2, %%r1, %[6]d;
	st.global.u32 	[%%rd2], %%r2;
	ret;
}
`, MagicAddend, isa, target.SM(), KernelName, KernelName, MagicAddend)
}

// PTXHeader is what a PTX module's leading directives declare.
type PTXHeader struct {
	// ISA is the ".version" directive.
	ISA ISA
	// Target is the first ".target" entry as written, e.g. "sm_89" or "sm_90a".
	Target string
	// TargetCC is Target's compute capability (sm_120 → 12.0).
	TargetCC ComputeCapability
}

// errPTXHeader is wrapped by every ParsePTXHeader error so callers can tell malformed PTX apart.
var errPTXHeader = errors.New("malformed PTX header")

// ParsePTXHeader reads the ".version" and ".target" directives that open a PTX module, as NVRTC
// writes them. Comments are skipped; ".version" must be the first directive, as the PTX ISA
// requires.
func ParsePTXHeader(ptx string) (PTXHeader, error) {
	var h PTXHeader
	sawVersion, sawTarget := false, false
	inBlockComment := false
	for line := range strings.Lines(ptx) {
		line = stripPTXComments(line, &inBlockComment)
		fields := strings.Fields(line)
		if len(fields) == 0 {
			continue
		}
		switch {
		case fields[0] == ".version" && !sawVersion:
			if len(fields) != 2 {
				return PTXHeader{}, fmt.Errorf("%w: %q: want .version X.Y", errPTXHeader, strings.TrimSpace(line))
			}
			isa, err := parseISA(fields[1])
			if err != nil {
				return PTXHeader{}, err
			}
			h.ISA, sawVersion = isa, true
		case !sawVersion:
			return PTXHeader{}, fmt.Errorf("%w: first directive is %q, want .version", errPTXHeader, fields[0])
		case fields[0] == ".target":
			rest := strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(line), ".target"))
			first, _, _ := strings.Cut(rest, ",")
			target := strings.TrimSpace(first)
			cc, err := parseSMTarget(target)
			if err != nil {
				return PTXHeader{}, err
			}
			h.Target, h.TargetCC, sawTarget = target, cc, true
			return h, nil
		}
	}
	if !sawVersion {
		return PTXHeader{}, fmt.Errorf("%w: no .version directive", errPTXHeader)
	}
	if !sawTarget {
		return PTXHeader{}, fmt.Errorf("%w: no .target directive", errPTXHeader)
	}
	return h, nil
}

// stripPTXComments removes // and /* */ comments from one line, tracking block comments that
// span lines.
func stripPTXComments(line string, inBlock *bool) string {
	var out strings.Builder
	for len(line) > 0 {
		if *inBlock {
			_, after, found := strings.Cut(line, "*/")
			if !found {
				return out.String()
			}
			line, *inBlock = after, false
			continue
		}
		lineIdx := strings.Index(line, "//")
		blockIdx := strings.Index(line, "/*")
		switch {
		case lineIdx >= 0 && (blockIdx < 0 || lineIdx < blockIdx):
			out.WriteString(line[:lineIdx])
			return out.String()
		case blockIdx >= 0:
			out.WriteString(line[:blockIdx])
			out.WriteByte(' ')
			line, *inBlock = line[blockIdx+2:], true
		default:
			out.WriteString(line)
			return out.String()
		}
	}
	return out.String()
}

// parseISA parses "X.Y" with one- or two-digit parts.
func parseISA(s string) (ISA, error) {
	majorText, minorText, ok := strings.Cut(s, ".")
	major, errMajor := parseSmallDecimal(majorText, 2)
	minor, errMinor := parseSmallDecimal(minorText, 2)
	if !ok || errMajor != nil || errMinor != nil {
		return ISA{}, fmt.Errorf("%w: .version %q: want X.Y such as 8.7", errPTXHeader, s)
	}
	return ISA{Major: major, Minor: minor}, nil
}

// parseSMTarget parses "sm_XY" with an optional "a" or "f" suffix into a compute capability:
// the last digit is the minor, the rest the major (sm_89 → 8.9, sm_120 → 12.0).
func parseSMTarget(s string) (ComputeCapability, error) {
	digits, ok := strings.CutPrefix(s, "sm_")
	digits = strings.TrimRight(digits, "af")
	n, err := parseSmallDecimal(digits, 3)
	if !ok || err != nil || len(digits) < 2 {
		return ComputeCapability{}, fmt.Errorf("%w: .target %q: want sm_XY such as sm_89", errPTXHeader, s)
	}
	return ComputeCapability{Major: n / 10, Minor: n % 10}, nil
}

// parseSmallDecimal parses 1 to maxDigits decimal digits, no sign.
func parseSmallDecimal(s string, maxDigits int) (int, error) {
	if s == "" || len(s) > maxDigits {
		return 0, strconv.ErrSyntax
	}
	for _, c := range s {
		if c < '0' || c > '9' {
			return 0, strconv.ErrSyntax
		}
	}
	return strconv.Atoi(s)
}
