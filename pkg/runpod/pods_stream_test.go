package runpod

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"
)

// FuzzPodsStreamMatchesPage: decoding a page as it streams gives exactly what
// decoding the whole page as text gives (pods, cursor, success or failure).
func FuzzPodsStreamMatchesPage(f *testing.F) {
	for _, seed := range []string{
		`{"pods":[{"id":"a","desiredStatus":"RUNNING"},{"id":"b"}],"nextCursor":"c1"}`,
		`{"pods":[],"nextCursor":null}`, `[{"id":"a"}]`, `{"items":[]}`, `{"pods":null}`,
		`{"pods":[{"id":"a"}],"pods":[{"id":"b"}]}`, `{"PODS":[{"id":"a"}],"NextCursor":"x"}`,
		`{"pods":[{"id":"a"}]} x`, `{"pods":[{"id":7}]}`, `null`, `"s"`, `{"pods":[null]}`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		wantPods, wantNext, wantErr := decodePodsPage(body)
		gotPods, gotNext, gotErr := decodePodsStream(bytes.NewReader(body), nil)
		if (wantErr == nil) != (gotErr == nil) {
			t.Fatalf("whole page: %v; streamed: %v", wantErr, gotErr)
		}
		if wantErr != nil {
			return
		}
		if wantNext != gotNext {
			t.Fatalf("cursor %q, streamed %q", wantNext, gotNext)
		}
		if len(wantPods) == 0 && len(gotPods) == 0 {
			return
		}
		want, werr := json.Marshal(wantPods)
		got, gerr := json.Marshal(gotPods)
		if werr != nil || gerr != nil || !bytes.Equal(want, got) {
			t.Fatalf("pods differ: page %s (%v), streamed %s (%v)", want, werr, got, gerr)
		}
	})
}

// TestListPodsFollowsEveryPage: the listing follows the cursor past the old
// 50-page bound (an error above 25,000 pods at 500 a page) to the end.
func TestListPodsFollowsEveryPage(t *testing.T) {
	const pages = 120
	fake := newFake(t)
	fake.handle("GET /v2/pods", func(w http.ResponseWriter, r *http.Request) {
		n, _ := strconv.Atoi(r.URL.Query().Get("cursor"))
		next := `"` + strconv.Itoa(n+1) + `"`
		if n+1 == pages {
			next = "null"
		}
		writeRaw(w, 200, fmt.Sprintf(`{"pods":[{"id":"p%d"},{"id":"q%d"}],"nextCursor":%s}`, n, n, next))
	})
	client, _ := fake.client()
	pods, err := client.ListPods(context.Background(), ListPodsQuery{})
	assert.NilError(t, err)
	assert.Check(t, is.Len(pods, 2*pages))
	assert.Check(t, is.Len(fake.received(), pages))
	assert.Equal(t, pods[len(pods)-1].ID, fmt.Sprintf("q%d", pages-1))
}

// TestListPodsIsBoundedByTime: a listing that cannot finish within the
// client's budget (here the third page never arrives) fails with what it read,
// never returns part of the list, and does not wait for the caller's context.
func TestListPodsIsBoundedByTime(t *testing.T) {
	fake := newFake(t)
	fake.handle("GET /v2/pods", func(w http.ResponseWriter, r *http.Request) {
		n, _ := strconv.Atoi(r.URL.Query().Get("cursor"))
		if n == 2 {
			<-r.Context().Done() // a stalled page: the client gives up at its budget
			return
		}
		writeRaw(w, 200, fmt.Sprintf(`{"pods":[{"id":"p%d"}],"nextCursor":"%d"}`, n, n+1))
	})
	client, _ := fake.client(WithListPodsBudget(200 * time.Millisecond))
	pods, err := client.ListPods(context.Background(), ListPodsQuery{})
	assert.Check(t, pods == nil, "an incomplete listing returns no pods")
	assert.Check(t, errors.Is(err, context.DeadlineExceeded), "got %v", err)
	assert.ErrorContains(t, err, "list pods: 2 pages (2 pods) read within the 200ms listing budget and the server has more; the list is incomplete")
}

// decodePodsPage reads one page of GET /v2/pods as whole text, {"pods": [...],
// "nextCursor": "..."}, and tolerates a bare array (v1's shape) as a last page:
// the plain decoder that FuzzPodsStreamMatchesPage holds the streaming one to.
func decodePodsPage(data []byte) (pods []Pod, nextCursor string, err error) {
	if trimmed := strings.TrimSpace(string(data)); strings.HasPrefix(trimmed, "[") {
		err := json.Unmarshal(data, &pods)
		return pods, "", err
	}
	var page struct {
		Pods       *[]Pod  `json:"pods"`
		NextCursor *string `json:"nextCursor"` // null and "" both end the listing
	}
	if err := json.Unmarshal(data, &page); err != nil {
		return nil, "", err
	}
	if page.Pods == nil {
		return nil, "", fmt.Errorf(`no "pods" array in the answer`)
	}
	if page.NextCursor != nil {
		nextCursor = *page.NextCursor
	}
	return *page.Pods, nextCursor, nil
}
