package ghapi

import (
	"context"
	"errors"
	"fmt"
)

// Repository roles PermissionRole returns for the built-in roles; a custom
// role comes back under its own name.
const (
	RoleAdmin    = "admin"
	RoleMaintain = "maintain"
	RoleWrite    = "write"
	RoleTriage   = "triage"
	RoleRead     = "read"
	RoleNone     = "none"
)

// PermissionRole returns user's role on the repository: GitHub's role_name
// (admin, maintain, write, triage, read, none or a custom role's name). It
// never falls back to the legacy "permission" field, which reports maintain
// as write and triage as read.
func (c *Client) PermissionRole(ctx context.Context, user string) (string, error) {
	if err := checkPrintable("user", user); err != nil {
		return "", err
	}
	op := fmt.Sprintf("read %s's permission", user)
	level, _, err := c.gh.Repositories.GetPermissionLevel(ctx, c.owner, c.repo, user)
	if err != nil {
		return "", c.fail(op, err, nil)
	}
	role := level.GetRoleName()
	if role == "" {
		return "", c.fail(op, errors.New("GitHub's answer has no role_name"), nil)
	}
	return role, nil
}
