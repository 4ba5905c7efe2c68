package gitea

import "syscall"

// childSysProcAttr puts Gitea in its own process group, so that stopping
// it stops the git processes it runs too, and has the kernel kill it when
// the test binary dies, however it dies.
func childSysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}
