// Package admin holds the operator's actions: creating accounts and API
// keys, granting credits, revoking keys. The genctl command and the local
// stack's first-start bootstrap both go through it, so a key is made one
// way only: the full key is returned once and only its hash is stored.
package admin

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"math/big"
	"strings"
	"time"

	"github.com/genvideo/gen/shared/apikey"
	"github.com/genvideo/gen/shared/domain"
	"github.com/genvideo/gen/shared/ratelimit"
	"github.com/genvideo/gen/shared/store"
)

// Store is the part of store.Store the operator's actions use.
type Store interface {
	CreateAccount(ctx context.Context, a domain.Account) error
	Account(ctx context.Context, id string) (domain.Account, error)
	Grant(ctx context.Context, accountID string, amount int64, note string, at time.Time) (int64, error)
	Ledger(ctx context.Context, accountID string) ([]domain.LedgerEntry, error)
	CreateKey(ctx context.Context, k store.Key) error
	Keys(ctx context.Context, accountID string) ([]store.Key, error)
	RevokeKey(ctx context.Context, id string, at time.Time) error
	SetKeyCaps(ctx context.Context, id string, u store.CapsUpdate) (store.SpendCaps, error)
}

// Admin performs operator actions on a store.
type Admin struct {
	Store Store
	Now   func() time.Time
}

// New returns an Admin on s using the wall clock.
func New(s Store) *Admin { return &Admin{Store: s, Now: time.Now} }

// KeyRequest describes a key to create.
type KeyRequest struct {
	Name string
	// AccountID names an existing account; empty creates a new account.
	AccountID string
	// Credits granted to a new account, or added to an existing one.
	Credits int64
	// Tier is ratelimit.Standard, Pro or Enterprise; empty means Standard.
	Tier string
	// Limits sets an enterprise key's figures; zero fields take Pro's.
	// Other tiers have fixed limits and must leave it zero.
	Limits store.KeyLimits
	// MaxCreditsPerDay and MaxCreditsPerMonth are the key's spending
	// caps (store.SpendCaps), in credits per UTC day and month; 0 is none.
	MaxCreditsPerDay   int64
	MaxCreditsPerMonth int64
}

// CreatedKey is a new key. APIKey is the only copy of the secret.
type CreatedKey struct {
	APIKey    string          `json:"apiKey"`
	KeyID     string          `json:"keyId"`
	AccountID string          `json:"accountId"`
	Name      string          `json:"name"`
	Tier      string          `json:"tier"`
	Credits   int64           `json:"credits"`
	Limits    store.KeyLimits `json:"limits"`
	Caps      store.SpendCaps `json:"-"`
}

// ErrInvalid marks a request the operator must correct.
var ErrInvalid = errors.New("invalid request")

// CreateKey creates a key, and its account when req.AccountID is empty.
func (a *Admin) CreateKey(ctx context.Context, req KeyRequest) (CreatedKey, error) {
	name := strings.TrimSpace(req.Name)
	if name == "" || len(name) > 100 {
		return CreatedKey{}, fmt.Errorf("%w: a key needs a name of 1 to 100 characters", ErrInvalid)
	}
	if req.Credits < 0 {
		return CreatedKey{}, fmt.Errorf("%w: credits must not be negative", ErrInvalid)
	}
	if req.MaxCreditsPerDay < 0 || req.MaxCreditsPerMonth < 0 {
		return CreatedKey{}, fmt.Errorf("%w: a spending cap must not be negative (0 is none)", ErrInvalid)
	}
	tier := req.Tier
	if tier == "" {
		tier = ratelimit.Standard
	}
	if tier != ratelimit.Enterprise && req.Limits != (store.KeyLimits{}) {
		return CreatedKey{}, fmt.Errorf("%w: custom limits are for enterprise keys only", ErrInvalid)
	}
	limits, err := ratelimit.ForTier(tier, req.Limits)
	if err != nil {
		return CreatedKey{}, fmt.Errorf("%w: %v", ErrInvalid, err)
	}
	now := a.Now().UTC()

	accountID := req.AccountID
	if accountID == "" {
		accountID = NewAccountID()
		if err := a.Store.CreateAccount(ctx, domain.Account{ID: accountID, CreatedAt: now}); err != nil {
			return CreatedKey{}, fmt.Errorf("create account %s: %w", accountID, err)
		}
	} else if _, err := a.Store.Account(ctx, accountID); err != nil {
		return CreatedKey{}, fmt.Errorf("account %s: %w", accountID, err)
	}
	if req.Credits > 0 {
		if _, err := a.Store.Grant(ctx, accountID, req.Credits, "granted with key "+name, now); err != nil {
			return CreatedKey{}, fmt.Errorf("grant %d credits to %s: %w", req.Credits, accountID, err)
		}
	}
	acct, err := a.Store.Account(ctx, accountID)
	if err != nil {
		return CreatedKey{}, fmt.Errorf("account %s: %w", accountID, err)
	}

	secret := apikey.New()
	k := store.Key{
		ID:        apikey.NewID(),
		Hash:      apikey.Hash(secret),
		AccountID: accountID,
		Name:      name,
		Tier:      tier,
		Limits:    limits,
		Caps:      store.SpendCaps{MaxPerDay: req.MaxCreditsPerDay, MaxPerMonth: req.MaxCreditsPerMonth},
		CreatedAt: now,
	}
	if err := a.Store.CreateKey(ctx, k); err != nil {
		return CreatedKey{}, fmt.Errorf("create key for %s: %w", accountID, err)
	}
	return CreatedKey{APIKey: secret, KeyID: k.ID, AccountID: accountID, Name: name,
		Tier: tier, Credits: acct.Credits, Limits: limits, Caps: k.Caps}, nil
}

// Grant adds credits to an account and returns the new balance.
func (a *Admin) Grant(ctx context.Context, accountID string, amount int64, note string) (int64, error) {
	if amount <= 0 {
		return 0, fmt.Errorf("%w: the amount must be a positive number of credits", ErrInvalid)
	}
	if note == "" {
		note = "operator grant"
	}
	bal, err := a.Store.Grant(ctx, accountID, amount, note, a.Now().UTC())
	if err != nil {
		return 0, fmt.Errorf("grant %d credits to %s: %w", amount, accountID, err)
	}
	return bal, nil
}

// Statement is an account's balance with the ledger that explains it.
type Statement struct {
	Account domain.Account
	Ledger  []domain.LedgerEntry
}

// Show returns an account's balance and ledger.
func (a *Admin) Show(ctx context.Context, accountID string) (Statement, error) {
	acct, err := a.Store.Account(ctx, accountID)
	if err != nil {
		return Statement{}, fmt.Errorf("account %s: %w", accountID, err)
	}
	entries, err := a.Store.Ledger(ctx, accountID)
	if err != nil {
		return Statement{}, fmt.Errorf("ledger of %s: %w", accountID, err)
	}
	return Statement{Account: acct, Ledger: entries}, nil
}

// Keys lists the keys of an account, or every key when accountID is "".
func (a *Admin) Keys(ctx context.Context, accountID string) ([]store.Key, error) {
	keys, err := a.Store.Keys(ctx, accountID)
	if err != nil {
		return nil, fmt.Errorf("list keys: %w", err)
	}
	return keys, nil
}

// Revoke disables a key at once.
func (a *Admin) Revoke(ctx context.Context, keyID string) error {
	if err := a.Store.RevokeKey(ctx, keyID, a.Now().UTC()); err != nil {
		return fmt.Errorf("revoke %s: %w", keyID, err)
	}
	return nil
}

// CapsUpdate is an operator's change to a key's spending caps, in
// credits; nil leaves one as it is, 0 removes it. The holder's own caps
// (lowered through the API) stay: the lower is in force.
type CapsUpdate struct {
	MaxCreditsPerDay   *int64
	MaxCreditsPerMonth *int64
}

// SetCaps changes the operator's spending caps of key keyID and returns
// the key's caps after. It writes the operator's caps it is given and
// nothing else: the holder's, which the holder may be changing at the
// same moment, stay as the store has them.
func (a *Admin) SetCaps(ctx context.Context, keyID string, u CapsUpdate) (store.SpendCaps, error) {
	up := store.CapsUpdate{MaxPerDay: u.MaxCreditsPerDay, MaxPerMonth: u.MaxCreditsPerMonth}
	if up.Negative() {
		return store.SpendCaps{}, fmt.Errorf("%w: a spending cap must not be negative (0 is none)", ErrInvalid)
	}
	caps, err := a.Store.SetKeyCaps(ctx, keyID, up)
	if err != nil {
		return store.SpendCaps{}, fmt.Errorf("set the caps of %s: %w", keyID, err)
	}
	return caps, nil
}

// NewAccountID returns a fresh account id, acct_ and 12 base36 characters.
func NewAccountID() string {
	const alphabet = "0123456789abcdefghijklmnopqrstuvwxyz"
	b := []byte("acct_")
	max := big.NewInt(int64(len(alphabet)))
	for i := 0; i < 12; i++ {
		n, err := rand.Int(rand.Reader, max)
		if err != nil {
			panic(fmt.Sprintf("crypto/rand: %v", err))
		}
		b = append(b, alphabet[n.Int64()])
	}
	return string(b)
}
