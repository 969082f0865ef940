package roomchat_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/roomchat/roomchat-go"
)

// The shared conformance vectors (tests/conformance/), through the package's
// pure wire layer, with the assertions the Python and Node packages make.

type requestVector struct {
	Name        string          `json:"name"`
	Operation   string          `json:"operation"`
	Params      json.RawMessage `json:"params"`
	ExpectError string          `json:"expect_error"`
	Expect      *struct {
		Method string          `json:"method"`
		Path   string          `json:"path"`
		Query  [][2]string     `json:"query"`
		Body   json.RawMessage `json:"body"`
		URL    string          `json:"url"`
	} `json:"expect"`
}

type responseVector struct {
	Name      string      `json:"name"`
	Operation string      `json:"operation"`
	Status    int         `json:"status"`
	Headers   [][2]string `json:"headers"`
	Body      string      `json:"body"`
	Expect    struct {
		OK    json.RawMessage `json:"ok"`
		Error *struct {
			Kind         string  `json:"kind"`
			Status       int     `json:"status"`
			Message      *string `json:"message"`
			EventID      string  `json:"event_id"`
			RetryAfterMs *int64  `json:"retry_after_ms"`
			Service      struct {
				Message      string  `json:"message"`
				Error        string  `json:"error"`
				ErrorMessage *string `json:"errorMessage"`
			} `json:"service"`
		} `json:"error"`
	} `json:"expect"`
}

func loadVectors[V any](t testing.TB, name string) []V {
	t.Helper()
	text, err := os.ReadFile(filepath.Join("..", "..", "tests", "conformance", name))
	if err != nil {
		t.Fatal(err)
	}
	var vectors []V
	if err := json.Unmarshal(text, &vectors); err != nil {
		t.Fatal(err)
	}
	if len(vectors) < 20 {
		t.Fatalf("%s: %d vectors", name, len(vectors))
	}
	return vectors
}

// sameJSON compares two JSON texts as values, numbers by their text (a
// number comes back as it came: 20480, not 20480.0).
func sameJSON(t testing.TB, a, b []byte) bool {
	t.Helper()
	decode := func(text []byte) any {
		if len(bytes.TrimSpace(text)) == 0 {
			text = []byte("null")
		}
		d := json.NewDecoder(bytes.NewReader(text))
		d.UseNumber()
		var v any
		if err := d.Decode(&v); err != nil {
			t.Fatalf("not JSON: %v: %s", err, text)
		}
		return v
	}
	return reflect.DeepEqual(decode(a), decode(b))
}

// sentinels is every kind's sentinel, by the kind's name.
var sentinels = map[string]*roomchat.Error{
	"missing_auth": roomchat.ErrMissingAuth, "invalid_auth": roomchat.ErrInvalidAuth,
	"invalid_request": roomchat.ErrInvalidRequest, "user_not_found": roomchat.ErrUserNotFound,
	"plan_upgrade_required": roomchat.ErrPlanUpgradeRequired, "rate_limited": roomchat.ErrRateLimited,
	"server_error": roomchat.ErrServerError, "unexpected_status": roomchat.ErrUnexpectedStatus,
	"timeout": roomchat.ErrTimeout, "connection": roomchat.ErrConnection, "decode": roomchat.ErrDecode,
	"response_too_large": roomchat.ErrResponseTooLarge, "validation": roomchat.ErrValidation,
	"configuration": roomchat.ErrConfiguration, "cancelled": roomchat.ErrCancelled,
	"budget_unavailable": roomchat.ErrBudgetUnavailable, "tls": roomchat.ErrTLS,
	"not_found": roomchat.ErrNotFound, "invalid_argument": roomchat.ErrInvalidArgument,
	"internal": roomchat.ErrInternal,
}

// asError is err as *roomchat.Error of kind, errors.Is its sentinel and no other.
func asError(t testing.TB, err error, kind roomchat.Kind) *roomchat.Error {
	t.Helper()
	var e *roomchat.Error
	if !errors.As(err, &e) {
		t.Fatalf("want a *roomchat.Error of kind %s, got %T %v", kind, err, err)
	}
	if e.Kind != kind {
		t.Fatalf("want kind %s, got %s (%v)", kind, e.Kind, err)
	}
	for name, sentinel := range sentinels {
		if errors.Is(err, sentinel) != (name == kind.String()) {
			t.Fatalf("errors.Is(%v, %s) = %v", err, name, errors.Is(err, sentinel))
		}
	}
	return e
}

func TestRequestVectors(t *testing.T) {
	for _, v := range loadVectors[requestVector](t, "requests.json") {
		t.Run(v.Name, func(t *testing.T) {
			if v.ExpectError != "" {
				_, err := roomchat.BuildRequest(v.Operation, v.Params)
				var e *roomchat.Error
				if !errors.As(err, &e) || e.Kind.String() != v.ExpectError {
					t.Fatalf("want a %s error, got %v", v.ExpectError, err)
				}
				return
			}
			request, err := roomchat.BuildRequestURL(v.Operation, v.Params, "https://api.example.com", "REDACTED")
			if err != nil {
				t.Fatal(err)
			}
			want := v.Expect
			if request.Method != want.Method || request.Path != want.Path {
				t.Fatalf("%s %s, want %s %s", request.Method, request.Path, want.Method, want.Path)
			}
			if len(request.Query) != len(want.Query) || (len(want.Query) > 0 && !reflect.DeepEqual(request.Query, want.Query)) {
				t.Fatalf("query %q, want %q", request.Query, want.Query)
			}
			if !sameJSON(t, request.Body, want.Body) {
				t.Fatalf("body %s, want %s", request.Body, want.Body)
			}
			if want.URL != "" && request.URL != want.URL {
				t.Fatalf("url %s, want %s", request.URL, want.URL)
			}
		})
	}
}

func vectorHeader(pairs [][2]string) http.Header {
	h := http.Header{}
	for _, p := range pairs {
		h.Add(p[0], p[1])
	}
	return h
}

func TestResponseVectors(t *testing.T) {
	for _, v := range loadVectors[responseVector](t, "responses.json") {
		t.Run(v.Name, func(t *testing.T) {
			got, err := roomchat.DecodeResponse(v.Operation, v.Status, vectorHeader(v.Headers), []byte(v.Body))
			if v.Expect.OK != nil {
				if err != nil {
					t.Fatal(err)
				}
				if !sameJSON(t, got, v.Expect.OK) {
					t.Fatalf("decoded %s\nwant %s", got, v.Expect.OK)
				}
				return
			}
			want := v.Expect.Error
			kind := roomchat.Kind(0)
			for k := roomchat.Kind(1); k <= 103; k++ {
				if k.String() == want.Kind {
					kind = k
				}
			}
			e := asError(t, err, kind)
			if e.Status != want.Status {
				t.Errorf("status %d, want %d", e.Status, want.Status)
			}
			if want.Message != nil && e.Message != *want.Message {
				t.Errorf("message %q, want %q", e.Message, *want.Message)
			}
			if e.EventID != want.EventID {
				t.Errorf("event id %q, want %q", e.EventID, want.EventID)
			}
			if e.ServiceMessage != want.Service.Message || e.ServiceError != want.Service.Error {
				t.Errorf("service texts %q %q, want %q %q", e.ServiceMessage, e.ServiceError, want.Service.Message, want.Service.Error)
			}
			if want.Service.ErrorMessage != nil && e.ServiceErrorMessage != *want.Service.ErrorMessage {
				t.Errorf("service errorMessage %q, want %q", e.ServiceErrorMessage, *want.Service.ErrorMessage)
			}
			wantRetry := time.Duration(0)
			if want.RetryAfterMs != nil {
				wantRetry = time.Duration(*want.RetryAfterMs) * time.Millisecond
			}
			if e.RetryAfter != wantRetry {
				t.Errorf("retry after %v, want %v", e.RetryAfter, wantRetry)
			}
		})
	}
}

// Each kind has its sentinel, which matches that kind alone.
func TestSentinels(t *testing.T) {
	for name, sentinel := range sentinels {
		asError(t, &roomchat.Error{Kind: sentinel.Kind, Message: "x"}, sentinel.Kind)
		if sentinel.Kind.String() != name {
			t.Errorf("%s's sentinel is of kind %s", name, sentinel.Kind)
		}
	}
}
