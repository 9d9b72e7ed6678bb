//go:build js && wasm

package main

import (
	"bytes"
	"fmt"
	"log"
	"net/http"
	"net/url"
	"sync"
	"syscall/js"

	"kubeplay/wasm/internal/bridge"
)

// engine exposes the site to JavaScript. Its callbacks never block the
// page's event loop: serve starts a goroutine per request and returns at once
// (Go runs it until it waits, then hands the event loop back), and the answer
// goes back through the caller's sink.
type engine struct {
	site http.Handler
	// answered runs once, when the head of the first answer has gone to
	// the page: the simulated cluster's controllers start then, as a
	// kube-controller-manager starts once its API server answers, so that
	// their first passes do not hold the engine's one thread before it.
	answered func()
	close    func() error

	mu       sync.Mutex // never held while calling JavaScript
	inflight map[int]*bridge.Exchange
}

func newEngine(site http.Handler, answered func(), close func() error) *engine {
	return &engine{site: site, answered: sync.OnceFunc(answered), close: close, inflight: make(map[int]*bridge.Exchange)}
}

// jsValue returns the engine as the page sees it. Its functions live as long
// as the program, so they are never released.
//
//	serve(id, method, url, headers, body, sink)
//	    starts request id (a number unique among requests in flight);
//	    url is absolute (its host becomes the request's Host);
//	    headers a flat array [name, value, name, value, ...];
//	    body a Uint8Array or null.
//	    sink receives the answer, and its methods must not throw:
//	      head(status, headers)  once, headers flat as above;
//	      chunk(bytes) -> bool   body pieces (Uint8Array, the sink's to keep);
//	                             false: "my queue is full", and the engine
//	                             sends nothing more until resume(id);
//	      end(error)             once, last: null when the body is complete,
//	                             else a message (a network error: no answer
//	                             if head was not called, else a cut body).
//	close(done)  stops the controllers and closes the database, then
//	             calls done(error): the worker is about to be replaced.
//	cancel(id)   cancels request id (abort, or the body stream cancelled).
//	resume(id)   the consumer of request id wants more after chunk said false.
//	receive(id, bytes)
//	             bytes (a Uint8Array) the client sends on request id once the
//	             handler hijacked it (head said 101: the request log's live
//	             WebSocket); see package bridge.
//
// Each call runs Go until every goroutine waits, so the sink's methods may be
// called before serve, cancel or resume returns.
func (e *engine) jsValue() js.Value {
	return js.ValueOf(map[string]any{
		"serve": js.FuncOf(e.serve),
		"close": js.FuncOf(func(_ js.Value, args []js.Value) any {
			if len(args) != 1 || args[0].Type() != js.TypeFunction {
				return nil
			}
			done := args[0]
			// Closing waits for the controllers, which need the event loop.
			go func() {
				msg := any(nil)
				if err := e.close(); err != nil {
					msg = err.Error()
				}
				done.Invoke(msg)
			}()
			return nil
		}),
		"cancel": js.FuncOf(e.withExchange((*bridge.Exchange).Cancel)),
		"resume": js.FuncOf(e.withExchange((*bridge.Exchange).Resume)),
		"receive": js.FuncOf(func(this js.Value, args []js.Value) any {
			if len(args) != 2 || args[1].Type() != js.TypeObject {
				return nil
			}
			p := make([]byte, args[1].Get("byteLength").Int())
			js.CopyBytesToGo(p, args[1])
			return e.withExchange(func(ex *bridge.Exchange) { ex.Receive(p) })(this, args)
		}),
	})
}

func (e *engine) serve(_ js.Value, args []js.Value) any {
	if len(args) != 6 {
		log.Printf("kubeplay: serve: %d arguments, want 6", len(args))
		return nil
	}
	defer func() {
		// A malformed call must not end the program; tell the caller.
		if p := recover(); p != nil {
			jsSink{args[5]}.End(fmt.Errorf("kubeplay: bad call to serve: %v", p))
		}
	}()
	id, sink := args[0].Int(), jsSink{args[5]}
	r, err := newRequest(args[1], args[2], args[3], args[4])
	if err != nil {
		sink.End(err)
		return nil
	}
	ex := bridge.New(r, headSink{sink, e.answered})
	e.mu.Lock()
	if _, dup := e.inflight[id]; dup {
		e.mu.Unlock()
		sink.End(fmt.Errorf("kubeplay: request id %d is already in flight", id))
		return nil
	}
	e.inflight[id] = ex
	e.mu.Unlock()
	go func() {
		defer func() {
			e.mu.Lock()
			delete(e.inflight, id)
			e.mu.Unlock()
		}()
		ex.Serve(e.site)
	}()
	return nil
}

// withExchange adapts an Exchange method into a callback taking the id;
// unknown ids (requests already over) are ignored.
func (e *engine) withExchange(f func(*bridge.Exchange)) func(js.Value, []js.Value) any {
	return func(_ js.Value, args []js.Value) any {
		if len(args) == 0 || args[0].Type() != js.TypeNumber {
			return nil
		}
		e.mu.Lock()
		ex := e.inflight[args[0].Int()]
		e.mu.Unlock()
		if ex != nil {
			f(ex)
		}
		return nil
	}
}

// newRequest builds the server-side request from serve's arguments, the way
// net/http's server would receive it: URL holding the path and query, Host
// apart. It reports malformed arguments as an error, not a panic.
func newRequest(method, rawURL, headers, body js.Value) (r *http.Request, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("kubeplay: bad request arguments: %v", p)
		}
	}()
	u, err := url.Parse(rawURL.String())
	if err != nil {
		return nil, err
	}
	var b []byte
	if body.Type() == js.TypeObject {
		b = make([]byte, body.Get("byteLength").Int())
		js.CopyBytesToGo(b, body)
	}
	r, err = http.NewRequest(method.String(), u.RequestURI(), bytes.NewReader(b))
	if err != nil {
		return nil, err
	}
	if len(b) == 0 {
		r.Body = http.NoBody
	}
	r.Host = u.Host
	r.RequestURI = u.RequestURI()
	r.RemoteAddr = "browser"
	for i, n := 0, headers.Length(); i+1 < n; i += 2 {
		r.Header.Add(headers.Index(i).String(), headers.Index(i+1).String())
	}
	return r, nil
}

// headSink is a sink that calls sent once it has delivered a head.
type headSink struct {
	jsSink
	sent func()
}

func (s headSink) Head(status int, h http.Header) {
	s.jsSink.Head(status, h)
	s.sent()
}

// jsSink is the page's sink object as a bridge.Sink. A JavaScript exception
// in a sink method is logged and otherwise ignored: it must not end the Go
// program.
type jsSink struct{ v js.Value }

var _ bridge.Sink = jsSink{}

func (s jsSink) Head(status int, h http.Header) {
	flat := make([]any, 0, 2*len(h))
	for k, vs := range h {
		for _, v := range vs {
			flat = append(flat, k, v)
		}
	}
	s.call("head", status, flat)
}

func (s jsSink) Chunk(p []byte) bool {
	a := js.Global().Get("Uint8Array").New(len(p))
	js.CopyBytesToJS(a, p)
	more, ok := s.call("chunk", a)
	return !ok || more.Truthy()
}

func (s jsSink) End(err error) {
	msg := any(nil)
	if err != nil {
		msg = err.Error()
	}
	s.call("end", msg)
}

func (s jsSink) call(method string, args ...any) (v js.Value, ok bool) {
	defer func() {
		if p := recover(); p != nil {
			log.Printf("kubeplay: sink.%s threw: %v", method, p)
			ok = false
		}
	}()
	return s.v.Call(method, args...), true
}
