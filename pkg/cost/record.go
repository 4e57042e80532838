package cost

import (
	"encoding/json"
	"errors"

	"github.com/org/runpod-gpu/pkg/wire"
)

// RecordFormat names the shape of a pod record.
type RecordFormat string

// Record formats DecodePod recognises.
const (
	// FormatV2 is a REST v2 Pod: RFC 3339 startedAt and a number cost.
	FormatV2 RecordFormat = "v2"
	// FormatV1 is a saved REST v1 pod: Go-layout lastStartedAt and costPerHr as
	// a string or number, with adjustedCostPerHr after savings plans.
	FormatV1 RecordFormat = "v1"
)

// Pod is what cost reporting needs from a RunPod pod record. Start comes only
// from the provider's start field; createdAt is deliberately never read.
type Pod struct {
	ID     string
	Name   string
	GPU    string // GPU type id, e.g. "NVIDIA GeForce RTX 4090"; "" when the record has none
	Status string // v2 status or v1 desiredStatus, as given
	Start  wire.Time
	Price  Price
	Format RecordFormat
}

// ErrNotPodRecord means the JSON object has neither v2 nor v1 cost keys.
var ErrNotPodRecord = errors.New("not a RunPod pod record: want v2 keys startedAt/cost or v1 keys lastStartedAt/costPerHr")

// DecodePod decodes a pod record of either format: v2 when it has startedAt or
// cost, else v1 when it has lastStartedAt, costPerHr, adjustedCostPerHr or
// desiredStatus.
func DecodePod(data []byte) (Pod, error) {
	fields, err := objectFields(data)
	if err != nil {
		return Pod{}, err
	}
	switch {
	case hasAny(fields, "startedAt", "cost"):
		return decodeV2(fields)
	case hasAny(fields, "lastStartedAt", "costPerHr", "adjustedCostPerHr", "desiredStatus"):
		return decodeV1(fields)
	}
	return Pod{}, ErrNotPodRecord
}

// DecodeV2Pod decodes a REST v2 Pod. Its price is cost when positive; cost
// reads 0 once a pod is EXITED or TERMINATED, so 0 is unknown, not free.
func DecodeV2Pod(data []byte) (Pod, error) {
	fields, err := objectFields(data)
	if err != nil {
		return Pod{}, err
	}
	return decodeV2(fields)
}

// DecodeV1Record decodes a saved REST v1 pod record. Its price is
// adjustedCostPerHr when positive, else costPerHr (string or number) when positive.
func DecodeV1Record(data []byte) (Pod, error) {
	fields, err := objectFields(data)
	if err != nil {
		return Pod{}, err
	}
	return decodeV1(fields)
}

func decodeV2(fields map[string]json.RawMessage) (Pod, error) {
	pod := Pod{Format: FormatV2}
	if err := decodeIdentity(fields, "status", &pod); err != nil {
		return Pod{}, err
	}
	if err := decodeField(fields, "startedAt", &pod.Start, "an RFC 3339 timestamp or null"); err != nil {
		return Pod{}, err
	}
	var perHour wire.Float
	if err := decodeField(fields, "cost", &perHour, "a number"); err != nil {
		return Pod{}, err
	}
	if perHour < 0 {
		return Pod{}, fieldErr("cost", invalid("%v: want a non-negative price per hour", float64(perHour)))
	}
	pod.Price = KnownPrice(float64(perHour), "v2 cost")
	if !pod.Price.Known {
		pod.Price.Source = "v2 cost missing or 0; it reads 0 once the pod stops, so capture it while RUNNING"
	}
	return pod, nil
}

func decodeV1(fields map[string]json.RawMessage) (Pod, error) {
	pod := Pod{Format: FormatV1}
	if err := decodeIdentity(fields, "desiredStatus", &pod); err != nil {
		return Pod{}, err
	}
	if err := decodeField(fields, "lastStartedAt", &pod.Start, "a timestamp (Go layout or RFC 3339) or null"); err != nil {
		return Pod{}, err
	}
	if pod.GPU == "" {
		var machine struct {
			GPUTypeID *string `json:"gpuTypeId"`
		}
		if err := decodeField(fields, "machine", &machine, `an object {"gpuTypeId": string}`); err != nil {
			return Pod{}, err
		}
		if machine.GPUTypeID != nil {
			pod.GPU = *machine.GPUTypeID
		}
	}
	var adjusted, listed wire.Float
	if err := decodeField(fields, "adjustedCostPerHr", &adjusted, "a number or numeric string"); err != nil {
		return Pod{}, err
	}
	if err := decodeField(fields, "costPerHr", &listed, "a number or numeric string"); err != nil {
		return Pod{}, err
	}
	for _, price := range []struct {
		key   string
		value wire.Float
	}{{"adjustedCostPerHr", adjusted}, {"costPerHr", listed}} {
		if price.value < 0 {
			return Pod{}, fieldErr(price.key, invalid("%v: want a non-negative price per hour", float64(price.value)))
		}
	}
	pod.Price = FirstKnown(
		KnownPrice(float64(adjusted), "v1 adjustedCostPerHr"),
		KnownPrice(float64(listed), "v1 costPerHr"),
		Price{Source: "v1 adjustedCostPerHr and costPerHr missing or 0"},
	)
	return pod, nil
}

// decodeIdentity reads id, name, the status key and gpu.id, all optional.
func decodeIdentity(fields map[string]json.RawMessage, statusKey string, pod *Pod) error {
	for _, f := range []struct {
		key string
		dst *string
	}{{"id", &pod.ID}, {"name", &pod.Name}, {statusKey, &pod.Status}} {
		if err := decodeField(fields, f.key, f.dst, "a string"); err != nil {
			return err
		}
	}
	var gpu struct {
		ID *string `json:"id"`
	}
	if err := decodeField(fields, "gpu", &gpu, `an object {"id": string}`); err != nil {
		return err
	}
	if gpu.ID != nil {
		pod.GPU = *gpu.ID
	}
	return nil
}

func hasAny(fields map[string]json.RawMessage, keys ...string) bool {
	for _, k := range keys {
		if _, ok := fields[k]; ok {
			return true
		}
	}
	return false
}
