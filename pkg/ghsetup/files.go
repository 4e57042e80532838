package ghsetup

import (
	"context"
	"fmt"
	"net/http"

	"github.com/google/go-github/v66/github"
)

// fileAt reads a file's text and blob SHA at ref; a missing file is "", "", false.
func (p *Planner) fileAt(ctx context.Context, path, ref string) (text, sha string, ok bool, err error) {
	f, _, _, err := p.gh.Repositories.GetContents(ctx, p.owner, p.repo, path, &github.RepositoryContentGetOptions{Ref: ref})
	if statusOf(err) == http.StatusNotFound {
		return "", "", false, nil
	}
	if err != nil {
		return "", "", false, p.stepErr("file", err)
	}
	if f == nil {
		return "", "", false, &StepError{Step: "file", Err: fmt.Errorf("%s at %s is a directory", path, ref)}
	}
	text, err = f.GetContent()
	if err != nil {
		return "", "", false, &StepError{Step: "file", Err: fmt.Errorf("%s at %s: %v", path, ref, err)}
	}
	return text, f.GetSHA(), true, nil
}

// planFiles plans committing the files that differ from the default branch
// on SetupBranch, and a pull request from it unless one is open.
func (p *Planner) planFiles(ctx context.Context, plan *Plan, base string, req Request) error {
	var differ []File
	for _, f := range req.Files {
		text, _, _, err := p.fileAt(ctx, f.Path, base)
		if err != nil {
			return err
		}
		if text != f.Text {
			differ = append(differ, f)
		}
	}
	if len(differ) == 0 {
		return nil
	}
	_, _, err := p.gh.Git.GetRef(ctx, p.owner, p.repo, "heads/"+SetupBranch)
	branchExists := err == nil
	if err != nil && statusOf(err) != http.StatusNotFound {
		return p.stepErr("branch", err)
	}
	if !branchExists {
		plan.add("branch", fmt.Sprintf("create the branch %s from %s", SetupBranch, base), func(ctx context.Context) error {
			ref, _, err := p.gh.Git.GetRef(ctx, p.owner, p.repo, "heads/"+base)
			if err != nil {
				return p.stepErr("branch", err)
			}
			_, _, err = p.gh.Git.CreateRef(ctx, p.owner, p.repo, &github.Reference{Ref: github.String("refs/heads/" + SetupBranch), Object: &github.GitObject{SHA: ref.Object.SHA}})
			return p.stepErr("branch", err)
		})
	}
	for _, f := range differ {
		if branchExists {
			text, _, _, err := p.fileAt(ctx, f.Path, SetupBranch)
			if err != nil {
				return err
			}
			if text == f.Text {
				continue
			}
		}
		plan.add("file", fmt.Sprintf("commit %s on %s", f.Path, SetupBranch), func(ctx context.Context) error { return p.commitFile(ctx, f) })
	}
	return p.planPull(ctx, plan, base, req)
}

// commitFile commits one file on SetupBranch with the contents API.
func (p *Planner) commitFile(ctx context.Context, f File) error {
	_, sha, _, err := p.fileAt(ctx, f.Path, SetupBranch)
	if err != nil {
		return err
	}
	opts := &github.RepositoryContentFileOptions{Message: github.String("runpod-gpu init: " + f.Path), Content: []byte(f.Text), Branch: github.String(SetupBranch)}
	if sha != "" {
		opts.SHA = github.String(sha)
		_, _, err = p.gh.Repositories.UpdateFile(ctx, p.owner, p.repo, f.Path, opts)
	} else {
		_, _, err = p.gh.Repositories.CreateFile(ctx, p.owner, p.repo, f.Path, opts)
	}
	return p.stepErr("file", err)
}

// planPull plans the pull request from SetupBranch unless one is open.
func (p *Planner) planPull(ctx context.Context, plan *Plan, base string, req Request) error {
	open, _, err := p.gh.PullRequests.List(ctx, p.owner, p.repo, &github.PullRequestListOptions{State: "open", Head: p.owner + ":" + SetupBranch, Base: base})
	if err != nil {
		return p.stepErr("pull request", err)
	}
	if len(open) > 0 {
		plan.PullURL = open[0].GetHTMLURL()
		return nil
	}
	title := firstNonEmpty(req.PullTitle, "Set up the runpod-gpu GPU lane")
	plan.add("pull request", fmt.Sprintf("open a pull request %q from %s to %s", title, SetupBranch, base), func(ctx context.Context) error {
		pr, _, err := p.gh.PullRequests.Create(ctx, p.owner, p.repo, &github.NewPullRequest{Title: github.String(title), Head: github.String(SetupBranch), Base: github.String(base), Body: github.String(req.PullBody)})
		if err != nil {
			return p.stepErr("pull request", err)
		}
		plan.PullURL = pr.GetHTMLURL()
		return nil
	})
	return nil
}
