package devstack

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"time"

	"github.com/genvideo/gen/shared/admin"
	"github.com/genvideo/gen/shared/devkey"
	"github.com/genvideo/gen/shared/httpapi"
	"github.com/genvideo/gen/shared/httpguard"
	"github.com/genvideo/gen/shared/wire"
)

// Serve runs the local service until ctx is done: it builds the stack,
// makes sure the dev key exists, prints how to use it to out, and serves
// HTTP on cfg.Addr through httpguard, which refuses requests of ambiguous
// framing and bounds the time a client may take (cfg.Timeouts). On
// shutdown running generations stop; the next start picks them up again.
func Serve(ctx context.Context, cfg Config, out io.Writer) error {
	ln, err := net.Listen("tcp", cfg.Addr)
	if err != nil {
		return fmt.Errorf("listen on %s (set GEN_ADDR to use another address): %w", cfg.Addr, err)
	}
	cfg.Addr = ln.Addr().String()
	stack, err := New(ctx, cfg)
	if err != nil {
		ln.Close()
		return err
	}
	defer stack.Close()

	key, created, err := devkey.Ensure(ctx, cfg.DataDir, admin.New(stack.Store), stack.Store)
	if err != nil {
		ln.Close()
		return err
	}
	acct := ""
	if k, err := stack.Store.KeyByHash(ctx, hashOf(key)); err == nil {
		if a, err := stack.Store.Account(ctx, k.AccountID); err == nil {
			acct = fmt.Sprintf(" (account %s, %d credits)", a.ID, a.Credits)
		}
	}
	state := "existing"
	if created {
		state = "new"
	}
	fmt.Fprintf(out, "\ngen is running on %s\n", cfg.publicURL())
	fmt.Fprintf(out, "  data:        %s\n", cfg.DataDir)
	fmt.Fprintf(out, "  dev API key: %s  [%s%s; also in %s]\n\n", key, state, acct, DevKeyPath(cfg.DataDir))
	fmt.Fprintf(out, "Try:\n  curl -s %s/api/gen/models -H 'X-API-Key: %s'\n", cfg.publicURL(), key)
	fmt.Fprintf(out, "  or open %s/ in a browser (the playground) and paste the key\n\n", cfg.publicURL())

	srv := httpguard.NewServer(stack.Handler(), httpguard.Config{
		Timeouts: cfg.Timeouts,
		Refuse: func(w http.ResponseWriter, why httpguard.Refusal) {
			stack.logger.Info("request refused for its framing", "header", why.Header, "reason", why.Message)
			httpapi.WriteError(w, &httpapi.Error{Status: http.StatusBadRequest, Code: wire.CodeValidation,
				Field: why.Header, Message: why.Message})
		},
	})
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return fmt.Errorf("serve: %w", err)
	case <-ctx.Done():
	}
	shutdown, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := srv.Shutdown(shutdown); err != nil && !errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("shutdown: %w", err)
	}
	return nil
}
