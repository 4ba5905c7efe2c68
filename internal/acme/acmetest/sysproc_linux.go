package acmetest

import "syscall"

// childSysProcAttr has the kernel kill Pebble and pebble-challtestsrv when
// the test binary dies, however it dies, so no CA outlives its test.
func childSysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}
