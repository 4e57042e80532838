package githubsim

import (
	"encoding/base64"
	"strconv"
	"time"
)

// GitHub writes timestamps in UTC with whole seconds.
const timeLayout = "2006-01-02T15:04:05Z"

func stamp(t time.Time) string { return t.UTC().Format(timeLayout) }

// stampOrNull is null for the zero time, as GitHub shows a time that has not happened yet.
func stampOrNull(t time.Time) *string {
	if t.IsZero() {
		return nil
	}
	s := stamp(t)
	return &s
}

func strOrNull(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

func idOrNull(id int64) *int64 {
	if id == 0 {
		return nil
	}
	return &id
}

// nodeID makes a GraphQL-style global id; opaque to clients, stable for an object.
func nodeID(prefix string, id int64) string {
	return prefix + "_" + base64.RawURLEncoding.EncodeToString([]byte(strconv.FormatInt(id, 10)))
}

type userJSON struct {
	Login     string `json:"login"`
	ID        int64  `json:"id"`
	NodeID    string `json:"node_id"`
	Type      string `json:"type"`
	SiteAdmin bool   `json:"site_admin"`
	URL       string `json:"url"`
	HTMLURL   string `json:"html_url"`
}

type repoJSON struct {
	ID            int64    `json:"id"`
	NodeID        string   `json:"node_id"`
	Name          string   `json:"name"`
	FullName      string   `json:"full_name"`
	Private       bool     `json:"private"`
	Owner         userJSON `json:"owner"`
	HTMLURL       string   `json:"html_url"`
	URL           string   `json:"url"`
	Fork          bool     `json:"fork"`
	DefaultBranch string   `json:"default_branch"`
}
