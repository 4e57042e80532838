//go:build !unix

package localgate

import "os/exec"

// killGroupOnCancel keeps exec's default (kill the program only) where
// process groups do not exist.
func killGroupOnCancel(*exec.Cmd) {}
