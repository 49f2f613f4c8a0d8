package storetest

import (
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/genvideo/gen/shared/domain"
	"github.com/genvideo/gen/shared/store"
	"github.com/genvideo/gen/shared/task"
)

// race runs fn(i) for i in [0, n) on n goroutines released together, and
// waits for them all.
func race(n int, fn func(i int)) {
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range n {
		wg.Go(func() {
			<-start
			fn(i)
		})
	}
	close(start)
	wg.Wait()
}

// watchBalance reads the account's balance until stop is closed and
// returns the lowest it saw, so that a race can show the balance never
// went below zero, not only that it ended above it.
func watchBalance(t *testing.T, s store.Store, account string, stop <-chan struct{}) <-chan int64 {
	low := make(chan int64, 1)
	go func() {
		lowest := int64(1 << 62)
		for {
			if a, err := s.Account(t.Context(), account); err == nil && a.Credits < lowest {
				lowest = a.Credits
			}
			select {
			case <-stop:
				low <- lowest
				return
			default:
			}
		}
	}()
	return low
}

// raceTasks are n tasks of account costing cost each, with distinct ids.
func raceTasks(account string, n, cost int) []task.Task {
	tasks := make([]task.Task, n)
	for i := range tasks {
		c := at(time.Duration(i) * time.Millisecond)
		tasks[i] = newTask(account, taskID(c, fmt.Sprintf("race%06d", i)), cost, c)
	}
	return tasks
}

// (a) An account that can afford 3 tasks, 50 concurrent starts.
func testRaceCharges(t *testing.T, s store.Store) {
	mustAccount(t, s, "acct-a", 30)
	tasks := raceTasks("acct-a", 50, 10)
	errs := make([]error, len(tasks))
	balances := make([]int64, len(tasks))
	stop := make(chan struct{})
	low := watchBalance(t, s, "acct-a", stop)
	race(len(tasks), func(i int) {
		var ch domain.Charged
		ch, errs[i] = s.CreateTask(t.Context(), tasks[i], domain.StartGuard{})
		balances[i] = ch.Balance
	})
	close(stop)

	ok := 0
	for i, err := range errs {
		var ice *domain.InsufficientCreditsError
		switch {
		case err == nil:
			ok++
			if balances[i] < 0 || balances[i] > 20 || balances[i]%10 != 0 {
				t.Errorf("CreateTask %d returned balance %d, want 0, 10 or 20", i, balances[i])
			}
		case errors.As(err, &ice):
			if ice.Required != 10 || ice.Available >= 10 || ice.Available < 0 {
				t.Errorf("CreateTask %d: %+v, want Required 10, Available in [0, 10)", i, *ice)
			}
		default:
			t.Errorf("CreateTask %d: %v, want success or *domain.InsufficientCreditsError", i, err)
		}
	}
	if ok != 3 {
		t.Errorf("%d of 50 concurrent starts succeeded on an account affording 3, want 3", ok)
	}
	if l := <-low; l < 0 {
		t.Errorf("the balance was %d during the race, want never below 0", l)
	}
	wantHolding(t, s, "acct-a", 0, 3, "the race")
	CheckInvariants(t, s, "acct-a")
}

// (b) MaxInFlight 5 and credits for all, 30 concurrent starts.
func testRaceInFlight(t *testing.T, s store.Store) {
	mustAccount(t, s, "acct-a", 10000)
	tasks := raceTasks("acct-a", 30, 10)
	errs := make([]error, len(tasks))
	race(len(tasks), func(i int) {
		_, errs[i] = s.CreateTask(t.Context(), tasks[i], domain.StartGuard{MaxInFlight: 5})
	})
	ok := 0
	for i, err := range errs {
		var ife *domain.InFlightLimitError
		switch {
		case err == nil:
			ok++
		case errors.As(err, &ife):
		default:
			t.Errorf("CreateTask %d: %v, want success or *domain.InFlightLimitError", i, err)
		}
	}
	if ok != 5 {
		t.Errorf("%d of 30 concurrent starts succeeded with MaxInFlight 5, want 5", ok)
	}
	if a := mustAccountState(t, s, "acct-a"); a.Credits != 10000-50 || a.InFlight != 5 {
		t.Errorf("after the race: %d credits, %d in flight; want %d, 5", a.Credits, a.InFlight, 10000-50)
	}
	CheckInvariants(t, s, "acct-a")
}

// (c) Fail and Complete racing on one task: one of them wins, once.
func testRaceFailComplete(t *testing.T, s store.Store) {
	tk := oneTask(t, s, 20)
	mustMarkProcessing(t, s, tk.ID, at(time.Second))
	const n = 20
	results := make([]task.Task, n)
	errs := make([]error, n)
	race(n, func(i int) {
		if i%2 == 0 {
			results[i], errs[i] = s.Fail(t.Context(), tk.ID, task.Failure{Code: task.FailGeneration, Message: "boom"}, at(time.Minute))
		} else {
			results[i], errs[i] = s.Complete(t.Context(), tk.ID, domain.Completion{
				Videos: []task.Video{{Key: "v0", MimeType: "video/mp4", Size: 10}}, Refund: 5}, at(time.Minute))
		}
	})

	final := mustTask(t, s, tk.ID)
	if !final.Status.Terminal() {
		t.Fatalf("after racing Fail and Complete the task is %s, want terminal", final.Status)
	}
	for i, err := range errs {
		call, winner := "Fail", task.Failed
		if i%2 == 1 {
			call, winner = "Complete", task.Completed
		}
		switch {
		case err == nil && winner == final.Status:
			if results[i].Status != final.Status {
				t.Errorf("%s %d returned status %s, but the task ended %s", call, i, results[i].Status, final.Status)
			}
		case errors.Is(err, domain.ErrTerminal) && winner != final.Status:
		default:
			t.Errorf("%s %d on a task that ended %s: %v", call, i, final.Status, err)
		}
	}
	wantRefund, wantCredits := 20, int64(100)
	if final.Status == task.Completed {
		wantRefund, wantCredits = 5, 85
	}
	refunds := taskEntries(mustLedger(t, s, "acct-a"), tk.ID, domain.EntryRefund)
	if len(refunds) != 1 || refunds[0].Amount != int64(wantRefund) {
		t.Errorf("%s task: refund entries %+v, want one of %d", final.Status, refunds, wantRefund)
	}
	if a := mustAccountState(t, s, "acct-a"); a.Credits != wantCredits || a.InFlight != 0 {
		t.Errorf("after the race: %d credits, %d in flight; want %d, 0", a.Credits, a.InFlight, wantCredits)
	}
	CheckInvariants(t, s, "acct-a")
}

// (c) Fail racing Fail on one task: one refund.
func testRaceFail(t *testing.T, s store.Store) {
	tk := oneTask(t, s, 20)
	errs := make([]error, 20)
	race(len(errs), func(i int) {
		_, errs[i] = s.Fail(t.Context(), tk.ID, task.Failure{Code: task.FailTimeout, Message: fmt.Sprint(i)}, at(time.Minute))
	})
	for i, err := range errs {
		if err != nil {
			t.Errorf("Fail %d: %v, want nil", i, err)
		}
	}
	refunds := taskEntries(mustLedger(t, s, "acct-a"), tk.ID, domain.EntryRefund)
	if len(refunds) != 1 || refunds[0].Amount != 20 {
		t.Errorf("refund entries %+v, want one of 20", refunds)
	}
	wantHolding(t, s, "acct-a", 100, 0, "the race")
	CheckInvariants(t, s, "acct-a")
}

// (d) 100 concurrent Takes on a counter of 60.
func testRaceTake(t *testing.T, s store.Store) {
	c := domain.Window{Key: "rpm:key-1:29385120", Limit: 60, ExpiresAt: t0.Add(time.Minute)}
	const n = 100
	used := make([]int, n)
	errs := make([]error, n)
	race(n, func(i int) {
		var u []int
		u, errs[i] = s.Take(t.Context(), []domain.Window{c}, at(time.Duration(i)*time.Millisecond))
		if len(u) == 1 {
			used[i] = u[0]
		}
	})
	var counts []int
	for i, err := range errs {
		var le *domain.LimitError
		switch {
		case err == nil:
			counts = append(counts, used[i])
		case errors.As(err, &le):
		default:
			t.Errorf("Take %d: %v, want success or *domain.LimitError", i, err)
		}
	}
	slices.Sort(counts)
	want := make([]int, 60)
	for i := range want {
		want[i] = i + 1
	}
	if !slices.Equal(counts, want) {
		t.Errorf("%d of %d Takes succeeded with counts %v, want 60 with each of 1..60 once", len(counts), n, counts)
	}
}

// (d2) 50 concurrent Takes of a minute and a day window, the day's room
// 30: 30 are taken, each with its own day count, the 20 refusals name
// the day, and nothing of a refused Take stays in the minute.
func testRaceTakeTwo(t *testing.T, s store.Store) {
	minute := domain.Window{Key: "rpm:key-2:29385120", Limit: 1000, ExpiresAt: t0.Add(time.Minute)}
	day := domain.Window{Key: "rpd:key-2:20406", Limit: 30, ExpiresAt: t0.Add(24 * time.Hour)}
	const n = 50
	days := make([]int, n)
	errs := make([]error, n)
	race(n, func(i int) {
		u, err := s.Take(t.Context(), []domain.Window{minute, day}, at(time.Duration(i)*time.Millisecond))
		errs[i] = err
		if len(u) == 2 {
			days[i] = u[1]
		}
	})
	var counts []int
	for i, err := range errs {
		var le *domain.LimitError
		switch {
		case err == nil:
			counts = append(counts, days[i])
		case errors.As(err, &le) && le.Window.Key == day.Key:
		default:
			t.Errorf("Take %d: %v, want success or a *domain.LimitError naming the day", i, err)
		}
	}
	slices.Sort(counts)
	want := make([]int, 30)
	for i := range want {
		want[i] = i + 1
	}
	if !slices.Equal(counts, want) {
		t.Errorf("%d of %d Takes succeeded with day counts %v, want 30 with each of 1..30 once", len(counts), n, counts)
	}
	if used, err := s.Take(t.Context(), []domain.Window{minute}, at(time.Second)); err != nil || !slices.Equal(used, []int{31}) {
		t.Errorf("the minute after the race = %v, %v; want 31: the 30 taken and this one", used, err)
	}
}

// (e) Grants, starts and failures at once: the books still balance.
func testRaceGrantsAndCharges(t *testing.T, s store.Store) {
	mustAccount(t, s, "acct-a", 50)
	const n = 20
	tasks := raceTasks("acct-a", n, 10)
	var created, failed atomic.Int64
	var mu sync.Mutex
	var errs []error
	report := func(err error) {
		mu.Lock()
		errs = append(errs, err)
		mu.Unlock()
	}
	race(2*n, func(i int) {
		if i%2 == 0 {
			if _, err := s.Grant(t.Context(), "acct-a", 10, "top-up", at(time.Second)); err != nil {
				report(fmt.Errorf("Grant: %w", err))
			}
			return
		}
		tk := tasks[i/2]
		_, err := s.CreateTask(t.Context(), tk, domain.StartGuard{})
		var ice *domain.InsufficientCreditsError
		if errors.As(err, &ice) {
			return
		}
		if err != nil {
			report(fmt.Errorf("CreateTask: %w", err))
			return
		}
		created.Add(1)
		if i%4 == 1 {
			if _, err := s.Fail(t.Context(), tk.ID, task.Failure{Code: task.FailInternal, Message: "x"}, at(time.Minute)); err != nil {
				report(fmt.Errorf("Fail: %w", err))
				return
			}
			failed.Add(1)
		}
	})
	for _, err := range errs {
		t.Error(err)
	}
	want := 50 + 10*n - 10*created.Load() + 10*failed.Load()
	a := mustAccountState(t, s, "acct-a")
	if a.Credits != want {
		t.Errorf("balance %d, want 50 + %d granted - %d charged + %d refunded = %d",
			a.Credits, 10*n, 10*created.Load(), 10*failed.Load(), want)
	}
	if created.Load() < 5 {
		// 50 credits up front pay for 5 starts whatever the interleaving.
		t.Errorf("%d starts succeeded, want at least 5", created.Load())
	}
	CheckInvariants(t, s, "acct-a")
}
