// The Go package's benchmarks: a module of their own, so that the published
// module (bindings/go) does not carry them; go.work uses it for development.
module github.com/roomchat/roomchat-go/bench

go 1.23

require github.com/roomchat/roomchat-go v0.1.0

// The package itself is the workspace's (../go.work): never fetched.
replace github.com/roomchat/roomchat-go => ../
