package workflow_test

import (
	"context"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"testing/synctest"

	"github.com/genvideo/gen/shared/provider"
	"github.com/genvideo/gen/shared/task"
)

// outDirs records where the generator was told to write.
type outDirs struct {
	provider.Generator
	mu   sync.Mutex
	dirs []string
}

func (o *outDirs) Generate(ctx context.Context, job provider.Job) (provider.Result, error) {
	o.mu.Lock()
	o.dirs = append(o.dirs, job.OutDir)
	o.mu.Unlock()
	return o.Generator.Generate(ctx, job)
}

// With no TempDir (the AWS functions set none), a generation's work
// directory is in os.TempDir(), as Steps.TempDir says: Lambda's /tmp.
// It was made relative to the working directory, which on Lambda is the
// read-only /var/task: every generation that writes a file failed there.
func TestWorkDirDefaultsToTheSystemTempDir(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	t.Chdir(t.TempDir())
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t, nil)
		rec := &outDirs{Generator: e.gen}
		e.steps.TempDir, e.steps.Generator = "", rec
		tk := e.newTask("where it writes", 1)
		if _, err := e.runner.Run(context.Background(), tk); err != nil {
			t.Fatalf("Run: %v", err)
		}
		if got := e.task(tk.ID).Status; got != task.Completed {
			t.Fatalf("status = %s, want completed", got)
		}
		if len(rec.dirs) != 1 || !filepath.IsAbs(rec.dirs[0]) || !strings.HasPrefix(rec.dirs[0], tmp+string(filepath.Separator)) {
			t.Errorf("the generator wrote in %q, want a directory in TMPDIR %s", rec.dirs, tmp)
		}
	})
}
