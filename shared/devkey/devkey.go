// Package devkey keeps the dev account's API key of a local stack: made
// on first start, written to the data directory for the walk-through to
// read. Both local stacks (`make run` and `make run-aws-local`) use it,
// so that it does not tie the AWS assembly to the embedded stack.
package devkey

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/genvideo/gen/shared/admin"
	"github.com/genvideo/gen/shared/apikey"
	"github.com/genvideo/gen/shared/domain"
	"github.com/genvideo/gen/shared/store"
)

// Credits is what the dev account starts with.
const Credits = 10000

// Path is where the local dev API key is kept.
//
// The store holds only the key's hash, as everywhere. The key itself is
// written to this file (mode 0600, inside the data dir) purely as a local
// convenience, so that `make run` can print it at every start and the
// README's walk-through can read it. Deployed stacks have no such file.
func Path(dataDir string) string { return filepath.Join(dataDir, "dev-api-key") }

// Ensure returns the dev account's API key, creating the account
// (with Credits credits) and the key on first use. created reports
// whether it was made now. A key file whose key is unknown to the store
// or revoked (say, the database was deleted) is replaced.
func Ensure(ctx context.Context, dataDir string, a *admin.Admin, s interface {
	KeyByHash(ctx context.Context, hash string) (store.Key, error)
}) (key string, created bool, err error) {
	path := Path(dataDir)
	if b, err := os.ReadFile(path); err == nil {
		key := strings.TrimSpace(string(b))
		if apikey.WellFormed(key) {
			k, err := s.KeyByHash(ctx, apikey.Hash(key))
			if err == nil && !k.Revoked() {
				return key, false, nil
			}
			if err != nil && !errors.Is(err, domain.ErrNotFound) {
				return "", false, fmt.Errorf("check dev key: %w", err)
			}
		}
	} else if !errors.Is(err, os.ErrNotExist) {
		return "", false, fmt.Errorf("read dev key: %w", err)
	}
	k, err := a.CreateKey(ctx, admin.KeyRequest{Name: "dev", Credits: Credits})
	if err != nil {
		return "", false, fmt.Errorf("create dev key: %w", err)
	}
	if err := os.WriteFile(path, []byte(k.APIKey+"\n"), 0o600); err != nil {
		return "", false, fmt.Errorf("write dev key: %w", err)
	}
	return k.APIKey, true, nil
}
