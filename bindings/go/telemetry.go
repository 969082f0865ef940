package roomchat

// The OpenTelemetry mapping of core's reports (placeholder until the mapping lands).

type telemetry struct{}

type callTelemetry struct{}

func newTelemetry(s *settings) *telemetry { return &telemetry{} }

func (t *telemetry) clientStarted(c *client) {}

func (t *telemetry) clientClosed(c *client) {}

func (t *telemetry) observe(cs *callState, o *observation, headers attemptHeaders) {}
