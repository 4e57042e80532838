package runpod

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"

	"github.com/org/runpod-gpu/pkg/money"
)

// Balance is the account's credit as RunPod's GraphQL API reports it (REST
// v2 has no account balance): what is left, what running pods spend per
// hour, and the account's spend limit per hour. RunPod's JSON floats are read
// into money at decode.
type Balance struct {
	ClientBalance     money.Amount `json:"clientBalance"`
	CurrentSpendPerHr money.Rate   `json:"currentSpendPerHr"`
	SpendLimit        money.Rate   `json:"spendLimit"`
}

// balanceQuery reads the account's credit.
const balanceQuery = `query myself { myself { clientBalance currentSpendPerHr spendLimit } }`

// GetBalance reads the account's balance (POST /graphql on the API host,
// the query myself). A refused key is ErrUnauthorized, as for every call;
// GraphQL's own errors (HTTP 200 with an errors list) are a malformed answer
// naming them.
func (c *Client) GetBalance(ctx context.Context) (Balance, error) {
	cl := call{op: "read the account balance", method: http.MethodPost, path: "/graphql", body: map[string]string{"query": balanceQuery}}
	status, data, err := c.send(ctx, cl)
	if err != nil {
		return Balance{}, err
	}
	var out struct {
		Data *struct {
			Myself *Balance `json:"myself"`
		} `json:"data"`
		Errors []struct {
			Message string `json:"message"`
		} `json:"errors"`
	}
	if err := json.Unmarshal(data, &out); err != nil {
		return Balance{}, c.malformed(cl.op, status, err)
	}
	if len(out.Errors) > 0 {
		msgs := make([]string, len(out.Errors))
		for i, e := range out.Errors {
			msgs[i] = e.Message
		}
		return Balance{}, c.malformed(cl.op, status, errors.New("GraphQL: "+strings.Join(msgs, "; ")))
	}
	if out.Data == nil || out.Data.Myself == nil {
		return Balance{}, c.malformed(cl.op, status, errors.New(`no "data.myself" in the answer`))
	}
	return *out.Data.Myself, nil
}
