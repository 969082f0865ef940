package roomchat

/*
#include "capi.h"
*/
import "C"

import (
	"errors"
	"log/slog"
	"runtime"
	"time"
	"unsafe"

	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
)

// Option sets a client's setting (NewClient).
type Option func(*settings)

// RedisPolicy says what a client does while Redis cannot be reached.
type RedisPolicy int

const (
	// RedisLocalFallback counts in the process, the limit divided among the
	// expected processes, until Redis is back (the default).
	RedisLocalFallback RedisPolicy = 0
	// RedisFailClosed fails each call with KindBudgetUnavailable.
	RedisFailClosed RedisPolicy = 1
	// RedisFailOpen sends without counting.
	RedisFailOpen RedisPolicy = 2
)

// TLSRoots says which root certificates an https client trusts.
type TLSRoots int

const (
	// TLSRootsWebPKI trusts the Mozilla roots built into the library (the default).
	TLSRootsWebPKI TLSRoots = 0
	// TLSRootsSystem trusts the operating system's roots.
	TLSRootsSystem TLSRoots = 1
)

type settings struct {
	err                             error
	baseURL, publicKey, chatURL     *string
	appName                         *string
	connectTimeout, timeout         time.Duration
	maxRetries                      *int
	retryNonIdempotent              bool
	rateRequests                    int
	rateWindow, maxWait             time.Duration
	failFast, setRate               bool
	caPEM                           []byte
	gzip                            *bool
	tlsRoots                        *TLSRoots
	proxy                           *string
	noProxy                         bool
	redisURL                        *string
	redisPolicy                     *RedisPolicy
	redisProcesses                  int
	redisConnect, redisIO, redisOff time.Duration
	redisPrefix                     *string
	maxResponseBytes                *uint64
	allowInsecureHTTP               bool
	headers                         [][2]string
	logger                          *slog.Logger
	tracerProvider                  trace.TracerProvider
	meterProvider                   metric.MeterProvider
	propagator                      propagation.TextMapPropagator
	noPropagation                   bool
	maxInFlight                     int
	fromEnv                         bool // NewClientFromEnv: the key and URLs from the environment
}

func defaultSettings() *settings {
	return &settings{maxInFlight: DefaultMaxInFlight}
}

// DefaultMaxInFlight is how many calls of one client are in the library at
// once unless WithMaxInFlight says otherwise: each holds an OS thread while
// it waits for the network, and the others wait for a turn without one.
var DefaultMaxInFlight = max(64, 4*runtime.GOMAXPROCS(0))

// WithBaseURL sets the service's REST base URL (required), e.g. https://api.example.com.
func WithBaseURL(url string) Option { return func(s *settings) { s.baseURL = &url } }

// WithPublicKey sets the public key, which ValidateAccessToken and raw
// requests with the public key need.
func WithPublicKey(key string) Option { return func(s *settings) { s.publicKey = &key } }

// WithChatURL sets the address rooms are served at to browsers (SignInURL).
func WithChatURL(url string) Option { return func(s *settings) { s.chatURL = &url } }

// WithAppName appends a name to the User-Agent.
func WithAppName(name string) Option { return func(s *settings) { s.appName = &name } }

// WithTimeouts sets the connect timeout and the overall timeout of one
// attempt (0 keeps a default: 10 s and 30 s). A ctx deadline bounds the whole
// call, waits included.
func WithTimeouts(connect, overall time.Duration) Option {
	return func(s *settings) { s.connectTimeout, s.timeout = connect, overall }
}

// WithMaxRetries sets the retries after the first attempt (default 2).
func WithMaxRetries(n int) Option { return func(s *settings) { s.maxRetries = &n } }

// WithRetryNonIdempotent lets a create or a post be sent again after a 5xx
// or a timeout (default false: it could create twice).
func WithRetryNonIdempotent(allow bool) Option {
	return func(s *settings) { s.retryNonIdempotent = allow }
}

// WithRateLimit sets the key's client-side budget: requests per window
// (default 600 per minute). A call over it waits for a slot or, with
// WithRateLimitFailFast, fails at once with KindRateLimited. It waits, unless
// WithRateLimitMaxWait says otherwise, as long as every roomchat package
// does: the window, its jitter allowance (a twentieth of it, at most 1 s) and
// a second, and at least a minute (62 s for a minute's window).
func WithRateLimit(requests int, window time.Duration) Option {
	return func(s *settings) { s.rateRequests, s.rateWindow, s.setRate = requests, window, true }
}

// WithRateLimitFailFast makes a call over the budget fail at once.
func WithRateLimitFailFast() Option {
	return func(s *settings) { s.failFast, s.setRate = true, true }
}

// WithRateLimitMaxWait sets the longest a call waits for a slot of the budget.
func WithRateLimitMaxWait(d time.Duration) Option {
	return func(s *settings) { s.maxWait, s.setRate = d, true }
}

// WithRedisBudget shares the key's budget with every process and host
// through Redis: redis://, rediss://, redis+unix://, redis+cluster:// or
// redis+sentinel:// URLs (see the guide). Its password appears in no error
// or log line.
func WithRedisBudget(url string) Option { return func(s *settings) { s.redisURL = &url } }

// WithRedisPolicy sets what the client does while Redis cannot be reached,
// and, for RedisLocalFallback, how many processes share the limit (0: 4).
func WithRedisPolicy(policy RedisPolicy, expectedProcesses int) Option {
	return func(s *settings) { s.redisPolicy, s.redisProcesses = &policy, expectedProcesses }
}

// WithRedisTimeouts sets Redis's connect timeout, each round trip's timeout,
// and how long Redis is left alone after a failure (0 keeps a default:
// 500 ms, 500 ms, 5 s).
func WithRedisTimeouts(connect, io, cooldown time.Duration) Option {
	return func(s *settings) { s.redisConnect, s.redisIO, s.redisOff = connect, io, cooldown }
}

// WithRedisKeyPrefix sets the prefix of the budget's Redis keys (default roomchat).
func WithRedisKeyPrefix(prefix string) Option { return func(s *settings) { s.redisPrefix = &prefix } }

// WithCAPEM also trusts the certificates of pem (a private CA, a
// TLS-inspecting gateway's), beside the roots.
func WithCAPEM(pem []byte) Option { return func(s *settings) { s.caPEM = pem } }

// WithTLSRoots sets the roots an https client trusts.
func WithTLSRoots(roots TLSRoots) Option { return func(s *settings) { s.tlsRoots = &roots } }

// WithProxy sends through the proxy at url (http:// or https://, with
// user:password@ if it needs them; never shown in any output). Without it
// the environment is read as curl reads it (HTTPS_PROXY, NO_PROXY, …).
func WithProxy(url string) Option { return func(s *settings) { s.proxy, s.noProxy = &url, false } }

// WithoutProxy sends directly, whatever the environment says.
func WithoutProxy() Option { return func(s *settings) { s.proxy, s.noProxy = nil, true } }

// WithGzip sets whether answers are asked for gzip-compressed (default true).
func WithGzip(enabled bool) Option { return func(s *settings) { s.gzip = &enabled } }

// WithMaxResponseBytes sets the largest answer accepted (default 16 MiB).
func WithMaxResponseBytes(n uint64) Option { return func(s *settings) { s.maxResponseBytes = &n } }

// WithAllowInsecureHTTP allows sending the key over plain http:// to a host
// that is not loopback (default false).
func WithAllowInsecureHTTP(allow bool) Option {
	return func(s *settings) { s.allowInsecureHTTP = allow }
}

// WithHeader puts a header on every request (a client's own headers, such as
// Authorization or User-Agent, are refused when the client is made).
func WithHeader(name, value string) Option {
	return func(s *settings) { s.headers = append(s.headers, [2]string{name, value}) }
}

// WithLogger sends the client's log lines (a line per attempt at debug, a
// retry or a degraded budget at warn) to logger, with the call's ctx. No key
// or token is in them. Whether debug lines are wanted is read from logger
// when the client is made (a slog.LevelVar lowered later gets none).
func WithLogger(logger *slog.Logger) Option { return func(s *settings) { s.logger = logger } }

// WithTracerProvider makes the client's spans with provider instead of
// otel.GetTracerProvider().
func WithTracerProvider(provider trace.TracerProvider) Option {
	return func(s *settings) { s.tracerProvider = provider }
}

// WithMeterProvider records the client's metrics with provider instead of
// otel.GetMeterProvider().
func WithMeterProvider(provider metric.MeterProvider) Option {
	return func(s *settings) { s.meterProvider = provider }
}

// WithPropagator injects trace context with propagator instead of
// otel.GetTextMapPropagator().
func WithPropagator(propagator propagation.TextMapPropagator) Option {
	return func(s *settings) { s.propagator = propagator }
}

// WithoutTracePropagation sends no trace context (traceparent, tracestate,
// baggage) to the service; spans and metrics are made as before.
func WithoutTracePropagation() Option { return func(s *settings) { s.noPropagation = true } }

// WithMaxInFlight bounds the client's calls in the library at once (default
// DefaultMaxInFlight); the others wait for a turn, holding no OS thread, and
// a ctx that ends while waiting ends the wait.
func WithMaxInFlight(n int) Option {
	return func(s *settings) {
		if n < 1 {
			s.err = &Error{Kind: KindConfiguration, Message: "WithMaxInFlight: the bound must be at least 1"}
			return
		}
		s.maxInFlight = n
	}
}

// apply writes the settings to the library's options.
func (s *settings) apply(o *C.struct_roomchat_client_options) error {
	var errs []error
	text := func(name string, v *string, set func(*C.char) C.roomchat_result) {
		if v == nil {
			return
		}
		c, err := cString(name, *v)
		if err != nil {
			errs = append(errs, err)
			return
		}
		defer C.free(unsafe.Pointer(c))
		if err := check(set(c), nil); err != nil {
			errs = append(errs, err)
		}
	}
	negative := func(option string, values ...time.Duration) {
		for _, d := range values {
			if d < 0 {
				errs = append(errs, &Error{Kind: KindConfiguration, Message: option + ": a duration must not be negative"})
				return
			}
		}
	}
	negative("WithTimeouts", s.connectTimeout, s.timeout)
	negative("WithRateLimitMaxWait", s.maxWait)
	negative("WithRedisTimeouts", s.redisConnect, s.redisIO, s.redisOff)
	if s.redisProcesses < 0 {
		errs = append(errs, &Error{Kind: KindConfiguration, Message: "WithRedisPolicy: the expected processes must not be negative"})
	}
	if len(errs) > 0 {
		return errors.Join(errs...)
	}
	text("base URL", s.baseURL, func(c *C.char) C.roomchat_result { return C.roomchat_client_options_set_base_url(o, c) })
	text("public key", s.publicKey, func(c *C.char) C.roomchat_result { return C.roomchat_client_options_set_public_key(o, c) })
	text("chat URL", s.chatURL, func(c *C.char) C.roomchat_result { return C.roomchat_client_options_set_chat_url(o, c) })
	text("app name", s.appName, func(c *C.char) C.roomchat_result { return C.roomchat_client_options_set_app_name(o, c) })
	if s.connectTimeout != 0 || s.timeout != 0 {
		C.roomchat_client_options_set_timeouts(o, keepDefaultMs(s.connectTimeout), keepDefaultMs(s.timeout))
	}
	if s.maxRetries != nil || s.retryNonIdempotent {
		retries := 2
		if s.maxRetries != nil {
			retries = *s.maxRetries
		}
		if retries < 0 {
			errs = append(errs, &Error{Kind: KindConfiguration, Message: "WithMaxRetries: retries must not be negative"})
		} else {
			C.roomchat_client_options_set_retries(o, C.uint32_t(min(retries, 1<<31)), C.bool(s.retryNonIdempotent))
		}
	}
	if s.setRate {
		requests, window, wait := s.rateRequests, s.rateWindow, s.maxWait
		if requests == 0 && window == 0 {
			requests, window = 600, time.Minute
		}
		if requests < 1 || requests > 1<<31 || window <= 0 {
			errs = append(errs, &Error{Kind: KindConfiguration, Message: "WithRateLimit: at least 1 request per a window above 0"})
		} else {
			waitMs := C.uint64_t(wait.Milliseconds())
			if wait == 0 {
				// Core's default for the window, as every roomchat package waits.
				waitMs = C.roomchat_rate_limit_default_max_wait_ms(durationMs(window))
			}
			C.roomchat_client_options_set_rate_limit(o, C.uint32_t(requests), durationMs(window), C.bool(s.failFast), waitMs)
		}
	}
	if s.caPEM != nil {
		pem := string(s.caPEM)
		text("CA PEM", &pem, func(c *C.char) C.roomchat_result { return C.roomchat_client_options_set_ca_pem(o, c) })
	}
	if s.gzip != nil {
		C.roomchat_client_options_set_gzip(o, C.bool(*s.gzip))
	}
	if s.tlsRoots != nil {
		C.roomchat_client_options_set_tls_roots(o, C.uint32_t(*s.tlsRoots))
	}
	if s.noProxy {
		C.roomchat_client_options_set_proxy(o, nil)
	}
	text("proxy", s.proxy, func(c *C.char) C.roomchat_result { return C.roomchat_client_options_set_proxy(o, c) })
	text("Redis URL", s.redisURL, func(c *C.char) C.roomchat_result { return C.roomchat_client_options_set_rate_limit_redis(o, c) })
	if s.redisPolicy != nil {
		C.roomchat_client_options_set_redis_policy(o, C.uint32_t(*s.redisPolicy), C.uint32_t(max(0, s.redisProcesses)))
	}
	if s.redisConnect != 0 || s.redisIO != 0 || s.redisOff != 0 {
		C.roomchat_client_options_set_redis_timeouts(o, keepDefaultMs(s.redisConnect), keepDefaultMs(s.redisIO), keepDefaultMs(s.redisOff))
	}
	text("Redis key prefix", s.redisPrefix, func(c *C.char) C.roomchat_result { return C.roomchat_client_options_set_redis_key_prefix(o, c) })
	if s.maxResponseBytes != nil {
		C.roomchat_client_options_set_max_response_bytes(o, C.uint64_t(*s.maxResponseBytes))
	}
	if s.allowInsecureHTTP {
		C.roomchat_client_options_set_allow_insecure_http(o, true)
	}
	for _, h := range s.headers {
		name, value := h[0], h[1]
		text("header name", &name, func(cn *C.char) C.roomchat_result {
			cv, err := cString("header value", value)
			if err != nil {
				errs = append(errs, err)
				return C.ROOMCHAT_RESULT_OK
			}
			defer C.free(unsafe.Pointer(cv))
			return C.roomchat_client_options_add_header(o, cn, cv)
		})
	}
	if s.noPropagation {
		C.roomchat_client_options_set_propagate_trace_context(o, false)
	}
	return errors.Join(errs...)
}

// keepDefaultMs is d in milliseconds, 0 (the library's default) for 0.
func keepDefaultMs(d time.Duration) C.uint64_t {
	if d == 0 {
		return 0
	}
	return durationMs(d)
}

// newOptions starts the library's options: for privateKey, or, for
// NewClientFromEnv, from the environment as core reads it (the same variables,
// the same errors as every roomchat package).
func (s *settings) newOptions(privateKey string) (*C.struct_roomchat_client_options, error) {
	var options *C.struct_roomchat_client_options
	var cErr *C.struct_roomchat_error
	if s.fromEnv {
		if err := check(C.roomchat_client_options_new_from_env(&options, &cErr), cErr); err != nil {
			return nil, err
		}
		return options, nil
	}
	cKey, err := cString("private key", privateKey)
	if err != nil {
		return nil, err
	}
	defer C.free(unsafe.Pointer(cKey))
	if err := check(C.roomchat_client_options_new(cKey, &options, &cErr), cErr); err != nil {
		return nil, err
	}
	return options, nil
}
