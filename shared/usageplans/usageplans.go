// Package usageplans wires customer keys to API Gateway usage plans, as
// the operator CLI does on AWS (genctl --aws) and the AWS assembly on one
// machine does for its keys: a Standard or Pro key joins its tier's plan,
// an Enterprise key the plan of its figures, shared by every Enterprise key
// with the same figures (a region holds 300 usage plans by default).
package usageplans

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/apigateway"
	"github.com/aws/aws-sdk-go-v2/service/apigateway/types"

	"github.com/genvideo/gen/shared/authorizer"
	"github.com/genvideo/gen/shared/ratelimit"
	"github.com/genvideo/gen/shared/store"
)

// On AWS a customer key reaches its usage plan through the authorizer,
// which answers usageIdentifierKey = authorizer.UsageIdentifierKey(key
// ID). API Gateway meters the gateway API key whose value that is: the
// gateway keys below hold "gen-usage-<key id>", never the customer's
// secret, which stays hash-only.

// GatewayAPI is the part of the API Gateway client the wiring calls.
type GatewayAPI interface {
	GetApiKeys(context.Context, *apigateway.GetApiKeysInput, ...func(*apigateway.Options)) (*apigateway.GetApiKeysOutput, error)
	CreateApiKey(context.Context, *apigateway.CreateApiKeyInput, ...func(*apigateway.Options)) (*apigateway.CreateApiKeyOutput, error)
	UpdateApiKey(context.Context, *apigateway.UpdateApiKeyInput, ...func(*apigateway.Options)) (*apigateway.UpdateApiKeyOutput, error)
	GetUsagePlan(context.Context, *apigateway.GetUsagePlanInput, ...func(*apigateway.Options)) (*apigateway.GetUsagePlanOutput, error)
	GetUsagePlans(context.Context, *apigateway.GetUsagePlansInput, ...func(*apigateway.Options)) (*apigateway.GetUsagePlansOutput, error)
	CreateUsagePlan(context.Context, *apigateway.CreateUsagePlanInput, ...func(*apigateway.Options)) (*apigateway.CreateUsagePlanOutput, error)
	CreateUsagePlanKey(context.Context, *apigateway.CreateUsagePlanKeyInput, ...func(*apigateway.Options)) (*apigateway.CreateUsagePlanKeyOutput, error)
	GetUsagePlanKey(context.Context, *apigateway.GetUsagePlanKeyInput, ...func(*apigateway.Options)) (*apigateway.GetUsagePlanKeyOutput, error)
	GetUsagePlanKeys(context.Context, *apigateway.GetUsagePlanKeysInput, ...func(*apigateway.Options)) (*apigateway.GetUsagePlanKeysOutput, error)
	DeleteApiKey(context.Context, *apigateway.DeleteApiKeyInput, ...func(*apigateway.Options)) (*apigateway.DeleteApiKeyOutput, error)
	UpdateUsagePlan(context.Context, *apigateway.UpdateUsagePlanInput, ...func(*apigateway.Options)) (*apigateway.UpdateUsagePlanOutput, error)
	DeleteUsagePlan(context.Context, *apigateway.DeleteUsagePlanInput, ...func(*apigateway.Options)) (*apigateway.DeleteUsagePlanOutput, error)
}

// Environment variables naming the stack's usage plans (its outputs
// StandardUsagePlanId and ProUsagePlanId).
const (
	EnvStandard = "GEN_USAGE_PLAN_STANDARD"
	EnvPro      = "GEN_USAGE_PLAN_PRO"
)

// Plans wires customer keys to the usage plans of their tiers.
type Plans struct {
	API      GatewayAPI
	Standard string // usage plan ids
	Pro      string
}

// Wired says where a customer key was wired.
type Wired struct {
	GatewayKeyID string `json:"gatewayKeyId"`
	UsagePlanID  string `json:"usagePlanId"`
}

// enterpriseBurstFactor: Set B's bursts are ten times the tiers' rates
// per second (Standard 1/s and 10, Pro 5/s and 50); an enterprise plan
// keeps that ratio.
const enterpriseBurstFactor = 10

// Wire makes sure the key has an enabled gateway key attached to its
// tier's usage plan; an enterprise key joins the plan of its figures. Every step looks before it creates, so wire may be run again
// after a failure, or on a key already wired.
func (u *Plans) Wire(ctx context.Context, k store.Key) (Wired, error) {
	if k.Revoked() {
		return Wired{}, fmt.Errorf("key %s is revoked: a revoked key is not wired", k.ID)
	}
	planID, err := u.planFor(ctx, k)
	if err != nil {
		return Wired{}, err
	}
	gk, err := u.gatewayKey(ctx, k.ID)
	if err != nil {
		return Wired{}, err
	}
	name := authorizer.UsageIdentifierKey(k.ID)
	if gk == nil {
		out, err := u.API.CreateApiKey(ctx, &apigateway.CreateApiKeyInput{
			Name:        aws.String(name),
			Value:       aws.String(name),
			Enabled:     true,
			CustomerId:  aws.String(k.AccountID),
			Description: aws.String(fmt.Sprintf("usage-plan key of gen key %s (%q, %s)", k.ID, k.Name, k.Tier)),
		})
		if err != nil {
			return Wired{}, fmt.Errorf("create gateway key %s: %w", name, err)
		}
		gk = &types.ApiKey{Id: out.Id, Name: out.Name, Enabled: out.Enabled}
	} else if !gk.Enabled {
		if err := u.setEnabled(ctx, *gk.Id, true); err != nil {
			return Wired{}, err
		}
	}
	_, err = u.API.CreateUsagePlanKey(ctx, &apigateway.CreateUsagePlanKeyInput{
		UsagePlanId: aws.String(planID), KeyId: gk.Id, KeyType: aws.String("API_KEY"),
	})
	var conflict *types.ConflictException
	if errors.As(err, &conflict) {
		// Already in this plan (a second run), or in another plan of the
		// same stage, which API Gateway refuses alike.
		_, err = u.API.GetUsagePlanKey(ctx, &apigateway.GetUsagePlanKeyInput{UsagePlanId: aws.String(planID), KeyId: gk.Id})
		var notFound *types.NotFoundException
		if errors.As(err, &notFound) {
			return Wired{}, fmt.Errorf("gateway key %s is in another usage plan than %s, its tier's (%s): "+
				"remove it from that plan first", name, planID, k.Tier)
		}
	}
	if err != nil {
		return Wired{}, fmt.Errorf("add gateway key %s to usage plan %s: %w", name, planID, err)
	}
	return Wired{GatewayKeyID: *gk.Id, UsagePlanID: planID}, nil
}

// Remove deletes the gateway key of a revoked customer key, so that API
// Gateway refuses it at once, before the authorizer's cached answer
// expires, and so that revoked keys do not pile up: a region holds at most
// 10,000 API keys, and a disabled key still counts. An Enterprise plan
// (300 a region by default) is deleted with its last key. found is false when
// the key had no gateway key. Each step is idempotent: a revocation that
// failed half-way is run again.
func (u *Plans) Remove(ctx context.Context, keyID string) (found bool, err error) {
	gk, err := u.gatewayKey(ctx, keyID)
	if err != nil {
		return false, err
	}
	var shared []types.UsagePlan // the Enterprise plans the key is in
	if gk != nil {
		if shared, err = u.enterprisePlansOf(ctx, aws.ToString(gk.Id)); err != nil {
			return true, err
		}
		// Deleting the key also removes it from its usage plans.
		_, err := u.API.DeleteApiKey(ctx, &apigateway.DeleteApiKeyInput{ApiKey: gk.Id})
		var notFound *types.NotFoundException
		if err != nil && !errors.As(err, &notFound) {
			return true, fmt.Errorf("delete gateway key %s: %w", aws.ToString(gk.Name), err)
		}
	}
	// A plan of figures goes with its last key; a plan of the key's own
	// (made before plans were shared) goes with it.
	for _, plan := range shared {
		keys, err := u.API.GetUsagePlanKeys(ctx, &apigateway.GetUsagePlanKeysInput{UsagePlanId: plan.Id, Limit: aws.Int32(1)})
		if err != nil {
			return true, fmt.Errorf("list the keys of usage plan %s: %w", aws.ToString(plan.Name), err)
		}
		if len(keys.Items) == 0 {
			if err := u.deletePlan(ctx, &plan); err != nil {
				return true, err
			}
		}
	}
	if err := u.removeEnterprisePlan(ctx, keyID); err != nil {
		return gk != nil, err
	}
	return gk != nil, nil
}

// enterprisePlansOf lists the Enterprise plans that hold a gateway key.
func (u *Plans) enterprisePlansOf(ctx context.Context, gatewayKeyID string) ([]types.UsagePlan, error) {
	var out []types.UsagePlan
	p := apigateway.NewGetUsagePlansPaginator(u.API, &apigateway.GetUsagePlansInput{KeyId: &gatewayKeyID, Limit: aws.Int32(500)})
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			return nil, fmt.Errorf("list the usage plans of gateway key %s: %w", gatewayKeyID, err)
		}
		for _, plan := range page.Items {
			if strings.HasPrefix(aws.ToString(plan.Name), enterprisePrefix) {
				out = append(out, plan)
			}
		}
	}
	return out, nil
}

// removeEnterprisePlan deletes the key's own usage plan, if it has one:
// API Gateway deletes a plan only once no stage is attached to it.
func (u *Plans) removeEnterprisePlan(ctx context.Context, keyID string) error {
	plan, err := u.findPlan(ctx, enterprisePrefix+keyID)
	if err != nil || plan == nil {
		return err
	}
	return u.deletePlan(ctx, plan)
}

// deletePlan detaches a usage plan from its stages and deletes it.
func (u *Plans) deletePlan(ctx context.Context, plan *types.UsagePlan) error {
	var ops []types.PatchOperation
	for _, st := range plan.ApiStages {
		ops = append(ops, types.PatchOperation{Op: types.OpRemove, Path: aws.String("/apiStages"),
			Value: aws.String(aws.ToString(st.ApiId) + ":" + aws.ToString(st.Stage))})
	}
	if len(ops) > 0 {
		if _, err := u.API.UpdateUsagePlan(ctx, &apigateway.UpdateUsagePlanInput{UsagePlanId: plan.Id, PatchOperations: ops}); err != nil {
			return fmt.Errorf("detach usage plan %s from its stages: %w", aws.ToString(plan.Name), err)
		}
	}
	if _, err := u.API.DeleteUsagePlan(ctx, &apigateway.DeleteUsagePlanInput{UsagePlanId: plan.Id}); err != nil {
		return fmt.Errorf("delete usage plan %s: %w", aws.ToString(plan.Name), err)
	}
	return nil
}

// findPlan finds a usage plan by name, or nil.
func (u *Plans) findPlan(ctx context.Context, name string) (*types.UsagePlan, error) {
	p := apigateway.NewGetUsagePlansPaginator(u.API, &apigateway.GetUsagePlansInput{Limit: aws.Int32(500)})
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			return nil, fmt.Errorf("list usage plans: %w", err)
		}
		for _, plan := range page.Items {
			if aws.ToString(plan.Name) == name {
				return &plan, nil
			}
		}
	}
	return nil, nil
}

// enterprisePrefix begins the name of every Enterprise plan.
const enterprisePrefix = "gen-enterprise-"

// enterprisePlanName names the plan of a set of figures on the stages of
// the Standard plan std: every Enterprise key with the same figures shares
// it, so that a region's 300 usage plans bound the distinct figures, not
// the Enterprise keys.
func enterprisePlanName(std string, l store.KeyLimits) string {
	return fmt.Sprintf("%s%s-%drpm-%drpd", enterprisePrefix, std, l.RequestsPerMinute, l.RequestsPerDay)
}

func (u *Plans) setEnabled(ctx context.Context, id string, enabled bool) error {
	_, err := u.API.UpdateApiKey(ctx, &apigateway.UpdateApiKeyInput{
		ApiKey: aws.String(id),
		PatchOperations: []types.PatchOperation{{
			Op: types.OpReplace, Path: aws.String("/enabled"), Value: aws.String(strconv.FormatBool(enabled)),
		}},
	})
	if err != nil {
		return fmt.Errorf("set gateway key %s enabled=%v: %w", id, enabled, err)
	}
	return nil
}

// gatewayKey finds the gateway key of a customer key by its name, or nil.
func (u *Plans) gatewayKey(ctx context.Context, keyID string) (*types.ApiKey, error) {
	name := authorizer.UsageIdentifierKey(keyID)
	p := apigateway.NewGetApiKeysPaginator(u.API, &apigateway.GetApiKeysInput{NameQuery: aws.String(name), Limit: aws.Int32(500)})
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			return nil, fmt.Errorf("look up gateway key %s: %w", name, err)
		}
		// The name query matches prefixes: gen-usage-key_1 finds key_10.
		for _, k := range page.Items {
			if aws.ToString(k.Name) == name {
				return &k, nil
			}
		}
	}
	return nil, nil
}

// Check fails when a key of the tier could not be wired for want of a
// plan id, so that keys create refuses before it creates anything.
func (u *Plans) Check(tier string) error {
	switch tier {
	case ratelimit.Pro:
		if u.Pro == "" {
			return missingPlan("pro", EnvPro, "ProUsagePlanId")
		}
	case ratelimit.Standard, ratelimit.Enterprise, "":
		// An enterprise plan copies the Standard plan's stages.
		if u.Standard == "" {
			return missingPlan("standard", EnvStandard, "StandardUsagePlanId")
		}
	}
	return nil
}

// planFor returns the usage plan of the key's tier.
func (u *Plans) planFor(ctx context.Context, k store.Key) (string, error) {
	switch k.Tier {
	case ratelimit.Standard, "":
		if u.Standard == "" {
			return "", missingPlan("standard", EnvStandard, "StandardUsagePlanId")
		}
		return u.Standard, nil
	case ratelimit.Pro:
		if u.Pro == "" {
			return "", missingPlan("pro", EnvPro, "ProUsagePlanId")
		}
		return u.Pro, nil
	case ratelimit.Enterprise:
		return u.enterprisePlan(ctx, k)
	}
	return "", fmt.Errorf("key %s has unknown tier %q", k.ID, k.Tier)
}

func missingPlan(tier, env, output string) error {
	return fmt.Errorf("no usage plan for %s keys: set --usage-plan-%s or %s to the stack output %s", tier, tier, env, output)
}

// enterprisePlan finds or creates the key's own usage plan, on the API
// stages of the Standard plan, with the key's figures.
func (u *Plans) enterprisePlan(ctx context.Context, k store.Key) (string, error) {
	if u.Standard == "" {
		return "", fmt.Errorf("an enterprise plan is made on the API stages of the Standard plan: %w",
			missingPlan("standard", EnvStandard, "StandardUsagePlanId"))
	}
	limits, err := ratelimit.ForKey(k)
	if err != nil {
		return "", err
	}
	name := enterprisePlanName(u.Standard, limits)
	if plan, err := u.findPlan(ctx, name); err != nil || plan != nil {
		if err != nil {
			return "", err
		}
		return aws.ToString(plan.Id), nil
	}
	std, err := u.API.GetUsagePlan(ctx, &apigateway.GetUsagePlanInput{UsagePlanId: aws.String(u.Standard)})
	if err != nil {
		return "", fmt.Errorf("read the Standard usage plan %s: %w", u.Standard, err)
	}
	rate := float64(limits.RequestsPerMinute) / 60
	out, err := u.API.CreateUsagePlan(ctx, &apigateway.CreateUsagePlanInput{
		Name:        aws.String(name),
		Description: aws.String(fmt.Sprintf("Enterprise keys of %d requests a minute, %d a day.", limits.RequestsPerMinute, limits.RequestsPerDay)),
		ApiStages:   slices.Clone(std.ApiStages),
		Throttle: &types.ThrottleSettings{
			RateLimit:  rate,
			BurstLimit: int32(max(1, math.Ceil(rate*enterpriseBurstFactor))),
		},
		Quota: &types.QuotaSettings{Limit: int32(limits.RequestsPerDay), Period: types.QuotaPeriodTypeDay},
	})
	if err != nil {
		return "", fmt.Errorf("create usage plan %s: %w", name, err)
	}
	return aws.ToString(out.Id), nil
}
