package githubsim

import (
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"net/http"
	"regexp"
	"strings"
	"time"
)

// The manifest flow (GitHub's "Registering a GitHub App from a manifest"):
// the browser posts a manifest to /settings/apps/new, the user clicks
// "Create GitHub App", GitHub registers the App and sends the browser to the
// manifest's redirect_url with a code, and POST
// /app-manifests/{code}/conversions (no authentication) trades the code,
// once and within an hour, for the App's id, slug and private key.

// manifestCodeLifetime is how long a code can be converted.
const manifestCodeLifetime = time.Hour

// pendingApp is a created App whose code is not converted yet.
type pendingApp struct {
	app      App
	name     string
	owner    string
	pem      []byte
	perms    map[string]string
	expires  time.Time
	redirect string
}

var slugUnsafe = regexp.MustCompile(`[^a-z0-9]+`)

// CreateAppFromManifest is the user clicking "Create GitHub App" on the
// manifest form, as owner: the App is registered with a new private key and
// the returned code, with the manifest's redirect_url, is where GitHub sends
// the browser. A manifest GitHub would refuse is an error.
func (s *Server) CreateAppFromManifest(owner string, manifest []byte) (code, redirectURL string, err error) {
	var m struct {
		Name           string                `json:"name"`
		URL            string                `json:"url"`
		RedirectURL    string                `json:"redirect_url"`
		HookAttributes *struct{ URL string } `json:"hook_attributes"`
		Permissions    map[string]string     `json:"default_permissions"`
	}
	if err := json.Unmarshal(manifest, &m); err != nil {
		return "", "", invalid("manifest: %v", err)
	}
	switch {
	case strings.TrimSpace(m.Name) == "":
		return "", "", invalid("manifest: name is required")
	case !strings.HasPrefix(m.URL, "https://") && !strings.HasPrefix(m.URL, "http://"):
		return "", "", invalid("manifest: url %q must be a full URL", m.URL)
	case m.HookAttributes != nil && m.HookAttributes.URL == "":
		return "", "", invalid("manifest: hook_attributes.url is required")
	}
	for scope, level := range m.Permissions {
		if level != "read" && level != "write" {
			return "", "", invalid("manifest: permission %s: %q is not read or write", scope, level)
		}
	}
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return "", "", err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	slug := strings.Trim(slugUnsafe.ReplaceAllString(strings.ToLower(m.Name), "-"), "-")
	app := App{ID: s.nextID(), Slug: slug, PublicKey: &key.PublicKey}
	s.apps[app.ID] = app
	code = s.randomString(20)
	if s.pendingApps == nil {
		s.pendingApps = map[string]*pendingApp{}
	}
	s.pendingApps[code] = &pendingApp{app: app, name: m.Name, owner: owner, perms: m.Permissions, redirect: m.RedirectURL,
		pem:     pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(key)}),
		expires: s.clock.Now().Add(manifestCodeLifetime)}
	return code, m.RedirectURL, nil
}

func (s *Server) manifestRoutes() {
	s.handle("POST /app-manifests/{code}/conversions", authNone, s.convertManifestCode)
}

// convertManifestCode trades a code for the App's credentials, once.
func (s *Server) convertManifestCode(c *call) error {
	code := c.r.PathValue("code")
	p, ok := s.pendingApps[code]
	if !ok || !c.now.Before(p.expires) {
		return notFound("manifest code")
	}
	delete(s.pendingApps, code)
	c.writeJSON(http.StatusCreated, map[string]any{
		"id": p.app.ID, "slug": p.app.Slug, "node_id": nodeID("A", p.app.ID), "name": p.name,
		"owner":       map[string]any{"login": p.owner},
		"html_url":    s.webURL + "/apps/" + p.app.Slug,
		"permissions": p.perms, "events": []string{},
		"created_at": stamp(c.now), "updated_at": stamp(c.now),
		"client_id": "Iv1." + s.randomString(16), "client_secret": s.randomString(40),
		"webhook_secret": nil, "pem": string(p.pem),
	})
	return nil
}
