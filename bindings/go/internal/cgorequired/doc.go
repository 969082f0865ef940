// Package cgorequired is empty in a build with cgo: see cgorequired.go.
package cgorequired
