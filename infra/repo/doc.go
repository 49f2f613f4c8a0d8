// Package repo holds checks of the repository itself, as opposed to the
// code in it: what git tracks must be source, not build output.
package repo
