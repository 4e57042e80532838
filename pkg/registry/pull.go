package registry

import (
	"context"
	"strings"

	"github.com/org/runpod-gpu/pkg/reqpolicy"
)

// Pullable checks that image (tag or digest) can be pulled without
// credentials, as GitHub's runner pulls an action's image: an anonymous pull
// token, then the manifest. A private ghcr.io package is refused its token
// (docker says "denied"); the error says what the registry answered.
func (r *Resolver) Pullable(ctx context.Context, image string) error {
	ref, err := Parse(image)
	if err != nil {
		return err
	}
	r.setup()
	base := r.APIURL
	if base == "" {
		base = "https://" + ref.Host
	}
	base = strings.TrimRight(base, "/")
	limit := r.timeout()
	rctx, cancel := reqpolicy.Bound(ctx, r.policy, limit)
	defer cancel()
	if _, err := r.resolve(rctx, base, ref); err != nil {
		return r.explain(ctx, rctx, image, base, limit, err)
	}
	return nil
}
