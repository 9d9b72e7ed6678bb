//go:build js

package playground

import (
	"sync"
	"syscall/js"
)

// yieldToHost lets the host's event loop run before the caller goes on. In
// WebAssembly the engine shares one thread with it, and Go hands the thread
// back only once no goroutine can run: the controllers reconciling key
// after key (a new cluster's add-ons, a rollout), each write waking others,
// would hold the requests the page sends, and a worker the page terminates
// (reset, reload) would keep its database files until Chromium forces it,
// two seconds later. A message posted to itself comes back as the host's
// next task, without the clamp nested timers get.
func yieldToHost() {
	y := hostYield()
	ch := make(chan struct{})
	y.mu.Lock()
	y.waiting = append(y.waiting, ch)
	y.mu.Unlock()
	y.send.Call("postMessage", js.Null())
	<-ch
}

type hostYielder struct {
	send    js.Value // the port posted to; its twin wakes the waiters in order
	mu      sync.Mutex
	waiting []chan struct{}
}

var hostYield = sync.OnceValue(func() *hostYielder {
	y := &hostYielder{}
	ch := js.Global().Get("MessageChannel").New()
	recv := ch.Get("port1")
	recv.Set("onmessage", js.FuncOf(func(js.Value, []js.Value) any {
		y.mu.Lock()
		next := y.waiting[0]
		y.waiting = y.waiting[1:]
		y.mu.Unlock()
		close(next)
		return nil
	}))
	if unref := recv.Get("unref"); unref.Type() == js.TypeFunction {
		recv.Call("unref") // Node: a waiting port must not keep the process alive
	}
	y.send = ch.Get("port2")
	return y
})
