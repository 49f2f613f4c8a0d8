package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"io"
	"math/rand/v2"
	"mime/multipart"
	"net/http"
	"strings"
	"sync"
	"time"
)

// Endpoint names in the report.
const (
	epText    = "text-to-video"
	epImage   = "image-to-video"
	epFrames  = "first-last-frame"
	epStatus  = "status"
	epDL      = "download"
	epFile    = "file"
	epHistory = "history"
	epModels  = "models"
	epBad     = "bad request"
	epForeign = "foreign task"
)

// drive runs cfg.clients clients until cfg.duration has passed (or ctx
// ends) and waits for their last requests.
func drive(ctx context.Context, cfg config, baseURL string, k keys, rep *report) {
	hc := &http.Client{
		Timeout: 2 * time.Minute,
		Transport: &http.Transport{
			MaxIdleConns:        cfg.clients,
			MaxIdleConnsPerHost: cfg.clients,
			IdleConnTimeout:     time.Minute,
		},
	}
	defer hc.CloseIdleConnections()
	end := time.Now().Add(cfg.duration)
	shared := &pool{}
	var wg sync.WaitGroup
	for i := range cfg.clients {
		c := &client{
			id: i, r: rand.New(rand.NewPCG(cfg.seed, uint64(i))), hc: hc, base: baseURL,
			keys: k, rep: rep, pool: shared, think: cfg.think,
		}
		wg.Go(func() {
			for time.Now().Before(end) && ctx.Err() == nil {
				c.step()
			}
		})
	}
	wg.Wait()
}

// pool holds the task ids the clients have seen, for polls, downloads
// and foreign reads of tasks other than a client's own.
type pool struct {
	mu        sync.Mutex
	tasks     []string
	completed []string
}

func (p *pool) add(id string, completed bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if completed {
		p.completed = append(p.completed, id)
	} else {
		p.tasks = append(p.tasks, id)
	}
}

func (p *pool) pick(r *rand.Rand, completed bool) string {
	p.mu.Lock()
	defer p.mu.Unlock()
	ids := p.tasks
	if completed {
		ids = p.completed
	}
	if len(ids) == 0 {
		return ""
	}
	return ids[r.IntN(len(ids))]
}

// client is one simulated user: it starts a generation when its last one
// has finished, polls it, downloads what completed, reads its history and
// the models, and now and then sends something wrong.
type client struct {
	id    int
	r     *rand.Rand
	hc    *http.Client
	base  string
	keys  keys
	rep   *report
	pool  *pool
	think time.Duration

	current string // own task not yet seen finished
	starts  int
}

func (c *client) step() {
	switch n := c.r.IntN(100); {
	case c.starts == 0 || n < 14: // a user comes to generate a video
		if c.current == "" {
			c.start()
		} else {
			c.poll(c.current)
		}
	case n < 45:
		id := c.current
		if id == "" || c.r.IntN(3) == 0 {
			id = c.pool.pick(c.r, false)
		}
		if id != "" {
			c.poll(id)
		}
	case n < 57:
		if id := c.pool.pick(c.r, true); id != "" {
			c.download(id)
		}
	case n < 70:
		c.history()
	case n < 80:
		c.send(epModels, http.MethodGet, "/api/gen/models", c.keys.main.APIKey, "", nil, 200)
	case n < 95:
		c.bad()
	default:
		if id := c.pool.pick(c.r, false); id != "" {
			c.foreign(id)
		}
	}
	if c.think > 0 {
		time.Sleep(time.Duration(c.r.Int64N(int64(2 * c.think))))
	}
}

// answer is a response as the report needs it.
type answer struct {
	status int
	body   map[string]any
	raw    []byte
}

// send makes one request, records it under endpoint and checks its
// answer: expect lists the statuses the contract allows besides a 500 or
// 503 (which a fault may cause anywhere).
func (c *client) send(endpoint, method, path, key, contentType string, body []byte, expect ...int) (answer, bool) {
	req, err := http.NewRequest(method, c.base+path, bytes.NewReader(body))
	if err != nil {
		panic(err) // the soak builds its own requests
	}
	if key != "" {
		req.Header.Set("X-API-Key", key)
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	began := time.Now()
	resp, err := c.hc.Do(req)
	var a answer
	if err == nil {
		a.raw, err = io.ReadAll(resp.Body)
		resp.Body.Close()
		a.status = resp.StatusCode
	}
	took := time.Since(began)
	if err != nil {
		c.rep.transportError(endpoint, err)
		return a, false
	}
	json.Unmarshal(a.raw, &a.body)
	c.rep.record(endpoint, a, took, expect)
	return a, true
}

func (c *client) start() {
	c.starts++
	prompt := fmt.Sprintf("soak client %d, start %d: a paper boat on a pond", c.id, c.starts)
	samples := 1
	switch n := c.r.IntN(100); {
	case n < 3:
		prompt += " [transient]"
	case n < 6:
		prompt += " [filter]"
		samples = 2
	case n < 10:
		samples = 2
	}
	audio := c.r.IntN(2) == 0
	var (
		a        answer
		ok       bool
		endpoint string
	)
	switch n := c.r.IntN(10); {
	case n < 5:
		endpoint = epText
		body := fmt.Sprintf(`{"prompt":%q,"model":"gen-3.1-lite-generate-001","durationSeconds":4,"sampleCount":%d,"generateAudio":%v}`,
			prompt, samples, audio)
		a, ok = c.send(endpoint, http.MethodPost, "/api/gen/text-to-video", c.keys.main.APIKey, "application/json", []byte(body), 202, 402, 429)
	case n < 8:
		endpoint = epImage
		ct, body := form(map[string]string{"prompt": prompt, "model": "gen-3.1-lite-generate-001", "durationSeconds": "4",
			"sampleCount": fmt.Sprint(samples), "generateAudio": fmt.Sprint(audio)}, map[string][]byte{"image": testPNG(c.id)})
		a, ok = c.send(endpoint, http.MethodPost, "/api/gen/image-to-video", c.keys.main.APIKey, ct, body, 202, 402, 429)
	default:
		endpoint = epFrames
		ct, body := form(map[string]string{"prompt": prompt, "model": "gen-3.1-fast-generate-001", "resolution": "720p",
			"durationSeconds": "4", "generateAudio": fmt.Sprint(audio)},
			map[string][]byte{"firstFrame": testPNG(c.id), "lastFrame": testPNG(c.id + 1)})
		a, ok = c.send(endpoint, http.MethodPost, "/api/gen/first-last-frame", c.keys.main.APIKey, ct, body, 202, 402, 429)
	}
	if ok && a.status == http.StatusAccepted {
		id, _ := a.body["taskId"].(string)
		c.rep.announce(id)
		c.pool.add(id, false)
		c.current = id
	}
}

func (c *client) poll(id string) {
	a, ok := c.send(epStatus, http.MethodGet, "/api/gen/status/"+id, c.keys.main.APIKey, "", nil, 200)
	if !ok || a.status != http.StatusOK {
		return
	}
	switch a.body["status"] {
	case "completed":
		if id == c.current {
			c.pool.add(id, true)
			c.current = ""
		}
	case "failed":
		if id == c.current {
			c.current = ""
		}
	}
}

func (c *client) download(id string) {
	a, ok := c.send(epDL, http.MethodGet, "/api/gen/download/"+id, c.keys.main.APIKey, "", nil, 200)
	if !ok || a.status != http.StatusOK || c.r.IntN(4) != 0 {
		return
	}
	// Now and then fetch the video itself through its signed link.
	videos, _ := a.body["videos"].([]any)
	if len(videos) == 0 {
		return
	}
	v, _ := videos[0].(map[string]any)
	link, _ := v["url"].(string)
	if path, ok := strings.CutPrefix(link, c.base); ok {
		c.send(epFile, http.MethodGet, path, "", "", nil, 200)
	}
}

func (c *client) history() {
	q := fmt.Sprintf("?limit=%d&skip=%d", 1+c.r.IntN(50), c.r.IntN(20))
	if c.r.IntN(3) == 0 {
		q += "&status=" + []string{"pending", "processing", "completed", "failed"}[c.r.IntN(4)]
	}
	c.send(epHistory, http.MethodGet, "/api/gen/history"+q, c.keys.main.APIKey, "", nil, 200)
}

// badRequest is a request the contract refuses with want.
type badRequest struct {
	method, path, contentType string
	body                      []byte
	key                       string // "main" for the soak key, else sent as it is
	want                      int
}

func badStart(body string) badRequest {
	return badRequest{http.MethodPost, "/api/gen/text-to-video", "application/json", []byte(body), "main", 400}
}

var badRequests = sync.OnceValue(func() []badRequest {
	ct, notImage := form(map[string]string{"prompt": "x"}, map[string][]byte{"image": []byte("GIF89a, not a JPEG or PNG")})
	return []badRequest{
		badStart(`{"prompt":`),
		badStart(`{"prompt":"x","colour":"red"}`),
		badStart(`{"prompt":"x","sampleCount":3}`),
		badStart(`{"prompt":"x","durationSeconds":"8"}`),
		badStart(`{"prompt":"   "}`),
		{http.MethodPost, "/api/gen/image-to-video", ct, notImage, "main", 400},
		{http.MethodGet, "/api/gen/status/gen_1700000000000_abcdefghij", "", nil, "main", 404},
		{http.MethodGet, "/api/gen/download/not-an-id", "", nil, "main", 404},
		{http.MethodGet, "/api/gen/history?limit=500", "", nil, "main", 400},
		{http.MethodDelete, "/api/gen/models", "", nil, "main", 405},
		{http.MethodGet, "/api/gen/models", "", nil, "", 401},
		{http.MethodGet, "/api/gen/models", "", nil, "gen_" + strings.Repeat("x", 40), 401},
	}
})

// bad sends a request the contract refuses, and expects the refusal.
func (c *client) bad() {
	b := badRequests()[c.r.IntN(len(badRequests()))]
	key := b.key
	if key == "main" {
		key = c.keys.main.APIKey
	}
	c.send(epBad, b.method, b.path, key, b.contentType, b.body, b.want)
}

// foreign reads another account's task: it must not exist for the caller.
func (c *client) foreign(id string) {
	path := "/api/gen/status/" + id
	if c.r.IntN(2) == 0 {
		path = "/api/gen/download/" + id
	}
	c.send(epForeign, http.MethodGet, path, c.keys.other.APIKey, "", nil, 404)
}

// form is a multipart body with fields and files.
func form(fields map[string]string, files map[string][]byte) (string, []byte) {
	var buf bytes.Buffer
	w := multipart.NewWriter(&buf)
	for k, v := range fields {
		w.WriteField(k, v)
	}
	for k, data := range files {
		fw, _ := w.CreateFormFile(k, k+".png")
		fw.Write(data)
	}
	w.Close()
	return w.FormDataContentType(), buf.Bytes()
}

var (
	pngMu    sync.Mutex
	pngCache = map[int][]byte{}
)

// testPNG is a small PNG, one of eight colours.
func testPNG(n int) []byte {
	n %= 8
	pngMu.Lock()
	defer pngMu.Unlock()
	if b, ok := pngCache[n]; ok {
		return b
	}
	img := image.NewRGBA(image.Rect(0, 0, 160, 90))
	c := color.RGBA{uint8(40 * n), uint8(255 - 30*n), uint8(90 + 20*n), 255}
	for y := range 90 {
		for x := range 160 {
			if (x/20+y/20)%2 == 0 {
				img.Set(x, y, c)
			} else {
				img.Set(x, y, color.RGBA{250, 250, 250, 255})
			}
		}
	}
	var buf bytes.Buffer
	png.Encode(&buf, img)
	pngCache[n] = buf.Bytes()
	return pngCache[n]
}
