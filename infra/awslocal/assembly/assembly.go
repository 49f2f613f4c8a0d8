// Package assembly puts the AWS assembly together on one machine, with no
// AWS account and no Docker (`make run-aws-local`, infra/aws-local): the
// functions of template.yaml built for the host and run through the Lambda
// Runtime API (lambdaruntime pools), the API Gateway emulator (gateway)
// in front of them, DynamoDB Local keeping its tables in the data
// directory, an S3 that checks presigned URLs and POST policies (s3fake,
// on disk), Secrets Manager holding the URL signer's key, Step Functions
// running the deployed definition (states), the Schedule events, the
// DynamoDB stream events (streams), and the
// API Gateway control plane the operator CLI wires keys through
// (apikeys). Everything but the gateway listens on loopback ports of its
// own; every part logs to one structured stream.
package assembly

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/apigateway"
	"github.com/aws/aws-sdk-go-v2/service/dynamodbstreams"
	"github.com/johannesboyne/gofakes3/backend/s3bolt"
	bolt "go.etcd.io/bbolt"

	"github.com/genvideo/gen/infra/awslocal/apikeys"
	"github.com/genvideo/gen/infra/awslocal/gateway"
	"github.com/genvideo/gen/infra/awslocal/localdeploy"
	"github.com/genvideo/gen/infra/awslocal/samtemplate"
	"github.com/genvideo/gen/infra/awslocal/states"
	"github.com/genvideo/gen/infra/awslocal/streams"
	"github.com/genvideo/gen/shared/admin"
	"github.com/genvideo/gen/shared/apikey"
	"github.com/genvideo/gen/shared/authorizer"
	"github.com/genvideo/gen/shared/awsstack"
	"github.com/genvideo/gen/shared/awsstack/lambdaruntime"
	"github.com/genvideo/gen/shared/awsstack/localsecrets"
	"github.com/genvideo/gen/shared/devkey"
	"github.com/genvideo/gen/shared/settings"
	"github.com/genvideo/gen/shared/store/dynamostore"
	"github.com/genvideo/gen/shared/store/dynamostore/dynamolocal"
	"github.com/genvideo/gen/shared/testing/s3fake"
	"github.com/genvideo/gen/shared/usageplans"
)

// The made-up names of the local "account".
const (
	StackName = "gen-local"
	Region    = "us-east-1"
	Account   = "123456789012"
	APIID     = "local00api"
	Bucket    = "gen-local-media"

	signerSecretARN = "arn:aws:secretsmanager:us-east-1:123456789012:secret:gen-local-url-signer-AbCdEf"
	roleKeyID       = "ASIALOCALFUNCTIONROLE" // + the function's logical id: functionKeyID
	roleSecret      = "local-function-role-secret"
	signerKeyID     = "AKIALOCALURLSIGNER01"
	signerSecret    = "local-url-signer-secret-access-key"
	operatorKeyID   = "local"
	operatorSecret  = "local"
)

// Config says where the assembly runs.
type Config struct {
	// Root is the repository: template.yaml, functions/, statemachine/.
	Root string
	// Addr is where the gateway listens (GEN_ADDR).
	Addr string
	// DataDir keeps DynamoDB Local's tables, the S3 objects, the API keys
	// and usage plans, the built functions and the dev key.
	DataDir string
	// Log receives the one structured stream (JSON lines).
	Log io.Writer
	// ScheduleInterval, if set, replaces every Schedule event's rate
	// (tests: seconds rather than minutes).
	ScheduleInterval time.Duration
	// Parameters override template parameters (GenerationTimeout=1).
	Parameters map[string]string
	// Secrets are put in the emulated Secrets Manager, by ARN, beside the
	// URL signer's: what a parameter naming a secret
	// (ProviderConfigSecretArn, RouteKeySecretArns) points at here.
	Secrets map[string]string
	// WebhookAllowPrivate sets GEN_WEBHOOK_ALLOW_PRIVATE=1 in every
	// function's environment, so that webhooks may go to a receiver on
	// this machine (plain http, loopback). Only here: template.yaml never
	// sets it, and AWS never reads it from the operator.
	WebhookAllowPrivate bool
}

// Assembly is a running assembly.
type Assembly struct {
	// BaseURL is the API's base URL, http://<addr>/<stage>.
	BaseURL string
	// DevKey is the dev account's API key.
	DevKey string
	// Store is the DynamoDB store the functions use.
	Store *dynamostore.Store
	// Template is what was read of template.yaml.
	Template *samtemplate.Template

	log      *slog.Logger
	pools    map[string]*lambdaruntime.Pool // by function directory name (generate)
	closers  []func()
	cancel   context.CancelFunc
	wg       sync.WaitGroup
	dataDir  string
	servers  []*http.Server
	dynamo   *dynamolocal.Server
	listener net.Listener
	keys     *apikeys.Gateway
	planIDs  map[string]string
	plans    *usageplans.Plans
	// endpoint serves every AWS service (byService).
	endpoint string
	// functionEnv is each function's template variables as set here.
	functionEnv map[string]map[string]string
}

// Pool returns the processes of a function by its directory name
// (functions/generate: "generate").
func (a *Assembly) Pool(name string) *lambdaruntime.Pool { return a.pools[name] }

// Start builds and starts everything, and returns once the gateway
// listens.
func Start(ctx context.Context, cfg Config) (a *Assembly, err error) {
	if cfg.Log == nil {
		cfg.Log = os.Stderr
	}
	a = &Assembly{pools: map[string]*lambdaruntime.Pool{}, dataDir: cfg.DataDir, functionEnv: map[string]map[string]string{}}
	a.log = slog.New(slog.NewJSONHandler(&lockedWriter{w: cfg.Log}, nil))
	defer func() {
		if err != nil {
			a.Close()
		}
	}()
	if err := os.MkdirAll(cfg.DataDir, 0o755); err != nil {
		return nil, fmt.Errorf("data directory: %w", err)
	}
	runCtx, cancel := context.WithCancel(context.Background())
	a.cancel = cancel

	// The template, with the host's ffmpeg and font in place of the layer's.
	params := map[string]string{
		"FFmpegLayerArn":  "arn:aws:lambda:us-east-1:123456789012:layer:local-ffmpeg:1",
		"FFmpegPath":      "ffmpeg",
		"CaptionFontFile": "",
	}
	if p, err := exec.LookPath("ffmpeg"); err == nil {
		params["FFmpegPath"] = p
	}
	for k, v := range cfg.Parameters {
		params[k] = v
	}
	names := samtemplate.Names{StackName: StackName, Region: Region, Account: Account,
		Refs:       map[string]string{"MediaBucket": Bucket, "SignerSecret": signerSecretARN, "GenApi": APIID},
		Parameters: params}
	tp, err := samtemplate.Load(filepath.Join(cfg.Root, "template.yaml"), names)
	if err != nil {
		return nil, err
	}
	a.Template = tp

	// The functions, built for this machine.
	a.log.Info("building the functions", "component", "build")
	bins, err := lambdaruntime.Build(ctx, cfg.Root, "./functions/...", filepath.Join(cfg.DataDir, "functions"))
	if err != nil {
		return nil, err
	}

	// DynamoDB Local, keeping its tables in the data directory.
	a.log.Info("starting DynamoDB Local", "component", "dynamodb")
	a.dynamo, err = dynamolocal.StartWith(ctx, dynamolocal.Options{DBPath: filepath.Join(cfg.DataDir, "dynamodb")})
	if err != nil {
		return nil, err
	}
	a.log.Info("DynamoDB Local started", "component", "dynamodb", "endpoint", a.dynamo.Endpoint, "pid", a.dynamo.PID())
	prefix := StackName + "-"
	a.Store = dynamostore.New(a.dynamo.Client(), dynamostore.Config{TablePrefix: prefix})
	if err := a.Store.CreateTables(ctx); err != nil {
		return nil, err
	}

	// S3 on disk, Secrets Manager, the API Gateway control plane.
	db, err := bolt.Open(filepath.Join(cfg.DataDir, "s3.bolt"), 0o600, &bolt.Options{Timeout: 5 * time.Second})
	if err != nil {
		return nil, fmt.Errorf("S3 storage (is another run-aws-local using %s?): %w", cfg.DataDir, err)
	}
	a.closers = append(a.closers, func() { db.Close() })
	backend := s3bolt.New(db)
	s3srv, err := s3fake.New(backend, Bucket)
	if err != nil {
		return nil, err
	}
	s3srv.AddSigner(signerKeyID, signerSecret)
	// Each function signs with its role's own key, and S3 answers a
	// missing key as it answers that role: 404 where the template lets
	// it s3:ListBucket, 403 elsewhere.
	s3srv.RequireList()
	for _, f := range tp.Functions {
		s3srv.AddUploadSigner(functionKeyID(f.LogicalID), roleSecret)
		s3srv.GrantList(functionKeyID(f.LogicalID), f.ListPrefixes...)
	}
	s3URL, err := a.serve(logRequests(a.log, "s3", bucketCORS(s3srv, a.gatewayOrigin)))
	if err != nil {
		return nil, err
	}
	// The operator's credentials (localdeploy's, which `make invoke-<name>`
	// hands a function as sam local hands it the caller's) may list and
	// sign uploads like any function's role.
	s3srv.AddUploadSigner(operatorKeyID, operatorSecret)
	s3srv.GrantList(operatorKeyID, "")
	secrets := localsecrets.New()
	secret, _ := json.Marshal(awsstack.SignerSecret{AccessKeyID: signerKeyID, SecretAccessKey: signerSecret})
	secrets.Put(signerSecretARN, string(secret))
	for arn, v := range cfg.Secrets {
		secrets.Put(arn, v)
	}
	secretsURL, err := a.serve(secrets)
	if err != nil {
		return nil, err
	}
	keys, err := apikeys.Open(filepath.Join(cfg.DataDir, "api-keys.json"))
	if err != nil {
		return nil, err
	}
	planIDs := map[string]string{}
	for _, up := range tp.UsagePlans {
		p := apikeys.Plan{ID: up.LogicalID, Name: up.Name, APIStages: []apikeys.Stage{{APIID: APIID, Stage: tp.API.StageName}}}
		if up.RateLimit > 0 {
			p.Throttle = &apikeys.Throttle{RateLimit: up.RateLimit, BurstLimit: up.BurstLimit}
		}
		if up.QuotaLimit > 0 {
			p.Quota = &apikeys.Quota{Limit: up.QuotaLimit, Period: up.QuotaPeriod}
		}
		keys.PutPlan(p)
		planIDs[strings.ToLower(up.LogicalID)] = up.LogicalID
	}
	a.keys, a.planIDs = keys, planIDs
	gwAdminURL, err := a.serve(keys.Handler())
	if err != nil {
		return nil, err
	}
	// Keys are wired as genctl --aws wires them, through the control
	// plane's API.
	a.plans = &usageplans.Plans{
		API: apigateway.New(apigateway.Options{
			Region: Region, BaseEndpoint: aws.String(gwAdminURL),
			Credentials: credentials.NewStaticCredentialsProvider("local", "local", ""),
		}),
		Standard: planIDs["standardusageplan"], Pro: planIDs["prousageplan"],
	}

	// Step Functions' endpoint first: the functions need its URL.
	var sfnHandler http.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "not ready", http.StatusServiceUnavailable)
	})
	var sfnMu sync.RWMutex
	sfnURL, err := a.serve(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		sfnMu.RLock()
		h := sfnHandler
		sfnMu.RUnlock()
		h.ServeHTTP(w, r)
	}))
	if err != nil {
		return nil, err
	}

	// Every service on one port too, for AWS_ENDPOINT_URL (sam local
	// invoke can set only one variable the template declares).
	a.endpoint, err = a.serve(byService(map[string]string{
		"dynamodb": a.dynamo.Endpoint, "s3": s3URL, "states": sfnURL, "secretsmanager": secretsURL}))
	if err != nil {
		return nil, err
	}

	// The function pools.
	tmp := filepath.Join(cfg.DataDir, "tmp")
	os.MkdirAll(tmp, 0o755)
	byID := map[string]*lambdaruntime.Pool{}
	for _, f := range tp.Functions {
		dir := filepath.Base(f.Dir)
		bin, ok := bins[dir]
		if !ok {
			return nil, fmt.Errorf("function %s: no binary built from %s", f.LogicalID, f.Dir)
		}
		env := map[string]string{
			"PATH": os.Getenv("PATH"), "HOME": tmp, "TMPDIR": tmp,
			"AWS_REGION": Region, "AWS_DEFAULT_REGION": Region,
			"AWS_ACCESS_KEY_ID": functionKeyID(f.LogicalID), "AWS_SECRET_ACCESS_KEY": roleSecret, "AWS_SESSION_TOKEN": "local-session",
			"AWS_CONFIG_FILE": filepath.Join(tmp, "no-aws-config"), "AWS_SHARED_CREDENTIALS_FILE": filepath.Join(tmp, "no-aws-credentials"),
			"AWS_EC2_METADATA_DISABLED":        "true",
			"AWS_ENDPOINT_URL_DYNAMODB":        a.dynamo.Endpoint,
			"AWS_ENDPOINT_URL_S3":              s3URL,
			"AWS_ENDPOINT_URL_SFN":             sfnURL,
			"AWS_ENDPOINT_URL_SECRETS_MANAGER": secretsURL,
		}
		declared := map[string]string{}
		for k, v := range f.Env {
			env[k] = v
		}
		if cfg.WebhookAllowPrivate {
			env[settings.WebhookAllowPrivate] = "1"
		}
		if _, ok := env[awsstack.EnvPlaygroundMediaOrigins]; ok {
			// The template names the bucket's https origin; here the
			// presigned links and upload forms point at the emulated S3,
			// which the playground's CSP must allow instead.
			env[awsstack.EnvPlaygroundMediaOrigins] = s3URL
		}
		for k := range f.Env {
			declared[k] = env[k]
		}
		a.functionEnv[f.LogicalID] = declared
		var envList []string
		for k, v := range env {
			envList = append(envList, k+"="+v)
		}
		sort.Strings(envList)
		fn := dir
		pool := lambdaruntime.NewPool(lambdaruntime.Config{
			Name: StackName + "-" + f.LogicalID, Binary: bin, Env: envList,
			Timeout: time.Duration(f.Timeout) * time.Second, MemoryMB: f.MemorySize,
		}, func(pid int) io.Writer {
			return &lineLogger{log: a.log.With("component", "lambda", "function", fn, "pid", pid)}
		}, func(p *lambdaruntime.Process, err error) {
			if err != nil {
				a.log.Error("cold start failed", "component", "lambda", "function", fn, "err", err.Error())
				return
			}
			a.log.Info("cold start", "component", "lambda", "function", fn, "pid", p.PID())
		})
		a.pools[dir] = pool
		byID[f.LogicalID] = pool
		a.closers = append(a.closers, pool.Close)
		for _, ev := range f.OtherEvents {
			a.log.Warn("event source not emulated", "component", "lambda", "function", fn, "event", ev)
		}
	}

	// Step Functions.
	sm := tp.StateMachine
	def, err := os.ReadFile(sm.DefinitionURI)
	if err != nil {
		return nil, fmt.Errorf("state machine definition: %w", err)
	}
	tasks, taskNames := map[string]states.Invoker{}, map[string]string{}
	for _, f := range tp.Functions {
		arn := names.FunctionARN(f.LogicalID)
		tasks[arn], taskNames[arn] = byID[f.LogicalID], filepath.Base(f.Dir)
	}
	sfn, err := states.New(names.StateMachineARN(sm.LogicalID), def, sm.Substitutions, tasks, taskNames,
		a.log.With("component", "states"))
	if err != nil {
		return nil, err
	}
	a.closers = append(a.closers, sfn.Close)
	sfnMu.Lock()
	sfnHandler = sfn
	sfnMu.Unlock()

	// The gateway.
	var routes []gateway.Route
	for _, f := range tp.Functions {
		for _, rt := range f.Routes {
			routes = append(routes, gateway.Route{Route: rt, Function: filepath.Base(f.Dir), Invoker: byID[f.LogicalID]})
		}
	}
	auths := map[string]gateway.Invoker{}
	for name, au := range tp.API.Authorizers {
		if p := byID[au.Function]; p != nil {
			auths[name] = p
		}
	}
	gw := gateway.New(gateway.Config{API: tp.API, Routes: routes, Authorizers: auths, Keys: keys,
		Logger: a.log, Account: Account, APIID: APIID, Region: Region})
	ln, err := net.Listen("tcp", cfg.Addr)
	if err != nil {
		return nil, fmt.Errorf("listen on %s (set GEN_ADDR to use another address): %w", cfg.Addr, err)
	}
	a.listener = ln
	srv := &http.Server{Handler: gw, ReadHeaderTimeout: 10 * time.Second}
	a.servers = append(a.servers, srv)
	go srv.Serve(ln)
	a.BaseURL = "http://" + ln.Addr().String() + "/" + tp.API.StageName

	// The dev key, wired to the Standard plan as genctl would wire it.
	adm := admin.New(a.Store)
	a.DevKey, _, err = devkey.Ensure(ctx, cfg.DataDir, adm, a.Store)
	if err != nil {
		return nil, err
	}
	if err := a.wireKeys(ctx, keys, planIDs); err != nil {
		return nil, err
	}

	if err := localdeploy.Write(cfg.DataDir, localdeploy.Deployment{
		Region: Region, TablePrefix: prefix,
		UsagePlanStandard: planIDs["standardusageplan"], UsagePlanPro: planIDs["prousageplan"],
		DynamoDBEndpoint: a.dynamo.Endpoint, GatewayEndpoint: gwAdminURL,
		AccessKeyID: operatorKeyID, SecretAccessKey: operatorSecret, BaseURL: a.BaseURL,
		Endpoint: a.endpoint, Functions: a.functionEnv,
	}); err != nil {
		return nil, err
	}

	// The DynamoDB streams, read as Lambda's event source mappings read
	// them.
	streamsClient := dynamodbstreams.New(dynamodbstreams.Options{
		Region: Region, BaseEndpoint: aws.String(a.dynamo.Endpoint),
		Credentials: credentials.NewStaticCredentialsProvider("local", "local", ""),
	})
	for _, f := range tp.Functions {
		for _, st := range f.Streams {
			fn := filepath.Base(f.Dir)
			p, err := streams.New(ctx, streams.Config{Source: st, Function: fn, Invoker: byID[f.LogicalID],
				Tables: a.dynamo.Client(), Streams: streamsClient, Region: Region, Logger: a.log})
			if err != nil {
				return nil, err
			}
			a.log.Info("stream read", "component", "streams", "function", fn, "table", st.Table,
				"startingPosition", st.StartingPosition, "batchSize", st.BatchSize, "filters", len(st.Filters))
			a.wg.Add(1)
			go func() {
				defer a.wg.Done()
				p.Run(runCtx)
			}()
		}
	}

	// The schedules.
	for _, f := range tp.Functions {
		for _, s := range f.Schedules {
			every, err := rate(s.Expression)
			if cfg.ScheduleInterval > 0 {
				every, err = cfg.ScheduleInterval, nil
			}
			if err != nil {
				a.log.Warn("schedule not emulated", "component", "schedule", "function", f.LogicalID, "err", err.Error())
				continue
			}
			a.wg.Add(1)
			go a.schedule(runCtx, filepath.Base(f.Dir), s, every, byID[f.LogicalID])
		}
	}
	a.log.Info("ready", "component", "assembly", "baseUrl", a.BaseURL, "s3", s3URL, "sfn", sfnURL)
	return a, nil
}

// CreateKey creates an API key as `genctl keys create` does on AWS: in
// the store, and wired to its tier's usage plan (Standard or Pro), or to
// a plan of its own with its figures (Enterprise).
func (a *Assembly) CreateKey(ctx context.Context, req admin.KeyRequest) (admin.CreatedKey, error) {
	if err := a.plans.Check(req.Tier); err != nil {
		return admin.CreatedKey{}, err
	}
	k, err := admin.New(a.Store).CreateKey(ctx, req)
	if err != nil {
		return k, err
	}
	sk, err := a.Store.KeyByHash(ctx, hashKey(k.APIKey))
	if err != nil {
		return k, fmt.Errorf("key %s: %w", k.KeyID, err)
	}
	if _, err := a.plans.Wire(ctx, sk); err != nil {
		return k, err
	}
	return k, nil
}

// wireKeys wires the dev key to the Standard plan.
func (a *Assembly) wireKeys(ctx context.Context, keys *apikeys.Gateway, planIDs map[string]string) error {
	k, err := a.Store.KeyByHash(ctx, hashKey(a.DevKey))
	if err != nil {
		return fmt.Errorf("dev key: %w", err)
	}
	return keys.EnsureKey(authorizer.UsageIdentifierKey(k.ID), k.AccountID, planIDs["standardusageplan"])
}

// schedule invokes fn every interval with a scheduled event, as
// EventBridge does.
func (a *Assembly) schedule(ctx context.Context, fn string, s samtemplate.Schedule, every time.Duration, pool *lambdaruntime.Pool) {
	defer a.wg.Done()
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case now := <-t.C:
			ev, _ := json.Marshal(map[string]any{
				"version": "0", "id": newID(), "detail-type": "Scheduled Event", "source": "aws.events",
				"account": Account, "time": now.UTC().Format(time.RFC3339), "region": Region,
				"resources": []string{"arn:aws:events:" + Region + ":" + Account + ":rule/" + StackName + "-" + s.Name},
				"detail":    map[string]any{},
			})
			ictx, cancel := context.WithTimeout(ctx, 5*time.Minute)
			res, p, cold, err := pool.Invoke(ictx, "", ev)
			cancel()
			pid := 0
			if p != nil {
				pid = p.PID()
			}
			switch {
			case err != nil:
				a.log.Warn("scheduled invocation failed", "component", "schedule", "function", fn, "pid", pid, "err", err.Error())
			case res.IsError:
				a.log.Warn("scheduled invocation failed", "component", "schedule", "function", fn, "pid", pid, "errorType", res.ErrorType)
			default:
				a.log.Info("scheduled invocation", "component", "schedule", "function", fn, "pid", pid, "cold", cold)
			}
		}
	}
}

var rateExpr = regexp.MustCompile(`^rate\((\d+) (minute|minutes|hour|hours|day|days)\)$`)

// rate reads rate(N unit).
func rate(expr string) (time.Duration, error) {
	m := rateExpr.FindStringSubmatch(expr)
	if m == nil {
		return 0, fmt.Errorf("only rate(...) schedules are emulated, not %q", expr)
	}
	n, _ := strconv.Atoi(m[1])
	unit := map[string]time.Duration{"minute": time.Minute, "hour": time.Hour, "day": 24 * time.Hour}[strings.TrimSuffix(m[2], "s")]
	return time.Duration(n) * unit, nil
}

// Close stops everything it started.
func (a *Assembly) Close() {
	if a.cancel != nil {
		a.cancel()
	}
	for _, s := range a.servers {
		s.Close()
	}
	a.wg.Wait()
	for i := len(a.closers) - 1; i >= 0; i-- {
		a.closers[i]()
	}
	if a.dynamo != nil {
		a.dynamo.Stop()
	}
	if a.dataDir != "" {
		os.Remove(filepath.Join(a.dataDir, localdeploy.FileName))
	}
}

// serve serves h on a loopback port of its own and returns its URL.
func (a *Assembly) serve(h http.Handler) (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	a.servers = append(a.servers, srv)
	go srv.Serve(ln)
	return "http://" + ln.Addr().String(), nil
}

// logRequests logs the presigned requests (the clients' downloads and
// uploads) an S3 serves.
// gatewayOrigin is the origin the API (and so the playground page) is
// served from, once the gateway listens; "" before.
func (a *Assembly) gatewayOrigin() string {
	u, err := url.Parse(a.BaseURL)
	if err != nil || a.BaseURL == "" {
		return ""
	}
	return u.Scheme + "://" + u.Host
}

// bucketCORS answers as the media bucket's CORS rule (template.yaml,
// "playground-uploads": POST from the API's origin, any header, cached an
// hour) does, with the gateway's local origin in place of execute-api's:
// the playground posts large images straight to the bucket and must read
// the answer. Requests from any other origin get no CORS headers, and
// their preflight is refused, as S3 refuses one that matches no rule.
func bucketCORS(h http.Handler, origin func() string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		o := r.Header.Get("Origin")
		allowed := o != "" && o == origin()
		if r.Method == http.MethodOptions && r.Header.Get("Access-Control-Request-Method") != "" {
			if !allowed || r.Header.Get("Access-Control-Request-Method") != http.MethodPost {
				http.Error(w, "CORSResponse: This CORS request is not allowed.", http.StatusForbidden)
				return
			}
			w.Header().Set("Access-Control-Allow-Origin", o)
			w.Header().Set("Access-Control-Allow-Methods", http.MethodPost)
			if h := r.Header.Get("Access-Control-Request-Headers"); h != "" {
				w.Header().Set("Access-Control-Allow-Headers", h)
			}
			w.Header().Set("Access-Control-Max-Age", "3600")
			w.Header().Add("Vary", "Origin")
			w.WriteHeader(http.StatusOK)
			return
		}
		if allowed && r.Method == http.MethodPost {
			w.Header().Set("Access-Control-Allow-Origin", o)
			w.Header().Add("Vary", "Origin")
		}
		h.ServeHTTP(w, r)
	})
}

func logRequests(log *slog.Logger, component string, h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rec := &statusRecorder{ResponseWriter: w, status: http.StatusOK}
		h.ServeHTTP(rec, r)
		if r.URL.Query().Get("X-Amz-Signature") != "" || r.Method == http.MethodPost && !strings.Contains(strings.Trim(r.URL.Path, "/"), "/") {
			log.Info("presigned request", "component", component, "method", r.Method, "path", r.URL.Path, "status", rec.status)
		}
	})
}

type statusRecorder struct {
	http.ResponseWriter
	status int
}

func (s *statusRecorder) WriteHeader(code int) {
	s.status = code
	s.ResponseWriter.WriteHeader(code)
}

// lineLogger turns a process's output into records of the stream: a JSON
// line (what the functions log) is nested as it is, anything else is
// text.
type lineLogger struct {
	log *slog.Logger
	mu  sync.Mutex
	buf []byte
}

func (l *lineLogger) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.buf = append(l.buf, p...)
	for {
		i := strings.IndexByte(string(l.buf), '\n')
		if i < 0 {
			break
		}
		line := strings.TrimSpace(string(l.buf[:i]))
		l.buf = l.buf[i+1:]
		if line == "" {
			continue
		}
		if json.Valid([]byte(line)) {
			l.log.Info("log", "record", json.RawMessage(line))
		} else {
			l.log.Info("log", "text", line)
		}
	}
	return len(p), nil
}

// lockedWriter serializes the stream's writes.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// byService passes each request to the endpoint of the service it is
// signed for: the SigV4 credential scope's service, in the Authorization
// header or a presigned URL's X-Amz-Credential. A request signed for none
// (a browser's POST of an upload form) goes to S3, as it would on AWS.
func byService(endpoints map[string]string) http.Handler {
	proxies := map[string]*httputil.ReverseProxy{}
	for svc, u := range endpoints {
		target, err := url.Parse(u)
		if err != nil {
			panic(err)
		}
		proxies[svc] = &httputil.ReverseProxy{Rewrite: func(pr *httputil.ProxyRequest) {
			pr.SetURL(target)
			// The signature covers the Host the client signed.
			pr.Out.Host = pr.In.Host
		}}
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		cred := r.URL.Query().Get("X-Amz-Credential")
		if _, after, ok := strings.Cut(r.Header.Get("Authorization"), "Credential="); ok {
			cred, _, _ = strings.Cut(after, ",")
		}
		// <key id>/<date>/<region>/<service>/aws4_request
		svc := "s3"
		if p := strings.Split(cred, "/"); len(p) == 5 {
			svc = p[3]
		}
		p, ok := proxies[svc]
		if !ok {
			http.Error(w, "the assembly on one machine has no "+svc, http.StatusNotImplemented)
			return
		}
		p.ServeHTTP(w, r)
	})
}

func hashKey(key string) string { return apikey.Hash(key) }

func newID() string {
	b := make([]byte, 16)
	rand.Read(b)
	return hex.EncodeToString(b)
}

// functionKeyID is the access key id of a function's role: one per
// function, so that the emulated S3 answers each as its role.
func functionKeyID(logicalID string) string { return roleKeyID + strings.ToUpper(logicalID) }
