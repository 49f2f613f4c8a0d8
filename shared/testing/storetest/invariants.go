package storetest

import (
	"testing"

	"github.com/genvideo/gen/shared/store"
	"github.com/genvideo/gen/shared/store/audit"
	"github.com/genvideo/gen/shared/task"
)

// CheckInvariants fails the test if the account's books do not balance
// (see audit.Account for what that means). Call it when no change to the
// account is under way.
func CheckInvariants(t *testing.T, s store.Store, accountID string) {
	t.Helper()
	problems, err := audit.Account(t.Context(), s, accountID)
	if err != nil {
		t.Fatalf("CheckInvariants: %v", err)
	}
	for _, p := range problems {
		t.Error(p)
	}
}

// allTasks pages through every task of the account.
func allTasks(t *testing.T, s store.Store, accountID string) []task.Task {
	t.Helper()
	all, err := audit.Tasks(t.Context(), s, accountID)
	if err != nil {
		t.Fatalf("CheckInvariants: %v", err)
	}
	return all
}
