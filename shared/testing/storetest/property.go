package storetest

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/genvideo/gen/shared/domain"
	"github.com/genvideo/gen/shared/store"
	"github.com/genvideo/gen/shared/task"
)

// SeedEnv names the environment variable that fixes the seed of the
// ledger property test, e.g. STORETEST_SEED=42 go test ./shared/store/...
// The seed fixes each goroutine's choice of operations; how the goroutines
// interleave is up to the scheduler.
const SeedEnv = "STORETEST_SEED"

// Option adjusts Run.
type Option func(*config)

type config struct {
	reopen func(t *testing.T, s store.Store) store.Store
	expire func(ctx context.Context, s store.Store, tk task.Task) error
}

// WithReopen gives the suite a way to restart the store: reopen closes s
// and returns a store on the same data, as the next process would open
// it. It is called on the test's goroutine. The ledger property test then
// restarts the store while work is under way (calls cut off by the restart
// fail with store.ErrUnavailable) and once more before its checks, so that
// they read what survived; without it, it does no restarts.
func WithReopen(reopen func(t *testing.T, s store.Store) store.Store) Option {
	return func(c *config) { c.reopen = reopen }
}

// The size of the property test: a few seconds on SQLite.
const (
	propAccounts    = 3
	propWorkers     = 8
	propOps         = 120 // per worker
	propMaxInFlight = 4   // every start's guard
	propWindows     = 3   // Starts counters per account at a time
	propEpoch       = 30  // ops of a worker before it moves to new counters
	propWindowLimit = 5   // each counter's limit: some run out, some do not
	propIdemKeys    = 6   // idempotency keys per account
)

// propCosts are the prices a start may charge: the catalogue's, doubled
// for two samples, and a free task.
var propCosts = []int{0, 35, 65, 70, 120, 130, 190, 250, 380, 500}

// outcome is what a call that may change the store told its caller.
type outcome int

const (
	refused outcome = iota // definitely changed nothing
	done                   // definitely took effect
	maybe                  // failed with store.ErrUnavailable: either
)

// propTask is the model of one task: what the calls on it were told.
type propTask struct {
	id, account string
	cost        int
	window      int
	idemKey     string // "" when started without one
	replayOf    string // the task an IdempotencyError named
	created     outcome

	failedBy, completedBy bool // a Fail / Complete succeeded
	terminalFromFail      bool // Fail said ErrTerminal: it completed
	terminalFromComplete  bool // Complete said ErrTerminal: it failed
	refunds               map[int]bool
	reported              []int // CreditsRefunded returned by successful Completes
}

// propGrant is one Grant call, found in the ledger by its unique note.
type propGrant struct {
	account string
	amount  int64
	outcome outcome
}

// propModel is everything the workers learnt, shared under mu.
type propModel struct {
	mu          sync.Mutex
	tasks       map[string]*propTask
	byAccount   map[string][]*propTask
	grants      map[string]propGrant // by note
	opening     map[string]int64
	exhausted   map[string]bool // Starts counters that said LimitError
	unavailable int
	calls       int
}

// propStore is the store the workers share; restart swaps it.
type propStore struct {
	mu sync.RWMutex
	s  store.Store
}

func (p *propStore) get() store.Store {
	p.mu.RLock()
	defer p.mu.RUnlock()
	return p.s
}

// testLedgerProperties runs random interleavings of starts (with limits
// and idempotency keys), grants, transitions, full and partial refunds
// and, given WithReopen, restarts, from many goroutines over several
// accounts; then checks every account against what the calls were told
// and against CheckInvariants, before and after finishing every task.
func testLedgerProperties(t *testing.T, s store.Store, cfg config) {
	seed := uint64(time.Now().UnixNano())
	if v := os.Getenv(SeedEnv); v != "" {
		n, err := strconv.ParseUint(v, 10, 64)
		if err != nil {
			t.Fatalf("%s=%q: want an unsigned integer", SeedEnv, v)
		}
		seed = n
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("ledger property test seed %d: rerun with %s=%d", seed, SeedEnv, seed)
		}
	})
	master := rand.New(rand.NewPCG(seed, 0))

	m := &propModel{
		tasks: map[string]*propTask{}, byAccount: map[string][]*propTask{},
		grants: map[string]propGrant{}, opening: map[string]int64{}, exhausted: map[string]bool{},
	}
	accounts := make([]string, propAccounts)
	for i := range accounts {
		accounts[i] = fmt.Sprintf("acct-prop-%d", i)
		m.opening[accounts[i]] = int64(master.IntN(600))
		mustAccount(t, s, accounts[i], m.opening[accounts[i]])
	}

	ps := &propStore{s: s}
	restarts := make(chan struct{}, 1)
	if cfg.reopen == nil {
		restarts = nil // the op is skipped
	}
	var clock atomic.Int64 // milliseconds after t0, one per call
	var wg sync.WaitGroup
	for w := range propWorkers {
		r := rand.New(rand.NewPCG(seed, uint64(w)+1))
		wg.Go(func() {
			pw := &propWorker{t: t, m: m, ps: ps, r: r, id: w, accounts: accounts, clock: &clock, restarts: restarts}
			for i := range propOps {
				pw.step(i)
			}
		})
	}
	finished := make(chan struct{})
	go func() { wg.Wait(); close(finished) }()
	nRestarts := 0
	for running := true; running; {
		select {
		case <-restarts:
			ps.restart(t, cfg.reopen)
			nRestarts++
		case <-finished:
			running = false
		}
	}
	if cfg.reopen != nil {
		ps.restart(t, cfg.reopen) // the checks read what survived
		nRestarts++
	}
	s = ps.get()
	t.Logf("%d calls, %d unavailable, %d restarts", m.calls, m.unavailable, nRestarts)
	if m.unavailable*2 > m.calls {
		t.Errorf("%d of %d calls failed with store.ErrUnavailable: too few outcomes to check", m.unavailable, m.calls)
	}

	m.resolve(t, s)
	for _, a := range accounts {
		m.check(t, s, a)
		CheckInvariants(t, s, a)
	}

	// Finish every task still in flight, as the workflow would, and check
	// again: nothing is in flight and the books still balance.
	for _, a := range accounts {
		for _, pt := range m.byAccount[a] {
			if pt.created == refused {
				continue
			}
			tk := mustTask(t, s, pt.id)
			if tk.Status.Terminal() {
				continue
			}
			now := at(time.Hour)
			if master.IntN(2) == 0 {
				mustFail(t, s, pt.id, task.Failure{Code: task.FailTimeout, Message: "drain"}, now)
				pt.failedBy = true
				continue
			}
			refund := master.IntN(pt.cost + 1)
			pt.refunds[refund] = true
			got, err := s.Complete(t.Context(), pt.id, domain.Completion{Videos: propVideos(pt.id), Refund: refund}, now)
			if err != nil {
				t.Fatalf("drain: Complete(%s, refund %d): %v", pt.id, refund, err)
			}
			pt.completedBy = true
			pt.reported = append(pt.reported, got.CreditsRefunded)
		}
	}
	for _, a := range accounts {
		m.check(t, s, a)
		CheckInvariants(t, s, a)
		if acct := mustAccountState(t, s, a); acct.InFlight != 0 {
			t.Errorf("account %s: %d in flight after every task finished, want 0", a, acct.InFlight)
		}
	}
}

// restart closes the store and opens it again; calls under way on the old
// one fail as they would in a process that died.
func (p *propStore) restart(t *testing.T, reopen func(*testing.T, store.Store) store.Store) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.s = reopen(t, p.s)
}

func propVideos(id string) []task.Video {
	return []task.Video{{Key: "videos/" + id + "/0.mp4", MimeType: "video/mp4", Size: 1}}
}

// propWorker is one goroutine's state.
type propWorker struct {
	t        *testing.T
	m        *propModel
	ps       *propStore
	r        *rand.Rand
	id       int
	accounts []string
	clock    *atomic.Int64
	restarts chan struct{}
}

func (w *propWorker) now() time.Time {
	return at(time.Duration(w.clock.Add(1)) * time.Millisecond)
}

// record counts a call and reports whether its error is an outage.
func (w *propWorker) record(err error) bool {
	w.m.mu.Lock()
	defer w.m.mu.Unlock()
	w.m.calls++
	if errors.Is(err, store.ErrUnavailable) {
		w.m.unavailable++
		return true
	}
	return false
}

// pick returns a random task of account that may exist, or nil.
func (w *propWorker) pick(account string) *propTask {
	w.m.mu.Lock()
	defer w.m.mu.Unlock()
	var live []*propTask
	for _, pt := range w.m.byAccount[account] {
		if pt.created != refused {
			live = append(live, pt)
		}
	}
	if len(live) == 0 {
		return nil
	}
	return live[w.r.IntN(len(live))]
}

func (w *propWorker) step(i int) {
	account := w.accounts[w.r.IntN(len(w.accounts))]
	switch n := w.r.IntN(100); {
	case n < 32:
		w.create(account, i)
	case n < 42:
		w.grant(account, i)
	case n < 52:
		w.startProcessing(account)
	case n < 72:
		w.complete(account)
	case n < 87:
		w.fail(account)
	case n < 99:
		w.observe(account)
	default:
		if w.restarts != nil {
			select {
			case w.restarts <- struct{}{}:
			default: // one is pending already
			}
		}
	}
}

func (w *propWorker) create(account string, i int) {
	t := w.t
	created := w.now()
	pt := &propTask{
		id:      taskID(created, fmt.Sprintf("p%02dn%05d", w.id, i)),
		account: account,
		cost:    propCosts[w.r.IntN(len(propCosts))],
		window:  i/propEpoch*propWindows + w.r.IntN(propWindows),
		refunds: map[int]bool{},
	}
	counter := domain.Window{Key: propWindowKey(account, pt.window), Limit: propWindowLimit, ExpiresAt: t0.Add(24 * time.Hour)}
	g := domain.StartGuard{MaxInFlight: propMaxInFlight, Starts: &counter}
	if w.r.IntN(5) == 0 {
		pt.idemKey = fmt.Sprintf("idem-%d", w.r.IntN(propIdemKeys))
		g.Idempotency = &domain.IdempotencyKey{Key: pt.idemKey, RequestHash: pt.id, ExpiresAt: t0.Add(24 * time.Hour)}
	}
	tk := newTask(account, pt.id, pt.cost, created)
	charged, err := w.ps.get().CreateTask(t.Context(), tk, g)
	bal := charged.Balance

	var (
		ice *domain.InsufficientCreditsError
		ife *domain.InFlightLimitError
		le  *domain.LimitError
		ie  *domain.IdempotencyError
	)
	switch {
	case w.record(err):
		pt.created = maybe
	case err == nil:
		pt.created = done
		if bal < 0 {
			t.Errorf("CreateTask(%s) returned balance %d, want >= 0", pt.id, bal)
		}
	case errors.As(err, &ice):
		if ice.Required != int64(pt.cost) || ice.Available < 0 || ice.Available >= ice.Required {
			t.Errorf("CreateTask(%s, cost %d): %+v, want Required %d and 0 <= Available < Required", pt.id, pt.cost, *ice, pt.cost)
		}
	case errors.As(err, &ife):
		if ife.Limit != propMaxInFlight {
			t.Errorf("CreateTask(%s): InFlightLimitError.Limit = %d, want %d", pt.id, ife.Limit, propMaxInFlight)
		}
	case errors.As(err, &le):
		if le.Window.Key != counter.Key {
			t.Errorf("CreateTask(%s): LimitError on %q, want %q", pt.id, le.Window.Key, counter.Key)
		}
		w.m.mu.Lock()
		w.m.exhausted[counter.Key] = true
		w.m.mu.Unlock()
	case errors.As(err, &ie) && pt.idemKey != "":
		pt.replayOf = ie.TaskID // checked: the key's one task
	default:
		t.Errorf("CreateTask(%s): unexpected error %v", pt.id, err)
	}
	w.m.mu.Lock()
	w.m.tasks[pt.id] = pt
	w.m.byAccount[account] = append(w.m.byAccount[account], pt)
	w.m.mu.Unlock()
}

func propWindowKey(account string, window int) string {
	return fmt.Sprintf("rl:s:%s:%d", account, window)
}

func (w *propWorker) grant(account string, i int) {
	amount := int64(1 + w.r.IntN(400))
	note := fmt.Sprintf("property grant %d/%d", w.id, i)
	bal, err := w.ps.get().Grant(w.t.Context(), account, amount, note, w.now())
	g := propGrant{account: account, amount: amount, outcome: done}
	switch {
	case w.record(err):
		g.outcome = maybe
	case err != nil:
		w.t.Errorf("Grant(%s, %d): %v", account, amount, err)
		g.outcome = maybe
	case bal < amount:
		w.t.Errorf("Grant(%s, %d) returned balance %d, want at least the amount", account, amount, bal)
	}
	w.m.mu.Lock()
	w.m.grants[note] = g
	w.m.mu.Unlock()
}

func (w *propWorker) startProcessing(account string) {
	pt := w.pick(account)
	if pt == nil {
		return
	}
	got, err := w.ps.get().MarkProcessing(w.t.Context(), pt.id, w.now())
	switch {
	case w.record(err):
	case errors.Is(err, domain.ErrNotFound) && w.maybeCreated(pt):
	case err != nil:
		w.t.Errorf("MarkProcessing(%s): %v", pt.id, err)
	case got.Status == task.Pending || got.ID != pt.id:
		w.t.Errorf("MarkProcessing(%s) returned task %s %s, want it processing or finished", pt.id, got.ID, got.Status)
	}
}

func (w *propWorker) maybeCreated(pt *propTask) bool {
	w.m.mu.Lock()
	defer w.m.mu.Unlock()
	return pt.created == maybe
}

func (w *propWorker) complete(account string) {
	pt := w.pick(account)
	if pt == nil {
		return
	}
	refund := w.r.IntN(pt.cost + 1)
	invalid := w.r.IntN(20) == 0
	if invalid {
		refund = pt.cost + 1 + w.r.IntN(3)
	} else {
		w.m.mu.Lock()
		pt.refunds[refund] = true // before the call: it may take effect
		w.m.mu.Unlock()
	}
	got, err := w.ps.get().Complete(w.t.Context(), pt.id, domain.Completion{Videos: propVideos(pt.id), Refund: refund}, w.now())
	if w.record(err) {
		return
	}
	w.m.mu.Lock()
	defer w.m.mu.Unlock()
	switch {
	case errors.Is(err, domain.ErrNotFound) && pt.created == maybe:
	case errors.Is(err, domain.ErrTerminal):
		pt.terminalFromComplete = true
	case invalid && err != nil:
		// Refused, as a refund above the charge must be.
	case err != nil:
		w.t.Errorf("Complete(%s, refund %d): %v", pt.id, refund, err)
	case got.Status != task.Completed:
		w.t.Errorf("Complete(%s) returned status %s, want completed", pt.id, got.Status)
	case invalid && got.CreditsRefunded == refund:
		w.t.Errorf("Complete(%s) accepted refund %d of a task charged %d", pt.id, refund, pt.cost)
	default:
		pt.completedBy = true
		pt.reported = append(pt.reported, got.CreditsRefunded)
	}
}

func (w *propWorker) fail(account string) {
	pt := w.pick(account)
	if pt == nil {
		return
	}
	got, err := w.ps.get().Fail(w.t.Context(), pt.id, task.Failure{Code: task.FailGeneration, Message: "property"}, w.now())
	if w.record(err) {
		return
	}
	w.m.mu.Lock()
	defer w.m.mu.Unlock()
	switch {
	case errors.Is(err, domain.ErrNotFound) && pt.created == maybe:
	case errors.Is(err, domain.ErrTerminal):
		pt.terminalFromFail = true
	case err != nil:
		w.t.Errorf("Fail(%s): %v", pt.id, err)
	case got.Status != task.Failed || got.CreditsRefunded != pt.cost:
		w.t.Errorf("Fail(%s) returned %s refunded %d, want failed refunded %d", pt.id, got.Status, got.CreditsRefunded, pt.cost)
	default:
		pt.failedBy = true
	}
}

// observe reads the account as it is now, while others change it.
func (w *propWorker) observe(account string) {
	a, err := w.ps.get().Account(w.t.Context(), account)
	switch {
	case w.record(err):
	case err != nil:
		w.t.Errorf("Account(%s): %v", account, err)
	case a.Credits < 0:
		w.t.Errorf("account %s seen with balance %d, want >= 0", account, a.Credits)
	case a.InFlight < 0 || a.InFlight > propMaxInFlight:
		w.t.Errorf("account %s seen with %d in flight, want 0..%d (every start's MaxInFlight)", account, a.InFlight, propMaxInFlight)
	}
}

// resolve settles the starts that ended in an outage: the task is there
// or it is not.
func (m *propModel) resolve(t *testing.T, s store.Store) {
	t.Helper()
	for _, pt := range m.tasks {
		if pt.created != maybe {
			continue
		}
		_, err := s.Task(t.Context(), pt.id)
		switch {
		case err == nil:
			pt.created = done
		case errors.Is(err, domain.ErrNotFound):
			pt.created = refused
		default:
			t.Fatalf("Task(%s): %v", pt.id, err)
		}
	}
}

// check compares account with the model: each task as its calls said,
// and balance = grants - charges + refunds, each sum found in the ledger.
func (m *propModel) check(t *testing.T, s store.Store, account string) {
	t.Helper()
	entries := mustLedger(t, s, account)
	var sum = map[string]int64{}
	grantNotes := map[string]int{}
	for _, e := range entries {
		sum[e.Kind] += e.Amount
		if e.Kind == domain.EntryGrant {
			grantNotes[e.Note]++
		}
	}

	grants := m.opening[account]
	for note, g := range m.grants {
		if g.account != account {
			continue
		}
		switch n := grantNotes[note]; {
		case n > 1:
			t.Errorf("account %s: grant %q is in the ledger %d times, want once", account, note, n)
		case n == 0 && g.outcome == done:
			t.Errorf("account %s: grant %q of %d succeeded but is not in the ledger", account, note, g.amount)
		case n == 1:
			grants += g.amount
		}
	}

	var charges, refunds int64
	perWindow := map[string]int{}
	perKey := map[string][]string{}  // idempotency key -> tasks started under it
	replays := map[string][]string{} // idempotency key -> tasks its errors named
	listed := map[string]bool{}
	for _, tk := range allTasks(t, s, account) {
		listed[tk.ID] = true
	}
	for _, pt := range m.byAccount[account] {
		if pt.replayOf != "" {
			replays[pt.idemKey] = append(replays[pt.idemKey], pt.replayOf)
		}
		if pt.created == refused {
			if listed[pt.id] {
				t.Errorf("task %s: its start was refused, but the account lists it", pt.id)
			}
			if _, err := s.Task(t.Context(), pt.id); !errors.Is(err, domain.ErrNotFound) {
				t.Errorf("task %s: its start was refused, but Task says %v, want domain.ErrNotFound", pt.id, err)
			}
			continue
		}
		if !listed[pt.id] {
			t.Errorf("task %s: started, but the account does not list it", pt.id)
		}
		tk := mustTask(t, s, pt.id)
		charges += int64(pt.cost)
		refunds += int64(tk.CreditsRefunded)
		perWindow[propWindowKey(account, pt.window)]++
		if pt.idemKey != "" {
			perKey[pt.idemKey] = append(perKey[pt.idemKey], pt.id)
		}
		if tk.AccountID != account || tk.CreditsCost != pt.cost {
			t.Errorf("task %s: account %s cost %d, want %s, %d", pt.id, tk.AccountID, tk.CreditsCost, account, pt.cost)
		}
		m.checkTask(t, pt, tk)
	}
	for key, n := range perWindow {
		if n > propWindowLimit {
			t.Errorf("counter %s: %d starts went through, more than its limit %d", key, n, propWindowLimit)
		}
		if m.exhausted[key] && n != propWindowLimit {
			t.Errorf("counter %s refused a start, but only %d of its %d starts went through", key, n, propWindowLimit)
		}
	}
	for key, ids := range perKey {
		if len(ids) > 1 {
			t.Errorf("account %s: idempotency key %q started %d tasks %v, want at most one", account, key, len(ids), ids)
		}
	}
	for key, named := range replays {
		for _, id := range named {
			if len(perKey[key]) != 1 || perKey[key][0] != id {
				t.Errorf("account %s: a start under idempotency key %q was refused as a replay of %s, but the key started %v",
					account, key, id, perKey[key])
			}
		}
	}

	if sum[domain.EntryGrant] != grants {
		t.Errorf("account %s: grant entries sum to %d, the grants that went through to %d", account, sum[domain.EntryGrant], grants)
	}
	if sum[domain.EntryCharge] != -charges {
		t.Errorf("account %s: charge entries sum to %d, want -%d for the tasks started", account, sum[domain.EntryCharge], charges)
	}
	if sum[domain.EntryRefund] != refunds {
		t.Errorf("account %s: refund entries sum to %d, the tasks' refunds to %d", account, sum[domain.EntryRefund], refunds)
	}
	if a := mustAccountState(t, s, account); a.Credits != grants-charges+refunds || a.Credits < 0 {
		t.Errorf("account %s: balance %d, want grants %d - charges %d + refunds %d = %d (and >= 0)",
			account, a.Credits, grants, charges, refunds, grants-charges+refunds)
	}
}

// checkTask compares a task with what the calls on it were told.
func (m *propModel) checkTask(t *testing.T, pt *propTask, tk task.Task) {
	t.Helper()
	if pt.failedBy && pt.completedBy {
		t.Errorf("task %s: both Fail and Complete succeeded on it", pt.id)
	}
	switch tk.Status {
	case task.Failed:
		if pt.completedBy || pt.terminalFromFail {
			t.Errorf("task %s is failed, but a Complete succeeded or a Fail was told it had completed", pt.id)
		}
		if tk.CreditsRefunded != pt.cost {
			t.Errorf("failed task %s: refunded %d, want its cost %d", pt.id, tk.CreditsRefunded, pt.cost)
		}
	case task.Completed:
		if pt.failedBy || pt.terminalFromComplete {
			t.Errorf("task %s is completed, but a Fail succeeded or a Complete was told it had failed", pt.id)
		}
		if !pt.refunds[tk.CreditsRefunded] {
			t.Errorf("completed task %s: refunded %d, which no Complete asked for (asked %v)", pt.id, tk.CreditsRefunded, slices.Sorted(maps.Keys(pt.refunds)))
		}
		for _, r := range pt.reported {
			if r != tk.CreditsRefunded {
				t.Errorf("completed task %s: a Complete reported refund %d, the task has %d", pt.id, r, tk.CreditsRefunded)
			}
		}
		if len(tk.Videos) == 0 {
			t.Errorf("completed task %s has no videos", pt.id)
		}
	default:
		if pt.failedBy || pt.completedBy || pt.terminalFromFail || pt.terminalFromComplete {
			t.Errorf("task %s is %s, but a call was told it had finished", pt.id, tk.Status)
		}
		if tk.CreditsRefunded != 0 {
			t.Errorf("%s task %s: refunded %d, want 0", tk.Status, pt.id, tk.CreditsRefunded)
		}
	}
}
