// Package roomchat is the Go client of roomchat, over its C library (cgo).
//
// TEMPORARY (packaging branch): this file and placeholder.go stand in for the
// runtime until it lands; the runtime's files replace both.
package roomchat
