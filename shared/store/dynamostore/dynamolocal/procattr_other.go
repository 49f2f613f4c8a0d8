//go:build !linux

package dynamolocal

import "syscall"

// sysProcAttr: only Linux can tie the server's life to the test binary's.
func sysProcAttr() *syscall.SysProcAttr { return nil }
