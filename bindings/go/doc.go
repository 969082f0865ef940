// Package roomchat is a client of a hosted chat service's REST API: its 41
// operations as methods taking a context.Context first, typed records that
// keep unknown fields, iterators over every listing, *Error with a sentinel
// per kind, OpenTelemetry and log/slog. It runs roomchat's Rust core through
// its C library (cgo, linked statically: nothing is fetched at build or run
// time), as every roomchat package does.
//
//	client, err := roomchat.NewClientFromEnv()
//	if err != nil {
//		log.Fatal(err)
//	}
//	defer client.Close()
//	page, err := client.ListUsers(ctx, &roomchat.ListUsersParams{Limit: roomchat.Int(50)})
//
// The guide is bindings/go/README.md of the repository.
package roomchat
