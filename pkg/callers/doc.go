// Package callers is what a repository writes to use the suite: the caller
// workflows and configuration runpod-gpu init renders (Render), the
// permissions each of the suite's reusable workflows needs from its caller
// (SuiteNeeds, checked against the workflow files by action-tests/rules),
// and the check that a caller declares and grants them (PermissionProblems),
// which the documented callers (.github/docs/) are held to as well: a called workflow's token
// gets no more than its caller grants, and a new repository's default token
// is read-only.
package callers
