package roomchat

// TEMPORARY: the telemetry's names (api/telemetry.toml) written out by hand
// until `cargo xtask codegen` writes them (telemetry_names_gen.go, branch
// gogen). Delete this file when that lands; the identifiers are the
// generated file's with a lower-case first letter, so only their case
// changes if the generated ones stay exported.

const (
	attrErrorMessage                  = "error.message"
	attrErrorType                     = "error.type"
	attrHTTPRequestMethod             = "http.request.method"
	attrHTTPRequestResendCount        = "http.request.resend_count"
	attrHTTPResponseStatusCode        = "http.response.status_code"
	attrNetworkProtocolVersion        = "network.protocol.version"
	attrRoomchatAttempt               = "roomchat.attempt"
	attrRoomchatAttempts              = "roomchat.attempts"
	attrRoomchatClientID              = "roomchat.client.id"
	attrRoomchatErrorKind             = "roomchat.error.kind"
	attrRoomchatOperation             = "roomchat.operation"
	attrRoomchatRateLimitWaitDuration = "roomchat.rate_limit.wait.duration"
	attrRoomchatRetryReason           = "roomchat.retry.reason"
	attrRoomchatRetryWaitDuration     = "roomchat.retry.wait.duration"
	attrRoomchatWaitDuration          = "roomchat.wait.duration"
	attrServerAddress                 = "server.address"
	attrServerPort                    = "server.port"
	attrURLFull                       = "url.full"
	attrURLTemplate                   = "url.template"

	eventRoomchatBudgetDegraded = "roomchat.budget.degraded"
	eventRoomchatRateLimitWait  = "roomchat.rate_limit.wait"
	eventRoomchatRetry          = "roomchat.retry"

	metricHTTPClientRequestDuration     = "http.client.request.duration"
	metricRoomchatBudgetDegraded        = "roomchat.budget.degraded"
	metricRoomchatClientActiveCalls     = "roomchat.client.active_calls"
	metricRoomchatClientCallDuration    = "roomchat.client.call.duration"
	metricRoomchatClientRetries         = "roomchat.client.retries"
	metricRoomchatRateLimitRemaining    = "roomchat.rate_limit.remaining"
	metricRoomchatRateLimitWaitDuration = "roomchat.rate_limit.wait.duration"
)
