package callers

import (
	"fmt"
	"strings"
)

// Manifest is a GitHub App manifest (GitHub's "Registering a GitHub App from
// a manifest"): posted as the form field "manifest" to
// https://github.com/settings/apps/new (or an organization's
// /organizations/ORG/settings/apps/new), it fills in the new App's
// registration; GitHub then sends the browser to RedirectURL with a code
// that POST /app-manifests/{code}/conversions trades, within an hour, for
// the App's id and private key.
type Manifest struct {
	Name               string            `json:"name"`
	URL                string            `json:"url"`
	Description        string            `json:"description"`
	Public             bool              `json:"public"`
	HookAttributes     HookAttributes    `json:"hook_attributes"`
	RedirectURL        string            `json:"redirect_url,omitempty"`
	DefaultPermissions map[string]string `json:"default_permissions"`
	DefaultEvents      []string          `json:"default_events"`
}

// HookAttributes configures the App's webhook: the lane needs none.
type HookAttributes struct {
	URL    string `json:"url"`
	Active bool   `json:"active"`
}

// ManifestOptions say which App(s) to describe.
type ManifestOptions struct {
	// Name is the App's name (unique on GitHub); the runner App's gets " runners".
	Name string
	// Suite is the copy the callers use, OWNER/runpod-gpu: the App's homepage.
	Suite string
	// Split describes the two-App split: a checks App and a runner App.
	Split bool
	// OrgRunners adds organization self-hosted runners: write for the App
	// that provisions (runner-scope: org).
	OrgRunners bool
	// RedirectURL receives the code after the App is created ("" for none).
	RedirectURL string
}

// Manifests returns the one App's manifest, or the checks App's and the
// runner App's for the split, each with exactly the permissions its jobs use.
func Manifests(o ManifestOptions) []Manifest {
	home := "https://github.com/" + strings.TrimSuffix(o.Suite, "/")
	manifest := func(name, what string, perms Levels) Manifest {
		p := map[string]string{}
		for k, v := range perms {
			p[k] = v
		}
		return Manifest{
			Name: name, URL: home, Description: what, Public: false,
			HookAttributes: HookAttributes{URL: home, Active: false}, RedirectURL: o.RedirectURL,
			DefaultPermissions: p, DefaultEvents: []string{},
		}
	}
	provisioning := func(l Levels) Levels {
		out := Levels{}
		for k, v := range l {
			out[k] = v
		}
		if o.OrgRunners {
			for k, v := range OrgRunners {
				out[k] = v
			}
		}
		return out
	}
	if !o.Split {
		return []Manifest{manifest(o.Name, "GPU CI on RunPod (runpod-gpu): mints single-use runners, publishes the CI GPU gate, reaps orphans.", provisioning(OneApp))}
	}
	return []Manifest{
		manifest(o.Name, "GPU CI on RunPod (runpod-gpu): publishes the CI GPU gate (the checks App, app-id).", ChecksApp),
		manifest(fmt.Sprintf("%s runners", o.Name), "GPU CI on RunPod (runpod-gpu): mints and removes single-use runners (the runner App, runner-app-id).", provisioning(RunnerApp)),
	}
}

// CreationURL is where the manifest form is posted: the user's own
// settings, or an organization's.
func CreationURL(webURL, org, state string) string {
	base := strings.TrimRight(webURL, "/") + "/settings/apps/new"
	if org != "" {
		base = strings.TrimRight(webURL, "/") + "/organizations/" + org + "/settings/apps/new"
	}
	if state != "" {
		base += "?state=" + state
	}
	return base
}
