// End to end through a real OpenTelemetry Collector (scripts/otel-collector.sh,
// built from the pinned Go modules): the Go package's spans and metrics
// exported by otel-go's official OTLP exporters (otlptracehttp and
// otlpmetrichttp v1.38.0, OTLP/HTTP protobuf) behind a batch span processor
// and a periodic reader, as an application sets them up; what the collector
// wrote (OTLP JSON) is asserted: the application's span → the calls → their
// attempts (one trace, parent ids), the HTTP client conventions' attributes,
// a 429 resent once, the metrics' points, and no key, token, proxy or Redis
// password anywhere in the file. The same test as Rust's, Node's and Python's
// (tests/otel/README.md), in its own module so that the exporters are no
// requirement of the package.
//
// It needs a collector built (`bash scripts/otel-collector.sh build`) and the
// emulator; the test command runs it with ROOMCHAT_OTELCOL_GO_E2E=1. Without
// that variable it is skipped, unless CI is set: under CI it always runs.
//
//	cd tests/otel/go && ROOMCHAT_OTELCOL_GO_E2E=1 go test -count=1 -v ./...
package collector_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlpmetric/otlpmetrichttp"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/propagation"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	roomchat "github.com/roomchat/roomchat-go"
)

// The secrets, with the characters URLs and JSON treat apart.
const (
	privateKey    = "sk_live_C0ll?ct#9/x@y+&=%"
	publicKey     = "pk_live_C0ll?ct#p/k@y+&=%"
	proxyPassword = "Pr0xy?#/p@ss&"
	redisPassword = "R3d?s#9/c@ll&"
	users         = "/consumer/api/v2/users"
	service       = "roomchat-collector-e2e-go"
	kindInternal  = 1
	kindClient    = 3
	statusError   = 2
)

var root = filepath.Join("..", "..", "..")

// collector is one of the test's own (scripts/otel-collector.sh start).
type collector struct {
	dir     string
	env     map[string]string
	stopped bool
}

func startCollector(t *testing.T) *collector {
	t.Helper()
	c := &collector{dir: t.TempDir(), env: map[string]string{}}
	cmd := exec.Command("bash", filepath.Join(root, "scripts", "otel-collector.sh"), "start", c.dir)
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("otel-collector.sh start: %v", err)
	}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		if name, value, ok := strings.Cut(line, "="); ok {
			c.env[name] = value
		}
	}
	t.Cleanup(func() { c.stop(t) })
	return c
}

// stop stops it: what it accepted is then in its file.
func (c *collector) stop(t *testing.T) {
	if c.stopped {
		return
	}
	c.stopped = true
	cmd := exec.Command("bash", filepath.Join(root, "scripts", "otel-collector.sh"), "stop", c.dir)
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Run(); err != nil {
		t.Errorf("otel-collector.sh stop: %v", err)
	}
}

type emulator struct {
	BaseURL  string `json:"base_url"`
	AdminURL string `json:"admin_url"`
}

func startEmulator(t *testing.T, args ...string) *emulator {
	t.Helper()
	bin := os.Getenv("ROOMCHAT_EMULATOR")
	for _, dir := range []string{"release", "debug"} {
		if bin != "" {
			break
		}
		if candidate := filepath.Join(root, "target", dir, "roomchat-emulator"); fileExists(candidate) {
			bin = candidate
		}
	}
	if bin == "" {
		t.Fatal("no emulator: build it (cargo build --release -p roomchat-emulator) or set ROOMCHAT_EMULATOR")
	}
	cmd := exec.Command(bin, args...)
	stdout, _ := cmd.StdoutPipe()
	stdin, _ := cmd.StdinPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { stdin.Close(); _ = cmd.Wait() })
	line, err := bufio.NewReader(stdout).ReadBytes('\n')
	if err != nil {
		t.Fatal(err)
	}
	emu := &emulator{}
	if err := json.Unmarshal(line, emu); err != nil {
		t.Fatal(err)
	}
	return emu
}

func fileExists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

func (e *emulator) fault(t *testing.T, method, path string, action map[string]any) {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"method": method, "path": path, "times": 1, "action": action})
	res, err := http.Post(e.AdminURL+"/faults", "application/json", strings.NewReader(string(body)))
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != 200 {
		t.Fatalf("a fault: %d", res.StatusCode)
	}
}

// OTLP JSON, as the collector's file exporter writes it.
type (
	anyValue struct {
		StringValue *string  `json:"stringValue"`
		IntValue    *string  `json:"intValue"`
		DoubleValue *float64 `json:"doubleValue"`
		BoolValue   *bool    `json:"boolValue"`
	}
	keyValue struct {
		Key   string   `json:"key"`
		Value anyValue `json:"value"`
	}
	span struct {
		TraceID      string     `json:"traceId"`
		SpanID       string     `json:"spanId"`
		ParentSpanID string     `json:"parentSpanId"`
		Name         string     `json:"name"`
		Kind         int        `json:"kind"`
		Attributes   []keyValue `json:"attributes"`
		Events       []struct {
			Name       string     `json:"name"`
			Attributes []keyValue `json:"attributes"`
		} `json:"events"`
		Status struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		} `json:"status"`
		scope string
	}
	point struct {
		Attributes     []keyValue `json:"attributes"`
		Count          string     `json:"count"`
		AsInt          string     `json:"asInt"`
		ExplicitBounds []float64  `json:"explicitBounds"`
	}
	points struct {
		DataPoints []point `json:"dataPoints"`
	}
	metric struct {
		Name      string  `json:"name"`
		Unit      string  `json:"unit"`
		Histogram *points `json:"histogram"`
		Sum       *points `json:"sum"`
		Gauge     *points `json:"gauge"`
	}
	batch struct {
		ResourceSpans []struct {
			Resource   struct{ Attributes []keyValue } `json:"resource"`
			ScopeSpans []struct {
				Scope struct{ Name string } `json:"scope"`
				Spans []span                `json:"spans"`
			} `json:"scopeSpans"`
		} `json:"resourceSpans"`
		ResourceMetrics []struct {
			Resource     struct{ Attributes []keyValue } `json:"resource"`
			ScopeMetrics []struct {
				Scope   struct{ Name string } `json:"scope"`
				Metrics []metric              `json:"metrics"`
			} `json:"scopeMetrics"`
		} `json:"resourceMetrics"`
	}
)

func attrs(list []keyValue) map[string]any {
	out := map[string]any{}
	for _, kv := range list {
		switch v := kv.Value; {
		case v.StringValue != nil:
			out[kv.Key] = *v.StringValue
		case v.IntValue != nil:
			n, _ := strconv.ParseInt(*v.IntValue, 10, 64)
			out[kv.Key] = n
		case v.DoubleValue != nil:
			out[kv.Key] = *v.DoubleValue
		case v.BoolValue != nil:
			out[kv.Key] = *v.BoolValue
		}
	}
	return out
}

func (p points) all() []point { return p.DataPoints }

func TestSpansAndMetricsReachARealCollector(t *testing.T) {
	if os.Getenv("ROOMCHAT_OTELCOL_GO_E2E") == "" && os.Getenv("CI") == "" {
		t.Skip("needs a built collector: set ROOMCHAT_OTELCOL_GO_E2E=1 (the test command does; under CI it always runs)")
	}
	col := startCollector(t)
	endpoint := col.env["ROOMCHAT_OTELCOL_HTTP_ENDPOINT"]
	ctx := context.Background()
	res := resource.NewSchemaless(attribute.String("service.name", service))
	spanExporter, err := otlptracehttp.New(ctx, otlptracehttp.WithEndpointURL(endpoint+"/v1/traces"))
	if err != nil {
		t.Fatal(err)
	}
	metricExporter, err := otlpmetrichttp.New(ctx, otlpmetrichttp.WithEndpointURL(endpoint+"/v1/metrics"))
	if err != nil {
		t.Fatal(err)
	}
	tp := sdktrace.NewTracerProvider(sdktrace.WithResource(res), sdktrace.WithBatcher(spanExporter))
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithResource(res),
		sdkmetric.WithReader(sdkmetric.NewPeriodicReader(metricExporter, sdkmetric.WithInterval(time.Hour))))

	emu := startEmulator(t, "--private-key", privateKey, "--public-key", publicKey)
	// A proxy and a shared Redis budget, each with its password: loopback is
	// not proxied, and no Redis listens on port 1 (the client falls back and says so).
	client, err := roomchat.NewClient(privateKey,
		roomchat.WithBaseURL(emu.BaseURL),
		roomchat.WithPublicKey(publicKey),
		roomchat.WithTracerProvider(tp),
		roomchat.WithMeterProvider(mp),
		roomchat.WithPropagator(propagation.TraceContext{}),
		roomchat.WithProxy("https://me:"+url.QueryEscape(proxyPassword)+"@127.0.0.1:9"),
		roomchat.WithRateLimit(100, time.Minute),
		roomchat.WithRedisBudget("redis://:"+url.QueryEscape(redisPassword)+"@127.0.0.1:1/0"),
		roomchat.WithRedisPolicy(roomchat.RedisLocalFallback, 1),
		roomchat.WithRedisTimeouts(200*time.Millisecond, 200*time.Millisecond, 0),
	)
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()

	appCtx, app := tp.Tracer("app").Start(ctx, "handle request")
	jon, err := client.CreateUser(appCtx, "jon", nil)
	if err != nil {
		t.Fatal(err)
	}
	token := jon.AccessToken
	if _, err := client.ValidateAccessToken(appCtx, token); err != nil {
		t.Fatal(err)
	}
	// The token in its query too: url.full must show it REDACTED.
	if _, err := client.Raw(appCtx, roomchat.RawRequest{Method: "POST", Path: "/consumer/api/v1/user/accessToken/validate",
		Query: [][2]string{{"accessToken", token}}, Body: map[string]any{"accessToken": token}, Auth: roomchat.RawAuthPublicKey}); err != nil {
		t.Fatal(err)
	}
	// A 429 then a 200: two attempts, the second resent once.
	emu.fault(t, "GET", users, map[string]any{"kind": "respond", "status": 429, "headers": map[string]string{"Retry-After": "0"}, "body": `{"message":"slow down"}`})
	if _, err := client.ListUsers(appCtx, &roomchat.ListUsersParams{Limit: roomchat.Int(5)}); err != nil {
		t.Fatal(err)
	}
	// A failed call whose answer quotes the keys and the token.
	quoted, _ := json.Marshal(map[string]string{"message": fmt.Sprintf("bad key %s / %s / %s", privateKey, publicKey, token)})
	emu.fault(t, "GET", users, map[string]any{"kind": "respond", "status": 400, "body": string(quoted)})
	_, err = client.ListUsers(appCtx, &roomchat.ListUsersParams{Limit: roomchat.Int(1)})
	if !errors.Is(err, roomchat.ErrInvalidRequest) {
		t.Fatalf("the 400: %v", err)
	}
	appID := app.SpanContext().SpanID().String()
	app.End()
	// Everything exported (the client alive: its budget's gauge is observed), then the collector stopped.
	if err := tp.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	if err := mp.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	col.stop(t)
	received, err := os.ReadFile(col.env["ROOMCHAT_OTELCOL_OUTPUT"])
	if err != nil {
		t.Fatal(err)
	}

	var spans []span
	var lastMetrics []metric
	for _, line := range strings.Split(string(received), "\n") {
		if strings.TrimSpace(line) == "" {
			continue
		}
		var b batch
		if err := json.Unmarshal([]byte(line), &b); err != nil {
			t.Fatal(err)
		}
		for _, rs := range b.ResourceSpans {
			if attrs(rs.Resource.Attributes)["service.name"] != service {
				t.Errorf("a resource %v", attrs(rs.Resource.Attributes))
			}
			for _, ss := range rs.ScopeSpans {
				for _, s := range ss.Spans {
					s.scope = ss.Scope.Name
					spans = append(spans, s)
				}
			}
		}
		if len(b.ResourceMetrics) > 0 {
			lastMetrics = nil
			for _, rm := range b.ResourceMetrics {
				for _, sm := range rm.ScopeMetrics {
					if sm.Scope.Name == "roomchat" {
						lastMetrics = append(lastMetrics, sm.Metrics...)
					}
				}
			}
		}
	}

	// Spans: one trace, app → the calls → their attempts.
	byID := map[string]span{}
	for _, s := range spans {
		byID[s.SpanID] = s
		if s.TraceID != app.SpanContext().TraceID().String() {
			t.Errorf("span %s in another trace", s.Name)
		}
		if s.scope != "app" && s.scope != "roomchat" {
			t.Errorf("span %s of scope %s", s.Name, s.scope)
		}
	}
	var calls []span
	names := map[string]int{}
	attemptsOf := map[string][]span{}
	for _, s := range spans {
		if s.scope != "roomchat" {
			continue
		}
		switch s.Kind {
		case kindInternal:
			calls = append(calls, s)
			if s.ParentSpanID != appID {
				t.Errorf("call %s under %s, want the application's span %s", s.Name, s.ParentSpanID, appID)
			}
			names[s.Name]++
		case kindClient:
			attemptsOf[s.ParentSpanID] = append(attemptsOf[s.ParentSpanID], s)
			a := attrs(s.Attributes)
			for _, key := range []string{"http.request.method", "server.address", "server.port", "url.full"} {
				if _, ok := a[key]; !ok {
					t.Errorf("attempt %s has no %s", s.Name, key)
				}
			}
			if a["network.protocol.version"] != "1.1" {
				t.Errorf("attempt %s: %v", s.Name, a)
			}
		default:
			t.Errorf("span %s of kind %d", s.Name, s.Kind)
		}
	}
	if len(calls) != 5 || names["roomchat list_users"] != 2 || names["roomchat create_user"] != 1 ||
		names["roomchat validate_access_token"] != 1 || names["roomchat raw"] != 1 {
		t.Fatalf("the calls %v, want create_user, validate_access_token, raw and list_users twice", names)
	}
	retried, failed, degraded := 0, 0, 0
	for _, call := range calls {
		attempts := attemptsOf[call.SpanID]
		a := attrs(call.Attributes)
		if a["roomchat.attempts"] != int64(len(attempts)) {
			t.Errorf("call with %d attempt spans says %v", len(attempts), a["roomchat.attempts"])
		}
		for _, e := range call.Events {
			if e.Name == "roomchat.budget.degraded" {
				degraded++
			}
		}
		if len(attempts) == 2 {
			retried++
			if call.Name != "roomchat list_users" || attempts[0].Name != "GET "+users || attempts[1].Name != "GET "+users {
				t.Errorf("the retried call %s, its attempts %s and %s", call.Name, attempts[0].Name, attempts[1].Name)
			}
			first, second := attrs(attempts[0].Attributes), attrs(attempts[1].Attributes)
			if first["http.response.status_code"] != int64(429) {
				first, second = second, first
				attempts[0], attempts[1] = attempts[1], attempts[0]
			}
			if first["http.response.status_code"] != int64(429) || first["error.type"] != "429" || first["roomchat.error.kind"] != "rate_limited" || attempts[0].Status.Code != statusError {
				t.Errorf("the 429's attempt %v %+v", first, attempts[0].Status)
			}
			if _, ok := first["http.request.resend_count"]; ok {
				t.Error("the first attempt has a resend count")
			}
			if second["http.response.status_code"] != int64(200) || second["http.request.resend_count"] != int64(1) {
				t.Errorf("the resent attempt %v", second)
			}
			hasRetry := false
			for _, e := range call.Events {
				hasRetry = hasRetry || e.Name == "roomchat.retry" && attrs(e.Attributes)["roomchat.retry.reason"] == "429"
			}
			if !hasRetry {
				t.Errorf("no roomchat.retry event on the retried call: %+v", call.Events)
			}
		}
		if call.Status.Code == statusError {
			failed++
			if a["error.type"] != "invalid_request" || call.Status.Message != "invalid_request (HTTP 400)" {
				t.Errorf("the failed call %v %+v", a, call.Status)
			}
		}
		if call.Name == "roomchat raw" {
			for _, attempt := range attempts {
				if full, _ := attrs(attempt.Attributes)["url.full"].(string); !strings.HasSuffix(full, "/consumer/api/v1/user/accessToken/validate?publicKey=REDACTED&accessToken=REDACTED") {
					t.Errorf("the raw validate's url.full %q", full)
				}
			}
		}
	}
	if retried != 1 || failed != 1 || degraded == 0 {
		t.Errorf("retried %d, failed %d, degraded events %d", retried, failed, degraded)
	}

	// Metrics: the last batch.
	metrics := map[string]metric{}
	for _, m := range lastMetrics {
		metrics[m.Name] = m
	}
	request, ok := metrics["http.client.request.duration"]
	if !ok || request.Unit != "s" || request.Histogram == nil {
		t.Fatalf("http.client.request.duration: %+v", request)
	}
	countByStatus, clientSpans := map[int64]int64{}, 0
	for _, ss := range attemptsOf {
		clientSpans += len(ss)
	}
	var total int64
	for _, p := range request.Histogram.all() {
		a := attrs(p.Attributes)
		n, _ := strconv.ParseInt(p.Count, 10, 64)
		total += n
		if a["url.template"] == users {
			countByStatus[a["http.response.status_code"].(int64)] += n
		}
		if _, ok := a["url.full"]; ok {
			t.Error("a request duration point carries url.full")
		}
		if fmt.Sprint(p.ExplicitBounds) != fmt.Sprint([]float64{0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10}) {
			t.Errorf("buckets %v", p.ExplicitBounds)
		}
	}
	if total != int64(clientSpans) {
		t.Errorf("%d request durations, %d CLIENT spans", total, clientSpans)
	}
	if countByStatus[429] != 1 || countByStatus[200] != 1 || countByStatus[400] != 1 {
		t.Errorf("the users template's attempts by status %v", countByStatus)
	}
	retries := metrics["roomchat.client.retries"]
	if retries.Sum == nil || len(retries.Sum.DataPoints) != 1 || retries.Sum.DataPoints[0].AsInt != "1" || attrs(retries.Sum.DataPoints[0].Attributes)["roomchat.retry.reason"] != "429" {
		t.Errorf("roomchat.client.retries %+v", retries)
	}
	var callCount int64
	if m := metrics["roomchat.client.call.duration"]; m.Histogram != nil {
		for _, p := range m.Histogram.all() {
			n, _ := strconv.ParseInt(p.Count, 10, 64)
			callCount += n
		}
	}
	if callCount != 5 {
		t.Errorf("roomchat.client.call.duration counts %d calls, want 5", callCount)
	}
	gauge := metrics["roomchat.rate_limit.remaining"]
	if gauge.Gauge == nil || len(gauge.Gauge.DataPoints) != 1 {
		t.Fatalf("roomchat.rate_limit.remaining %+v", gauge)
	}
	if _, ok := attrs(gauge.Gauge.DataPoints[0].Attributes)["roomchat.client.id"]; !ok {
		t.Errorf("the gauge's point has no roomchat.client.id")
	}
	if _, ok := metrics["roomchat.budget.degraded"]; !ok {
		t.Error("no roomchat.budget.degraded count")
	}

	// No secret, raw or percent-encoded, in the file as written nor decoded.
	var decoded strings.Builder
	for _, s := range spans {
		decoded.WriteString(s.Name + "\n" + s.Status.Message + "\n")
		for _, v := range attrs(s.Attributes) {
			fmt.Fprintln(&decoded, v)
		}
		for _, e := range s.Events {
			for _, v := range attrs(e.Attributes) {
				fmt.Fprintln(&decoded, v)
			}
		}
	}
	for _, secret := range []string{privateKey, publicKey, token, proxyPassword, redisPassword} {
		for _, form := range []string{secret, url.QueryEscape(secret), url.PathEscape(secret)} {
			if strings.Contains(string(received), form) || strings.Contains(decoded.String(), form) {
				t.Errorf("a secret (%d characters) reached the collector", len(secret))
			}
		}
	}
	npoints := 0
	for _, m := range lastMetrics {
		for _, p := range []*points{m.Histogram, m.Sum, m.Gauge} {
			if p != nil {
				npoints += len(p.DataPoints)
			}
		}
	}
	fmt.Printf("otel e2e go: the collector received %d spans (%d calls, %d CLIENT) and %d metric points (%d metrics) over OTLP/HTTP; no key, token, proxy or Redis password in its %d bytes\n",
		len(spans), len(calls), clientSpans, npoints, len(lastMetrics), len(received))
}
