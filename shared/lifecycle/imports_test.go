package lifecycle

import (
	"go/build"
	"slices"
	"testing"
)

// TestDecidesWithoutTheStore: the rules and the words they decide in
// import no persistence, so that the stores depend on them and not the
// other way round.
func TestDecidesWithoutTheStore(t *testing.T) {
	const storePkg = "github.com/genvideo/gen/shared/store"
	seen := map[string]bool{}
	var walk func(path string)
	walk = func(path string) {
		if seen[path] {
			return
		}
		seen[path] = true
		p, err := build.Import(path, "", 0)
		if err != nil {
			t.Fatalf("import %s: %v", path, err)
		}
		if p.Goroot {
			return
		}
		if slices.Contains(p.Imports, storePkg) {
			t.Errorf("%s imports %s", path, storePkg)
		}
		for _, imp := range p.Imports {
			walk(imp)
		}
	}
	walk("github.com/genvideo/gen/shared/lifecycle")
}
