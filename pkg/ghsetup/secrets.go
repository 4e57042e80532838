package ghsetup

import (
	"context"
	"encoding/base64"
	"fmt"
	"maps"
	"net/http"
	"net/url"
	"slices"

	"github.com/google/go-github/v66/github"
	"golang.org/x/crypto/nacl/box"
)

// planSecrets plans the environment secrets that are missing (or all of
// them with ReplaceSecrets: GitHub never shows a value to compare).
func (p *Planner) planSecrets(ctx context.Context, plan *Plan, req Request, envExists bool) error {
	have := map[string]bool{}
	if envExists {
		names, err := p.environmentSecretNames(ctx)
		if err != nil {
			return err
		}
		for _, n := range names {
			have[n] = true
		}
	}
	for _, name := range slices.Sorted(maps.Keys(req.Secrets)) {
		if have[name] && !req.ReplaceSecrets {
			continue
		}
		what := fmt.Sprintf("set the secret %s of the environment %s (sealed with its public key)", name, Environment)
		if have[name] {
			what = fmt.Sprintf("replace the secret %s of the environment %s (sealed with its public key)", name, Environment)
		}
		value := req.Secrets[name]
		p.redactor.Add(value)
		plan.add("secret", what, func(ctx context.Context) error { return p.putSecret(ctx, name, value) })
	}
	return nil
}

// envPath is the environment's API path, by repository name (go-github v66
// addresses environment secrets by repository id).
func (p *Planner) envPath() string {
	return fmt.Sprintf("repos/%s/%s/environments/%s", url.PathEscape(p.owner), url.PathEscape(p.repo), url.PathEscape(Environment))
}

// environmentSecretNames lists the environment's secrets (names only).
func (p *Planner) environmentSecretNames(ctx context.Context) ([]string, error) {
	var names []string
	for page := 1; page <= 10; page++ {
		req, err := p.gh.NewRequest(http.MethodGet, fmt.Sprintf("%s/secrets?per_page=100&page=%d", p.envPath(), page), nil)
		if err != nil {
			return nil, err
		}
		var list github.Secrets
		resp, err := p.gh.Do(ctx, req, &list)
		if err != nil {
			return nil, p.stepErr("secret", err)
		}
		for _, s := range list.Secrets {
			names = append(names, s.Name)
		}
		if resp.NextPage == 0 {
			break
		}
	}
	return names, nil
}

// putSecret seals value with the environment's public key (libsodium's
// sealed box, as GitHub requires) and sets the secret.
func (p *Planner) putSecret(ctx context.Context, name, value string) error {
	req, err := p.gh.NewRequest(http.MethodGet, p.envPath()+"/secrets/public-key", nil)
	if err != nil {
		return err
	}
	var key github.PublicKey
	if _, err := p.gh.Do(ctx, req, &key); err != nil {
		return p.stepErr("secret", err)
	}
	raw, err := base64.StdEncoding.DecodeString(key.GetKey())
	if err != nil || len(raw) != 32 {
		return &StepError{Step: "secret", Err: fmt.Errorf("the environment's public key is not a base64 32-byte key")}
	}
	var recipient [32]byte
	copy(recipient[:], raw)
	sealed, err := box.SealAnonymous(nil, []byte(value), &recipient, p.random)
	if err != nil {
		return &StepError{Step: "secret", Err: fmt.Errorf("seal %s: %v", name, err)}
	}
	body := map[string]string{"encrypted_value": base64.StdEncoding.EncodeToString(sealed), "key_id": key.GetKeyID()}
	req, err = p.gh.NewRequest(http.MethodPut, p.envPath()+"/secrets/"+url.PathEscape(name), body)
	if err != nil {
		return err
	}
	_, err = p.gh.Do(ctx, req, nil)
	return p.stepErr("secret", err)
}
