package repo

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// maxTrackedBytes is the largest file the repository may track, but for
// the pictures of the docs: a larger one is a binary or a build output
// (a 10.5 MB `gen` executable was once committed at the root).
const maxTrackedBytes = 1 << 20

// docsPicture is what may exceed maxTrackedBytes.
var docsPicture = regexp.MustCompile(`\.(png|jpe?g|gif|webp)$`)

func TestNoLargeTrackedFile(t *testing.T) {
	root, files := trackedFiles(t)
	for _, f := range files {
		st, err := os.Lstat(filepath.Join(root, f))
		if err != nil {
			continue // deleted in the work tree, not yet committed
		}
		if st.Size() > maxTrackedBytes && !docsPicture.MatchString(f) {
			t.Errorf("%s is tracked and is %d bytes (over %d): a binary or build output does not belong in git", f, st.Size(), maxTrackedBytes)
		}
	}
}

// TestNoTrackedExecutableBinary catches a small binary too: no tracked
// file starts with an ELF header.
func TestNoTrackedExecutableBinary(t *testing.T) {
	root, files := trackedFiles(t)
	for _, f := range files {
		b := make([]byte, 4)
		fh, err := os.Open(filepath.Join(root, f))
		if err != nil {
			continue
		}
		n, _ := fh.Read(b)
		fh.Close()
		if n == 4 && string(b) == "\x7fELF" {
			t.Errorf("%s is a tracked ELF binary", f)
		}
	}
}

func trackedFiles(t *testing.T) (string, []string) {
	t.Helper()
	out, err := exec.Command("git", "rev-parse", "--show-toplevel").Output()
	if err != nil {
		t.Skipf("not a git checkout: %v", err)
	}
	root := strings.TrimSpace(string(out))
	out, err = exec.Command("git", "-C", root, "ls-files", "-z").Output()
	if err != nil {
		t.Fatalf("git ls-files: %v", err)
	}
	var files []string
	for _, f := range strings.Split(string(out), "\x00") {
		if f != "" {
			files = append(files, f)
		}
	}
	if len(files) == 0 {
		t.Fatal("git ls-files listed nothing")
	}
	return root, files
}
