package runpodsim

import (
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"regexp"
	"strings"
	"time"
)

// RunPod's GraphQL endpoint (POST /graphql on the API host, the key as a
// bearer token) answers the account query tools read the balance with, and
// the pod query that names the machine a pod was placed on (REST v2's pod
// has none):
//
//	query { myself { clientBalance currentSpendPerHr spendLimit } }
//	query q($input: PodFilter!) { pod(input: $input) { id machineId } }
//
// The pod's id comes from the variables or inline (pod(input: {podId:
// "…"})); its machineId is the simulated host's id. Nothing else of the
// GraphQL schema is simulated: another query is answered as GraphQL answers
// an unknown field, with HTTP 200 and an errors list.

// myselfFields are the User fields the simulator knows.
var myselfFields = map[string]bool{
	"id": true, "email": true, "clientBalance": true, "currentSpendPerHr": true, "spendLimit": true,
	"underBalance": true, "minBalance": true,
}

// myselfSelection reads the fields selected under myself { … }.
var myselfSelection = regexp.MustCompile(`\bmyself\s*\{([^{}]*)\}`)

// WithSpendLimit sets the account's spend limit in USD per hour (default 80),
// as GraphQL's myself.spendLimit shows it.
func WithSpendLimit(usdPerHour float64) Option { return func(c *config) { c.spendLimit = usdPerHour } }

type graphqlError struct {
	Message string `json:"message"`
}

func graphqlErrors(status int, format string, args ...any) response {
	return ok(status, map[string]any{"errors": []graphqlError{{Message: fmt.Sprintf(format, args...)}}, "data": nil})
}

func (s *Server) graphql(_ *http.Request, body []byte, now time.Time) response {
	var req struct {
		Query     string `json:"query"`
		Variables struct {
			Input struct {
				PodID string `json:"podId"`
			} `json:"input"`
		} `json:"variables"`
	}
	if err := json.Unmarshal(body, &req); err != nil || strings.TrimSpace(req.Query) == "" {
		return graphqlErrors(http.StatusBadRequest, "Must provide query string.")
	}
	if m := podSelection.FindStringSubmatch(req.Query); m != nil {
		id := req.Variables.Input.PodID
		if inline := inlinePodID.FindStringSubmatch(m[1]); inline != nil {
			id = inline[1]
		}
		return s.podQuery(id, m[2])
	}
	m := myselfSelection.FindStringSubmatch(req.Query)
	if m == nil {
		return graphqlErrors(http.StatusOK, "the simulator answers only the myself and pod queries")
	}
	fields := strings.Fields(strings.NewReplacer(",", " ").Replace(m[1]))
	out := map[string]any{}
	for _, f := range fields {
		if !myselfFields[f] {
			return graphqlErrors(http.StatusBadRequest, "Cannot query field %q on type \"User\".", f)
		}
		out[f] = s.myselfField(f, now)
	}
	return ok(http.StatusOK, map[string]any{"data": map[string]any{"myself": out}})
}

// podSelection reads pod(input: …) { … }: the input, then the fields.
var podSelection = regexp.MustCompile(`\bpod\s*\(\s*input\s*:\s*(\$\w+|\{[^{}]*\})\s*\)\s*\{([^{}]*)\}`)

// inlinePodID reads an inline input's podId.
var inlinePodID = regexp.MustCompile(`podId\s*:\s*"([^"]*)"`)

// podQuery answers the pod query: the pod's id and the machine (host) it
// was placed on; a pod no create made is null, with an error, as GraphQL
// answers a missing pod.
func (s *Server) podQuery(id, selection string) response {
	p := s.podByID[id]
	if p == nil {
		return ok(http.StatusOK, map[string]any{"errors": []graphqlError{{Message: "pod not found"}}, "data": map[string]any{"pod": nil}})
	}
	out := map[string]any{}
	for _, f := range strings.Fields(strings.NewReplacer(",", " ").Replace(selection)) {
		switch f {
		case "id":
			out[f] = p.id
		case "machineId":
			out[f] = p.host.profile.ID
		default:
			return graphqlErrors(http.StatusBadRequest, "Cannot query field %q on type \"Pod\".", f)
		}
	}
	return ok(http.StatusOK, map[string]any{"data": map[string]any{"pod": out}})
}

// myselfField is one field of the account as the simulation has it now.
func (s *Server) myselfField(name string, now time.Time) any {
	cents := func(v float64) float64 { return math.Round(v*100) / 100 }
	switch name {
	case "id":
		return "sim-user"
	case "email":
		return "gpu-ci@example.com"
	case "clientBalance":
		return cents(max(s.cfg.balance-s.spent(now), 0))
	case "currentSpendPerHr":
		perHour := 0.0
		for _, p := range s.pods {
			if p.billing {
				perHour += p.price
			}
		}
		return cents(perHour)
	case "spendLimit":
		return s.cfg.spendLimit
	case "underBalance":
		return s.cfg.balance-s.spent(now) <= 0
	default: // minBalance
		return 0
	}
}
