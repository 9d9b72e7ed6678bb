package main

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"fmt"
	"io"
	"math/big"
	"net"
	"net/http"
	"os"
	"os/signal"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// The floor is a third server, run beside the two: the least a Go API
// server must do to answer this benchmark's requests. It parses and encodes
// each created object once, keeps it in memory, and writes the encoded event
// to every watch; no storage, no validation, no field manager, no
// authorization. It listens with Go's net/http over TLS with the HTTP/2
// settings kube-apiserver announces (100 streams a connection, 256 KiB
// windows), as kubeplay does. Its row shows what the client and Go's HTTP/2
// stack cost on their own on this machine: a server written in Go cannot
// go below it, whatever it does.

// floorFlag makes benchoracle the floor server on the address after it.
const floorFlag = "-serve-floor"

// serveFloor runs the floor server on addr until SIGTERM.
func serveFloor(addr string) error {
	cert, err := selfSigned()
	if err != nil {
		return err
	}
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	const streams, window = 100, 256 << 10
	srv := &http.Server{
		Handler:   newFloor(),
		TLSConfig: &tls.Config{Certificates: []tls.Certificate{cert}, NextProtos: []string{"h2", "http/1.1"}},
		HTTP2: &http.HTTP2Config{MaxConcurrentStreams: streams, MaxReadFrameSize: window,
			MaxReceiveBufferPerStream: window, MaxReceiveBufferPerConnection: streams * window},
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	go func() {
		<-ctx.Done()
		srv.Close()
	}()
	if err := srv.ServeTLS(l, "", ""); err != http.ErrServerClosed {
		return err
	}
	return nil
}

func selfSigned() (tls.Certificate, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return tls.Certificate{}, err
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1),
		Subject:      pkix.Name{CommonName: "floor"},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(24 * time.Hour),
		IPAddresses:  []net.IP{net.IPv4(127, 0, 0, 1)},
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return tls.Certificate{}, err
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}, nil
}

// floor holds each namespace's ConfigMaps, encoded, and its watches.
type floor struct {
	mu       sync.Mutex
	rev      int64
	items    map[string][][]byte
	watchers map[string]map[chan []byte]bool
}

func newFloor() *floor {
	return &floor{items: map[string][][]byte{}, watchers: map[string]map[chan []byte]bool{}}
}

func (f *floor) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	parts := strings.Split(strings.Trim(r.URL.Path, "/"), "/")
	switch {
	case r.URL.Path == "/readyz":
		io.WriteString(w, "ok")
	case r.URL.Path == "/version":
		io.WriteString(w, `{"gitVersion":"Go `+strings.TrimPrefix(runtime.Version(), "go")+` net/http"}`)
	case len(parts) == 3 && parts[1] == "v1" && parts[2] == "namespaces" && r.Method == http.MethodPost:
		f.create(w, r, "", "Namespace")
	case len(parts) == 4 && parts[2] == "namespaces" && r.Method == http.MethodGet:
		fmt.Fprintf(w, `{"apiVersion":"v1","kind":"Namespace","metadata":{"name":%q}}`, parts[3])
	case len(parts) == 5 && parts[2] == "namespaces" && parts[4] == "configmaps":
		switch {
		case r.Method == http.MethodPost:
			f.create(w, r, parts[3], "ConfigMap")
		case r.URL.Query().Get("watch") != "":
			f.watch(w, r, parts[3])
		default:
			f.list(w, r, parts[3])
		}
	default:
		http.NotFound(w, r)
	}
}

// create parses the object, gives it its metadata, encodes it once and
// sends the event to the namespace's watches.
func (f *floor) create(w http.ResponseWriter, r *http.Request, ns, kind string) {
	var obj map[string]any
	if err := json.NewDecoder(r.Body).Decode(&obj); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	md, _ := obj["metadata"].(map[string]any)
	if md == nil {
		http.Error(w, "no metadata", http.StatusBadRequest)
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.rev++
	if ns != "" {
		md["namespace"] = ns
	}
	md["resourceVersion"] = strconv.FormatInt(f.rev, 10)
	md["uid"] = fmt.Sprintf("00000000-0000-0000-0000-%012d", f.rev)
	md["creationTimestamp"] = time.Now().UTC().Format(time.RFC3339)
	b, err := json.Marshal(obj)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	if kind == "ConfigMap" {
		f.items[ns] = append(f.items[ns], b)
		ev := append(append([]byte(`{"type":"ADDED","object":`), b...), "}\n"...)
		for ch := range f.watchers[ns] {
			select {
			case ch <- ev:
			default: // a watch too slow to take it ends, as the servers' do
				close(ch)
				delete(f.watchers[ns], ch)
			}
		}
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusCreated)
	w.Write(b)
}

// list sends the namespace's ConfigMaps, gzip-compressed from 128 KiB when
// the client accepts it, as both servers do.
func (f *floor) list(w http.ResponseWriter, r *http.Request, ns string) {
	f.mu.Lock()
	items := f.items[ns]
	rev := f.rev
	f.mu.Unlock()
	var buf bytes.Buffer
	fmt.Fprintf(&buf, `{"kind":"ConfigMapList","apiVersion":"v1","metadata":{"resourceVersion":"%d"},"items":[`, rev)
	for i, it := range items {
		if i > 0 {
			buf.WriteByte(',')
		}
		buf.Write(it)
	}
	buf.WriteString("]}")
	w.Header().Set("Content-Type", "application/json")
	if buf.Len() < 128<<10 || !strings.Contains(r.Header.Get("Accept-Encoding"), "gzip") {
		w.Write(buf.Bytes())
		return
	}
	w.Header().Set("Content-Encoding", "gzip")
	zw, _ := gzip.NewWriterLevel(w, gzip.BestSpeed)
	zw.Write(buf.Bytes())
	zw.Close()
}

// watch sends every event of ns from now on, each written and flushed as it
// comes.
func (f *floor) watch(w http.ResponseWriter, r *http.Request, ns string) {
	ch := make(chan []byte, 100)
	f.mu.Lock()
	if f.watchers[ns] == nil {
		f.watchers[ns] = map[chan []byte]bool{}
	}
	f.watchers[ns][ch] = true
	f.mu.Unlock()
	defer func() {
		f.mu.Lock()
		delete(f.watchers[ns], ch)
		f.mu.Unlock()
	}()
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	fl := w.(http.Flusher)
	fl.Flush()
	for {
		select {
		case <-r.Context().Done():
			return
		case ev, ok := <-ch:
			if !ok {
				return
			}
			if _, err := w.Write(ev); err != nil {
				return
			}
			fl.Flush()
		}
	}
}
