package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/genvideo/gen/shared/admin"
	"github.com/genvideo/gen/shared/awsstack"
	"github.com/genvideo/gen/shared/devstack"
	"github.com/genvideo/gen/shared/store"
	"github.com/genvideo/gen/shared/usageplans"
)

func newRoot() *cobra.Command {
	opts := &options{}
	root := &cobra.Command{
		Use:   "genctl",
		Short: "Operate the gen video service: accounts, API keys, credits, the margin report",
		Long: "Operate the gen video service: accounts, API keys, credits, the margin report.\n" +
			"Locally it works on the data directory of `make run`. With --aws (or GEN_BACKEND=aws) it works\n" +
			"on a deployed stack: the DynamoDB tables of --table-prefix, and API Gateway's usage plans,\n" +
			"to which every new key is attached by tier (infra/docs/deploy.md).",
		SilenceUsage:  true,
		SilenceErrors: true,
		PersistentPreRunE: func(cmd *cobra.Command, _ []string) error {
			if cmd.Flags().Changed("aws") {
				return nil
			}
			if os.Getenv(envBackend) == "" {
				// The data directory of make run-aws-local: its
				// DynamoDB Local and usage plans (infra/docs/deploy.md).
				if on, err := useLocalDeployment(opts); on || err != nil {
					return err
				}
			}
			aws, err := backendFromEnv()
			opts.aws.enabled = aws
			return err
		},
	}
	f := root.PersistentFlags()
	f.StringVar(&opts.dataDir, "data-dir", devstack.DataDirFromEnv(),
		"data directory of the local service (env GEN_DATA_DIR)")
	f.BoolVar(&opts.aws.enabled, "aws", false, "work on the AWS deployment instead of the local service (env "+envBackend+"=aws)")
	f.StringVar(&opts.aws.region, "region", "", "AWS region of the stack (default: the AWS configuration's, e.g. AWS_REGION)")
	f.StringVar(&opts.aws.tablePrefix, "table-prefix", os.Getenv(awsstack.EnvTablePrefix),
		"with --aws: prefix of the stack's DynamoDB tables, its output TablePrefix (env "+awsstack.EnvTablePrefix+")")
	f.StringVar(&opts.aws.planStandard, "usage-plan-standard", os.Getenv(usageplans.EnvStandard),
		"with --aws: usage plan of Standard keys, the stack output StandardUsagePlanId (env "+usageplans.EnvStandard+")")
	f.StringVar(&opts.aws.planPro, "usage-plan-pro", os.Getenv(usageplans.EnvPro),
		"with --aws: usage plan of Pro keys, the stack output ProUsagePlanId (env "+usageplans.EnvPro+")")

	keys := &cobra.Command{Use: "keys", Short: "Create, list and revoke API keys"}
	keys.AddCommand(keysCreate(opts), keysList(opts), keysUpdate(opts), keysRevoke(opts), keysWire(opts))
	credits := &cobra.Command{Use: "credits", Short: "Grant and show credits"}
	credits.AddCommand(creditsGrant(opts), creditsShow(opts))
	root.AddCommand(keys, credits, report(opts), invokeEnv(opts), invoke(opts))
	return root
}

// withAdmin opens the backend for one command that needs only the store.
func withAdmin(cmd *cobra.Command, opts *options, fn func(a *admin.Admin) error) error {
	return withBackend(cmd.Context(), opts, func(b *backend) error { return fn(b.admin) })
}

func keysCreate(opts *options) *cobra.Command {
	var req admin.KeyRequest
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "create --name NAME",
		Short: "Create an API key (and its account unless --account is given)",
		Long: "Create an API key. Without --account a new account is created.\n" +
			"The full key is printed once: only its hash is stored.\n" +
			"Enterprise keys take --rpm, --rpd, --starts-per-minute and --max-in-flight (default: Pro's figures).",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return withBackend(cmd.Context(), opts, func(b *backend) error {
				if b.plans != nil {
					if err := b.plans.Check(req.Tier); err != nil {
						return err
					}
				}
				k, err := b.admin.CreateKey(cmd.Context(), req)
				if err != nil {
					return err
				}
				// On AWS the key is useless until its gateway key is in its
				// tier's usage plan. If that fails the key is printed all
				// the same (it is the only copy) with how to finish.
				var wired *usageplans.Wired
				var wireErr error
				if b.plans != nil {
					w, err := b.plans.Wire(cmd.Context(), storeKey(k))
					if err == nil {
						wired = &w
					}
					wireErr = err
				}
				out := cmd.OutOrStdout()
				if asJSON {
					m := map[string]any{
						"apiKey": k.APIKey, "accountId": k.AccountID, "name": k.Name,
						"tier": k.Tier, "credits": k.Credits, "keyId": k.KeyID,
					}
					if wired != nil {
						m["usagePlan"] = wired
					}
					if err := writeJSON(out, m); err != nil {
						return err
					}
				} else {
					fmt.Fprintf(out, "API key:  %s\n", k.APIKey)
					fmt.Fprintf(out, "key id:   %s\naccount:  %s\nname:     %s\ntier:     %s\ncredits:  %d\n",
						k.KeyID, k.AccountID, k.Name, k.Tier, k.Credits)
					fmt.Fprintf(out, "limits:   %d req/min, %d req/day, %d starts/min, %d in flight\n",
						k.Limits.RequestsPerMinute, k.Limits.RequestsPerDay, k.Limits.StartsPerMinute, k.Limits.MaxInFlight)
					if k.Caps != (store.SpendCaps{}) {
						fmt.Fprintf(out, "caps:     %s\n", capsText(k.Caps))
					}
					if wired != nil {
						fmt.Fprintf(out, "usage plan: %s (gateway key %s)\n", wired.UsagePlanID, wired.GatewayKeyID)
					}
					fmt.Fprintln(out, "The key is shown only now: store it safely.")
				}
				if wireErr != nil {
					return fmt.Errorf("the key was created but is not yet wired to its usage plan, so API Gateway refuses it: %w\n"+
						"finish with: genctl --aws keys wire %s", wireErr, k.KeyID)
				}
				return nil
			})
		},
	}
	f := cmd.Flags()
	f.StringVar(&req.Name, "name", "", "descriptive name of the key (required); shown as apiKey in history")
	f.StringVar(&req.AccountID, "account", "", "existing account to add the key to")
	f.Int64Var(&req.Credits, "credits", 0, "credits to grant to the account")
	f.StringVar(&req.Tier, "tier", "standard", "rate-limit tier: standard, pro or enterprise")
	f.IntVar(&req.Limits.RequestsPerMinute, "rpm", 0, "enterprise: requests per minute")
	f.IntVar(&req.Limits.RequestsPerDay, "rpd", 0, "enterprise: requests per day")
	f.IntVar(&req.Limits.StartsPerMinute, "starts-per-minute", 0, "enterprise: generation starts per minute")
	f.IntVar(&req.Limits.MaxInFlight, "max-in-flight", 0, "enterprise: generations pending or processing at once")
	f.Int64Var(&req.MaxCreditsPerDay, "max-credits-per-day", 0, "spending cap: credits the key may spend per UTC day (0: none)")
	f.Int64Var(&req.MaxCreditsPerMonth, "max-credits-per-month", 0, "spending cap: credits the key may spend per UTC calendar month (0: none)")
	f.BoolVar(&asJSON, "json", false, "print the result as JSON")
	_ = cmd.MarkFlagRequired("name")
	return cmd
}

func keysUpdate(opts *options) *cobra.Command {
	var day, month int64
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "update KEY_ID [--max-credits-per-day N] [--max-credits-per-month N]",
		Short: "Change an API key's spending caps",
		Long: "Change an API key's spending caps: the credits it may spend (charged less refunded) per UTC day\n" +
			"and per UTC calendar month; 0 removes a cap, a flag left out leaves it as it is. The key's holder\n" +
			"may lower them through the API (PATCH /api/gen/credits) but never raise them above these.",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			var u admin.CapsUpdate
			if cmd.Flags().Changed("max-credits-per-day") {
				u.MaxCreditsPerDay = &day
			}
			if cmd.Flags().Changed("max-credits-per-month") {
				u.MaxCreditsPerMonth = &month
			}
			if u == (admin.CapsUpdate{}) {
				return fmt.Errorf("nothing to update: give --max-credits-per-day or --max-credits-per-month")
			}
			return withAdmin(cmd, opts, func(a *admin.Admin) error {
				caps, err := a.SetCaps(cmd.Context(), args[0], u)
				if err != nil {
					return err
				}
				out := cmd.OutOrStdout()
				if asJSON {
					return writeJSON(out, map[string]any{"keyId": args[0], "spendingCaps": capsJSON(caps)})
				}
				fmt.Fprintf(out, "key %s: spending caps %s\n", args[0], capsText(caps))
				return nil
			})
		},
	}
	f := cmd.Flags()
	f.Int64Var(&day, "max-credits-per-day", 0, "credits the key may spend per UTC day (0: none)")
	f.Int64Var(&month, "max-credits-per-month", 0, "credits the key may spend per UTC calendar month (0: none)")
	f.BoolVar(&asJSON, "json", false, "print the result as JSON")
	return cmd
}

// capsJSON is a key's spending caps as genctl prints them.
func capsJSON(c store.SpendCaps) map[string]int64 {
	return map[string]int64{"maxCreditsPerDay": c.MaxPerDay, "maxCreditsPerMonth": c.MaxPerMonth,
		"holderCreditsPerDay": c.HolderPerDay, "holderCreditsPerMonth": c.HolderPerMonth}
}

// capsText is a key's spending caps in force, in words.
func capsText(c store.SpendCaps) string {
	show := func(v int64) string {
		if v == 0 {
			return "none"
		}
		return strconv.FormatInt(v, 10)
	}
	return fmt.Sprintf("%s per day, %s per month (operator %s/%s, holder %s/%s)", show(c.Day()), show(c.Month()),
		show(c.MaxPerDay), show(c.MaxPerMonth), show(c.HolderPerDay), show(c.HolderPerMonth))
}

func keysList(opts *options) *cobra.Command {
	var account string
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List API keys (never the keys themselves: only their ids and names)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return withAdmin(cmd, opts, func(a *admin.Admin) error {
				keys, err := a.Keys(cmd.Context(), account)
				if err != nil {
					return err
				}
				out := cmd.OutOrStdout()
				if asJSON {
					list := make([]map[string]any, 0, len(keys))
					for _, k := range keys {
						list = append(list, keyJSON(k))
					}
					return writeJSON(out, list)
				}
				tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
				fmt.Fprintln(tw, "KEY ID\tACCOUNT\tNAME\tTIER\tCREATED\tSTATUS")
				for _, k := range keys {
					status := "active"
					if k.Revoked() {
						status = "revoked " + k.RevokedAt.Format(time.RFC3339)
					}
					fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", k.ID, k.AccountID, k.Name, k.Tier,
						k.CreatedAt.Format(time.RFC3339), status)
				}
				return tw.Flush()
			})
		},
	}
	cmd.Flags().StringVar(&account, "account", "", "only this account's keys")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the result as JSON")
	return cmd
}

func keyJSON(k store.Key) map[string]any {
	m := map[string]any{
		"keyId": k.ID, "accountId": k.AccountID, "name": k.Name, "tier": k.Tier,
		"createdAt": k.CreatedAt.Format(time.RFC3339Nano), "revoked": k.Revoked(),
		"limits": map[string]int{
			"requestsPerMinute": k.Limits.RequestsPerMinute, "requestsPerDay": k.Limits.RequestsPerDay,
			"startsPerMinute": k.Limits.StartsPerMinute, "maxInFlight": k.Limits.MaxInFlight,
		},
	}
	if k.Caps != (store.SpendCaps{}) {
		m["spendingCaps"] = capsJSON(k.Caps)
	}
	if k.Revoked() {
		m["revokedAt"] = k.RevokedAt.Format(time.RFC3339Nano)
	}
	return m
}

func keysRevoke(opts *options) *cobra.Command {
	return &cobra.Command{
		Use:   "revoke KEY_ID",
		Short: "Revoke an API key; it is rejected from the next request on",
		Long: "Revoke an API key; it is rejected from the next request on.\n" +
			"With --aws its usage-plan key is deleted too (and an Enterprise key's own usage plan),\n" +
			"so that API Gateway refuses it at once, before the authorizer's cached answer for it\n" +
			"expires, and revoked keys do not count against the region's 10,000 API keys.\n" +
			"Revoking again is harmless.",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return withBackend(cmd.Context(), opts, func(b *backend) error {
				if err := b.admin.Revoke(cmd.Context(), args[0]); err != nil {
					return err
				}
				out := cmd.OutOrStdout()
				fmt.Fprintf(out, "revoked %s\n", args[0])
				if b.plans == nil {
					return nil
				}
				found, err := b.plans.Remove(cmd.Context(), args[0])
				if err != nil {
					return fmt.Errorf("the key is revoked, but its usage-plan key is not deleted: %w\n"+
						"run the revocation again to retry", err)
				}
				if found {
					fmt.Fprintln(out, "deleted its usage-plan key")
				} else {
					fmt.Fprintln(out, "it had no usage-plan key")
				}
				return nil
			})
		},
	}
}

func keysWire(opts *options) *cobra.Command {
	return &cobra.Command{
		Use:   "wire KEY_ID",
		Short: "With --aws: attach an existing key to its tier's usage plan (again)",
		Long: "With --aws: make sure the key has an enabled usage-plan key in its tier's usage plan.\n" +
			"keys create does this; wire finishes a creation whose wiring failed, and is harmless on a\n" +
			"key already wired.",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return withBackend(cmd.Context(), opts, func(b *backend) error {
				if b.plans == nil {
					return fmt.Errorf("keys wire works on AWS only: add --aws")
				}
				keys, err := b.admin.Keys(cmd.Context(), "")
				if err != nil {
					return err
				}
				i := slices.IndexFunc(keys, func(k store.Key) bool { return k.ID == args[0] })
				if i < 0 {
					return fmt.Errorf("no key %s", args[0])
				}
				w, err := b.plans.Wire(cmd.Context(), keys[i])
				if err != nil {
					return err
				}
				fmt.Fprintf(cmd.OutOrStdout(), "key %s: usage plan %s (gateway key %s)\n", args[0], w.UsagePlanID, w.GatewayKeyID)
				return nil
			})
		},
	}
}

// storeKey is the stored form of a key just created, for the wiring.
func storeKey(k admin.CreatedKey) store.Key {
	return store.Key{ID: k.KeyID, AccountID: k.AccountID, Name: k.Name, Tier: k.Tier, Limits: k.Limits}
}

func creditsGrant(opts *options) *cobra.Command {
	var account, note string
	var amount int64
	cmd := &cobra.Command{
		Use:   "grant --account ID --amount N",
		Short: "Add credits to an account",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return withAdmin(cmd, opts, func(a *admin.Admin) error {
				bal, err := a.Grant(cmd.Context(), account, amount, note)
				if err != nil {
					return err
				}
				fmt.Fprintf(cmd.OutOrStdout(), "granted %d credits to %s; balance %d\n", amount, account, bal)
				return nil
			})
		},
	}
	cmd.Flags().StringVar(&account, "account", "", "account id (required)")
	cmd.Flags().Int64Var(&amount, "amount", 0, "credits to add (required, positive)")
	cmd.Flags().StringVar(&note, "note", "", "note kept in the ledger")
	_ = cmd.MarkFlagRequired("account")
	_ = cmd.MarkFlagRequired("amount")
	return cmd
}

func creditsShow(opts *options) *cobra.Command {
	var account string
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "show --account ID",
		Short: "Show an account's balance and ledger",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return withAdmin(cmd, opts, func(a *admin.Admin) error {
				st, err := a.Show(cmd.Context(), account)
				if err != nil {
					return err
				}
				out := cmd.OutOrStdout()
				if asJSON {
					entries := make([]map[string]any, 0, len(st.Ledger))
					for _, e := range st.Ledger {
						entries = append(entries, map[string]any{"kind": e.Kind, "amount": e.Amount,
							"balance": e.Balance, "taskId": e.TaskID, "at": e.At.Format(time.RFC3339Nano), "note": e.Note})
					}
					return writeJSON(out, map[string]any{"accountId": st.Account.ID, "credits": st.Account.Credits,
						"inFlight": st.Account.InFlight, "ledger": entries})
				}
				fmt.Fprintf(out, "account:   %s\ncredits:   %d\nin flight: %d\n\n", st.Account.ID, st.Account.Credits, st.Account.InFlight)
				tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
				fmt.Fprintln(tw, "AT\tKIND\tAMOUNT\tBALANCE\tTASK\tNOTE")
				for _, e := range st.Ledger {
					fmt.Fprintf(tw, "%s\t%s\t%+d\t%d\t%s\t%s\n", e.At.Format(time.RFC3339), e.Kind, e.Amount, e.Balance, e.TaskID, e.Note)
				}
				return tw.Flush()
			})
		},
	}
	cmd.Flags().StringVar(&account, "account", "", "account id (required)")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the result as JSON")
	_ = cmd.MarkFlagRequired("account")
	return cmd
}

func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}
