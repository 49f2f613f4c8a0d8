package dynamolocal

import "syscall"

// sysProcAttr makes the kernel kill Java when the test binary dies, so
// that a test killed by a timeout leaves no server behind.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
