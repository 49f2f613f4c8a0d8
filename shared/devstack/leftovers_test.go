package devstack

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/genvideo/gen/shared/domain"
	"github.com/genvideo/gen/shared/store"
	"github.com/genvideo/gen/shared/task"
	"github.com/genvideo/gen/shared/testing/imagechecktest"
)

// Issue 10, item 7: after a kill -9, render work directories and partial
// uploads stayed on disk for good. A killed server is a child process
// running Serve (this test binary, run again), killed with SIGKILL.

// serveDirEnv makes the test binary a server on that data directory.
const serveDirEnv = "GEN_TEST_SERVE_DIR"

// TestServeProcess is the child: Serve until killed. It does nothing in
// an ordinary run.
func TestServeProcess(t *testing.T) {
	dir := os.Getenv(serveDirEnv)
	if dir == "" {
		t.Skip("the server process of TestCrashLeftoversAreCleaned")
	}
	// Fault injection holds the generation in its work directory
	// ([slow:N]) while the test kills the process.
	cfg := Config{Addr: "127.0.0.1:0", DataDir: dir, SweepInterval: time.Hour, RenderConcurrency: 1, FaultInjection: true}
	if err := Serve(context.Background(), cfg, os.Stdout); err != nil {
		t.Fatal(err)
	}
}

// files lists the files and directories under dir, relative and with
// slashes, that match.
func files(t *testing.T, dir string, match func(rel string) bool) []string {
	t.Helper()
	var out []string
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		rel, _ := filepath.Rel(dir, p)
		if rel = filepath.ToSlash(rel); match(rel) {
			out = append(out, rel)
		}
		return nil
	})
	return out
}

// waitFor polls cond until it holds; the bound only keeps a broken test
// from hanging.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not after 2 minutes", what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// ageAll makes everything under dir look untouched for d.
func ageAll(t *testing.T, dir string, d time.Duration) {
	t.Helper()
	when := time.Now().Add(-d)
	filepath.WalkDir(dir, func(p string, _ fs.DirEntry, err error) error {
		if err == nil {
			os.Chtimes(p, when, when)
		}
		return nil
	})
}

// TestCrashLeftoversAreCleaned: a server is killed while an upload
// streams in, while the second frame of another streams in after the
// first was stored, and while a generation works in its directory. What
// it left (partial uploads, the stored first frame of a task never
// created, the work directory) is removed by the next start once it is
// old enough, except what a live task owns, which goes on the first sweep
// after the task ended. Nothing a task owns, nor anything recent, goes.
func TestCrashLeftoversAreCleaned(t *testing.T) {
	localOnly(t, "the test kills the embedded stack's process and inspects its data directory")
	dir := t.TempDir()
	proc := startServeProcess(t, "TestServeProcess", serveDirEnv+"="+dir)
	host := proc.addr
	keyBytes, err := os.ReadFile(DevKeyPath(dir))
	if err != nil {
		t.Fatal(err)
	}
	key := strings.TrimSpace(string(keyBytes))

	// A generation that waits in its work directory: the image is
	// downloaded there before the generator starts, which sleeps first.
	ct, body := form(t, map[string]string{"prompt": "[slow:8] interrupted", "model": "gen-3.1-lite-generate-001",
		"durationSeconds": "4", "generateAudio": "false"}, map[string][]byte{"image": imagechecktest.PNG(320, 180)})
	req, _ := http.NewRequest(http.MethodPost, "http://"+host+"/api/gen/image-to-video", bytes.NewReader(body))
	req.Header.Set("X-API-Key", key)
	req.Header.Set("Content-Type", ct)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusAccepted {
		t.Fatalf("start: %d", res.StatusCode)
	}
	// Two uploads that stop half way: an image, and a second frame after
	// a whole first one.
	big := imagechecktest.PNG(2000, 2000)
	for _, parts := range [][]string{{"image"}, {"firstFrame", "lastFrame"}} {
		c, err := net.Dial("tcp", host)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		path := map[int]string{1: "/api/gen/image-to-video", 2: "/api/gen/first-last-frame"}[len(parts)]
		fmt.Fprintf(c, "POST %s HTTP/1.1\r\nHost: %s\r\nX-API-Key: %s\r\nContent-Type: multipart/form-data; boundary=b\r\nContent-Length: 10000000\r\n\r\n"+
			"--b\r\nContent-Disposition: form-data; name=\"prompt\"\r\n\r\nhalf\r\n", path, host, key)
		for i, p := range parts {
			fmt.Fprintf(c, "--b\r\nContent-Disposition: form-data; name=%q; filename=\"a.png\"\r\n\r\n", p)
			if i < len(parts)-1 {
				c.Write(big)
				io.WriteString(c, "\r\n")
			} else {
				c.Write(big[:len(big)/2])
			}
		}
	}
	count := func(prefix, suffix string) int {
		return len(files(t, dir, func(r string) bool { return strings.HasPrefix(r, prefix) && strings.HasSuffix(r, suffix) }))
	}
	waitFor(t, "two partial uploads, a stored first frame and a work directory", func() bool {
		return count("blobs/tmp/put-", "") >= 2 && count("blobs/data/inputs/", "/firstFrame.png") == 1 &&
			count("tmp/generate-", "/input-0.png") == 1
	})
	proc.kill() // SIGKILL: no deferred clean-up runs

	leftovers := files(t, dir, func(r string) bool {
		return strings.HasPrefix(r, "blobs/tmp/put-") || strings.HasSuffix(r, "/firstFrame.png") || strings.Count(r, "/") == 1 && strings.HasPrefix(r, "tmp/generate-")
	})
	// Two partial uploads, the frame (no content type file: its extension
	// says it), the work directory.
	if len(leftovers) != 4 {
		t.Fatalf("the killed server left %v, want two partial uploads, a first frame and a work directory", leftovers)
	}
	workDir := leftovers[slices.IndexFunc(leftovers, func(r string) bool { return strings.HasPrefix(r, "tmp/") })]
	// Kept whatever their age: the task's own input; and, being recent, a
	// partial upload of a server that might still be running.
	ageAll(t, dir, 2*time.Hour)
	recent := filepath.Join(dir, "blobs", "tmp", "put-recent")
	os.WriteFile(recent, []byte("still coming"), 0o600)
	owned := files(t, dir, func(r string) bool {
		return strings.HasPrefix(r, "blobs/data/inputs/") && strings.HasSuffix(r, "/image.png")
	})
	if len(owned) != 1 {
		t.Fatalf("the started task's input: %v", owned)
	}

	s := serve(t, dir, func(c *Config) { c.SweepInterval = 100 * time.Millisecond })
	for _, l := range leftovers {
		if l == workDir {
			continue
		}
		if _, err := os.Lstat(filepath.Join(dir, l)); !os.IsNotExist(err) {
			t.Errorf("after the restart %s is still there", l)
		}
	}
	for _, p := range append(owned, "blobs/tmp/put-recent") {
		if _, err := os.Lstat(filepath.Join(dir, p)); err != nil {
			t.Errorf("after the restart %s is gone: %v", p, err)
		}
	}
	// The task was processing: its work directory is a live task's until
	// the restarted server finishes it, and goes at the next sweep.
	id := strings.Split(strings.TrimPrefix(workDir, "tmp/generate-"), "-")[0]
	if _, err := os.Lstat(filepath.Join(dir, workDir)); err != nil {
		t.Errorf("the work directory of task %s, still live, is gone at start-up: %v", id, err)
	}
	waitFor(t, "the interrupted task to end", func() bool {
		tk, err := s.store.Task(context.Background(), id)
		return err == nil && tk.Status.Terminal()
	})
	if tk, _ := s.store.Task(context.Background(), id); tk.Status != task.Completed {
		t.Errorf("the interrupted task is %s, want completed", tk.Status)
	}
	waitFor(t, "the old work directory to go", func() bool {
		_, err := os.Lstat(filepath.Join(dir, workDir))
		return os.IsNotExist(err)
	})
	if left := files(t, dir, func(r string) bool { return strings.HasPrefix(r, "tmp/") }); len(left) != 0 {
		t.Errorf("work files left after the task ended: %v", left)
	}
}

// TestCleanLeftoversKeepsWhatTasksOwn: the rules of cleanLeftovers, one
// kind of file at a time, on files made to look two hours old.
func TestCleanLeftoversKeepsWhatTasksOwn(t *testing.T) {
	dir := t.TempDir()
	e := startEnv(t, dir, nil)
	k := e.key(10000, store.KeyLimits{})
	ctx := context.Background()
	now := time.Now().UTC().Truncate(time.Millisecond)
	newTask := func(status task.Status, videos int) string {
		t.Helper()
		tk := task.Task{ID: task.NewID(now), AccountID: k.AccountID, KeyName: "e2e", Type: "text-to-video",
			Model: "gen-3.1-lite-generate-001", Prompt: "x", CreditsCost: 35, Status: task.Pending, CreatedAt: now, Deadline: now.Add(time.Hour)}
		tk.Params.SampleCount = 2
		if _, err := e.stack.Store.CreateTask(ctx, tk, domain.StartGuard{}); err != nil {
			t.Fatal(err)
		}
		var err error
		switch status {
		case task.Processing:
			_, err = e.stack.Store.MarkProcessing(ctx, tk.ID, now)
		case task.Completed:
			var vs []task.Video
			for i := range videos {
				vs = append(vs, task.Video{Key: fmt.Sprintf("videos/%s/%d.mp4", tk.ID, i), MimeType: "video/mp4",
					Poster: fmt.Sprintf("videos/%s/%d.jpg", tk.ID, i)})
			}
			_, err = e.stack.Store.Complete(ctx, tk.ID, domain.Completion{Videos: vs}, now)
		case task.Failed:
			_, err = e.stack.Store.Fail(ctx, tk.ID, task.Failure{Code: task.FailGeneration, Message: "x"}, now)
		}
		if err != nil {
			t.Fatal(err)
		}
		return tk.ID
	}
	processing, completed, failed := newTask(task.Processing, 0), newTask(task.Completed, 1), newTask(task.Failed, 0)
	unknown := task.NewID(now)
	put := func(key string) string {
		if _, err := e.stack.Blobs.Put(ctx, key, strings.NewReader("bytes"), "video/mp4"); err != nil {
			t.Fatal(err)
		}
		return key
	}
	workDir := func(id string) string {
		d, err := os.MkdirTemp(filepath.Join(dir, "tmp"), "generate-"+id+"-")
		if err != nil {
			t.Fatal(err)
		}
		os.WriteFile(filepath.Join(d, "input-0.png"), []byte("x"), 0o600)
		rel, _ := filepath.Rel(dir, d)
		return filepath.ToSlash(rel)
	}
	blob := func(key string) string { return "blobs/data/" + key }
	kept := []string{
		blob(put("inputs/" + processing + "/image.png")),
		blob(put("inputs/" + completed + "/image.png")),
		blob(put("inputs/" + failed + "/image.png")), // a task keeps its inputs
		blob(put("videos/" + processing + "/0.mp4")), // a live task's, listed or not
		blob(put("videos/" + completed + "/0.mp4")),  // listed
		blob(put("videos/" + completed + "/0.jpg")),  // its poster, listed
		workDir(processing),
		"tmp/not-a-work-dir",
	}
	removed := []string{
		blob(put("inputs/" + unknown + "/image.png")),
		blob(put("videos/" + unknown + "/0.mp4")),
		blob(put("videos/" + failed + "/0.mp4")),
		blob(put("videos/" + completed + "/1.mp4")), // not listed
		blob(put("videos/" + failed + "/0.jpg")),    // a poster no task lists
		workDir(failed),
		workDir(completed),
		workDir(unknown),
		".secret-123",
	}
	os.Mkdir(filepath.Join(dir, "tmp", "not-a-work-dir"), 0o700)
	os.WriteFile(filepath.Join(dir, ".secret-123"), []byte("x"), 0o600)
	ageAll(t, dir, 2*time.Hour)
	// Recent: an orphan's upload may be one whose task is being created.
	kept = append(kept, blob(put("inputs/"+task.NewID(now)+"/image.png")), workDir(task.NewID(now)))

	e.stack.cleanLeftovers(ctx)
	for _, p := range kept {
		if _, err := os.Lstat(filepath.Join(dir, p)); err != nil {
			t.Errorf("%s was removed", p)
		}
	}
	for _, p := range removed {
		if _, err := os.Lstat(filepath.Join(dir, p)); !os.IsNotExist(err) {
			t.Errorf("%s is still there", p)
		}
	}
}

// serveProcess is a server in a child process: this test binary run
// again with one test (a TestXServeProcess that calls Serve), so that a
// test can kill it with SIGKILL, which nothing drains.
type serveProcess struct {
	cmd    *exec.Cmd
	addr   string // host:port it listens on
	killed bool
}

// startServeProcess starts the child running the test named run, with env
// added to this process's environment, and returns once it prints the
// address it listens on. The child is killed when the test ends, unless
// the test killed it.
func startServeProcess(t *testing.T, run string, env ...string) *serveProcess {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^"+run+"$", "-test.v")
	cmd.Env = append(os.Environ(), env...)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p := &serveProcess{cmd: cmd}
	t.Cleanup(func() {
		if !p.killed {
			p.kill()
		}
	})
	addr := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if m := runningOn.FindStringSubmatch(sc.Text()); m != nil {
				addr <- m[1]
			}
		}
	}()
	select {
	case p.addr = <-addr:
	case <-time.After(2 * time.Minute):
		t.Fatal("the server process did not start")
	}
	return p
}

// kill sends SIGKILL and waits for the process to end.
func (p *serveProcess) kill() {
	p.cmd.Process.Kill()
	p.cmd.Wait()
	p.killed = true
}
