//go:build !unix

package secretfile

// Elsewhere an open does not wait for a pipe's writer; the check after
// opening refuses it all the same.
const nonblock = 0
