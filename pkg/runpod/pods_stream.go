package runpod

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
)

// errBodyTooLarge marks a page whose body passed maxResponseBytes.
var errBodyTooLarge = fmt.Errorf("body exceeds %d bytes", maxResponseBytes)

// boundedReader fails with errBodyTooLarge past n bytes, where
// io.LimitReader would end quietly in a truncated (malformed) document.
type boundedReader struct {
	r io.Reader
	n int64
	// readErr is the first failure of r itself (not its end): a body cut off
	// in transit, which is a transport failure rather than a malformed page.
	readErr error
}

func (b *boundedReader) Read(p []byte) (int, error) {
	if b.n <= 0 {
		return 0, errBodyTooLarge
	}
	if int64(len(p)) > b.n {
		p = p[:b.n]
	}
	n, err := b.r.Read(p)
	b.n -= int64(n)
	if err != nil && err != io.EOF && b.readErr == nil {
		b.readErr = err
	}
	return n, err
}

// decodePodsStream reads one GET /v2/pods page from r as it arrives, one pod
// record at a time (never the whole page as text), appending to pods. The page
// is a bare array (no cursor) or {"pods": […], "nextCursor": "…"}; a page
// without a "pods" array is malformed, and null or "" end the listing.
func decodePodsStream(r io.Reader, pods []Pod) (_ []Pod, nextCursor string, _ error) {
	br := &boundedReader{r: r, n: maxResponseBytes}
	got, next, err := decodePodsFrom(json.NewDecoder(br), pods)
	if err != nil && br.readErr != nil {
		return got, "", &bodyReadError{br.readErr}
	}
	return got, next, err
}

// bodyReadError is a page body that stopped arriving.
type bodyReadError struct{ err error }

func (e *bodyReadError) Error() string { return e.err.Error() }
func (e *bodyReadError) Unwrap() error { return e.err }

func decodePodsFrom(dec *json.Decoder, pods []Pod) (_ []Pod, nextCursor string, _ error) {
	tok, err := dec.Token()
	if err != nil {
		return pods, "", err
	}
	switch tok {
	case json.Delim('['):
		pods, err = decodePodArray(dec, pods)
		if err != nil {
			return pods, "", err
		}
		return pods, "", trailing(dec)
	case json.Delim('{'):
	default:
		return pods, "", fmt.Errorf("the answer is %v, not a pod list", tok)
	}
	return decodePodPage(dec, pods)
}

// decodePodPage decodes the rest of a page object, after its '{': its "pods"
// array appended to pods, and its nextCursor.
func decodePodPage(dec *json.Decoder, pods []Pod) (_ []Pod, nextCursor string, _ error) {
	// Member names match as json.Unmarshal matches them (case-insensitively,
	// the last of a repeated member winning), so both decoders agree.
	sawPods := false
	start := len(pods)
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return pods, "", err
		}
		key, _ := tok.(string)
		switch {
		case strings.EqualFold(key, "pods"):
			pods, sawPods = pods[:start], false
			open, err := dec.Token()
			switch {
			case err != nil:
				return pods, "", err
			case open == nil:
				continue
			case open != json.Delim('['):
				return pods, "", fmt.Errorf(`"pods" is %v, not an array`, open)
			}
			if pods, err = decodePodArray(dec, pods); err != nil {
				return pods, "", err
			}
			sawPods = true
		case strings.EqualFold(key, "nextCursor"):
			var cursor *string
			if err := dec.Decode(&cursor); err != nil {
				return pods, "", fmt.Errorf("nextCursor: %w", err)
			}
			nextCursor = ""
			if cursor != nil {
				nextCursor = *cursor
			}
		default:
			var skip json.RawMessage
			if err := dec.Decode(&skip); err != nil {
				return pods, "", err
			}
		}
	}
	if _, err := dec.Token(); err != nil { // the closing '}'
		return pods, "", err
	}
	if !sawPods {
		return pods, "", errors.New(`no "pods" array in the answer`)
	}
	return pods, nextCursor, trailing(dec)
}

// decodePodArray decodes the elements of an array whose '[' was read.
func decodePodArray(dec *json.Decoder, pods []Pod) ([]Pod, error) {
	for dec.More() {
		pods = append(pods, Pod{})
		if err := dec.Decode(&pods[len(pods)-1]); err != nil {
			return pods[:len(pods)-1], fmt.Errorf("pod %d of the page: %w", len(pods), err)
		}
	}
	_, err := dec.Token() // the closing ']'
	return pods, err
}

// trailing fails when anything but white space follows the document, as
// json.Unmarshal does.
func trailing(dec *json.Decoder) error {
	if _, err := dec.Token(); err != io.EOF {
		if err == nil {
			return errors.New("data after the pod list")
		}
		return err
	}
	return nil
}
