// Package depcheck holds no code, only the table of bookbot's layers
// (layers_test.go): for each package, what it must not depend on, directly
// or through another, and why; and the test that holds every package of
// the module to it, with go list.
package depcheck
