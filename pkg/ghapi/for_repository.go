package ghapi

// ForRepository returns a client for owner/repo that shares this client's
// credentials, transports and request policy: an organization's reaper reads
// every repository an App installation covers with one installation token,
// minted once, instead of one per repository. The conditional-request cache
// of pull requests is not shared (it is per repository).
func (c *Client) ForRepository(owner, repo string) (*Client, error) {
	if err := validateNames(Options{Owner: owner, Repo: repo, Org: c.org}); err != nil {
		return nil, err
	}
	return &Client{
		gh: c.gh, apiNoRedirect: c.apiNoRedirect, storage: c.storage,
		owner: owner, repo: repo, org: c.org,
		policy: c.policy, redactor: c.redactor, onSecret: c.onSecret, maxDownload: c.maxDownload,
	}, nil
}
