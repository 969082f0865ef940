//go:build !race

package roomchat_test

// raceEnabled: this test binary was built with -race.
const raceEnabled = false
