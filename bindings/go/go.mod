module github.com/roomchat/roomchat-go

go 1.23

require (
	github.com/roomchat/roomchat-go/lib/darwin-amd64 v0.1.0
	github.com/roomchat/roomchat-go/lib/darwin-arm64 v0.1.0
	github.com/roomchat/roomchat-go/lib/linux-amd64 v0.1.0
	github.com/roomchat/roomchat-go/lib/linux-amd64-musl v0.1.0
	github.com/roomchat/roomchat-go/lib/linux-arm64 v0.1.0
	github.com/roomchat/roomchat-go/lib/linux-arm64-musl v0.1.0
	github.com/roomchat/roomchat-go/lib/windows-amd64 v0.1.0
	go.opentelemetry.io/otel v1.38.0
	go.opentelemetry.io/otel/metric v1.38.0
	go.opentelemetry.io/otel/sdk v1.38.0
	go.opentelemetry.io/otel/sdk/metric v1.38.0
	go.opentelemetry.io/otel/trace v1.38.0
	go.uber.org/goleak v1.3.0
)

require (
	github.com/go-logr/logr v1.4.3 // indirect
	github.com/go-logr/stdr v1.2.2 // indirect
	github.com/google/uuid v1.6.0 // indirect
	go.opentelemetry.io/auto/sdk v1.1.0 // indirect
	golang.org/x/sys v0.35.0 // indirect
)
