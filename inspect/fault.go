//go:build !zpfault

package inspect

// faultPoint does nothing: only a test build (-tags zpfault) panics here,
// to prove a panic while reading one archive costs that archive alone.
func faultPoint(string) {}
