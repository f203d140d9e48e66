//go:build !zpfault

package server

// faultPoint does nothing: only a test build (-tags zpfault) panics here,
// to prove a request's panic costs that request alone.
func faultPoint(string) {}
