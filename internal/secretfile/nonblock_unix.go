//go:build unix

package secretfile

import "syscall"

const nonblock = syscall.O_NONBLOCK
