// Package doccheck holds no code, only the tests that keep bookbot's prose
// true to the repository: every relative link in README.md,
// ARCHITECTURE.md and docs/ leads to a file that exists (and to a heading
// that exists, when it names one), and every test the documents name as
// proof of a guarantee is a test that exists.
package doccheck
