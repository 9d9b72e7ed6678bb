//go:build !js

package playground

// yieldToHost does nothing natively: the controllers run on threads of
// their own (see yield_js.go).
func yieldToHost() {}
