package config

// docs/configuration.md is the reference of every variable, written from
// Vars; a test in internal/gendocs fails when the two disagree.
//go:generate go run ./internal/gendocs -o ../docs/configuration.md
