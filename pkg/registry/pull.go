package registry

import "context"

// Pullable checks that image (tag or digest) can be pulled without
// credentials, as GitHub's runner pulls an action's image: an anonymous pull
// token, then the manifest. A private ghcr.io package is refused its token
// (docker says "denied"); the error says what the registry answered.
func (r *Resolver) Pullable(ctx context.Context, image string) error {
	ref, err := Parse(image)
	if err != nil {
		return err
	}
	_, err = r.resolveBounded(ctx, image, ref)
	return err
}
