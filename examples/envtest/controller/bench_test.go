package controller_test

import (
	"path/filepath"
	"sync"
	"testing"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/envtest"
)

// BenchmarkEnvironment_Start measures envtest's Start (etcd and
// kube-apiserver started and ready, the admin user provisioned, the CRD
// installed and served) and reports Stop beside it.
func BenchmarkEnvironment_Start(b *testing.B) {
	var stopping time.Duration
	for b.Loop() {
		env := &envtest.Environment{CRDDirectoryPaths: []string{filepath.Join("..", "config", "crd")}, ErrorIfCRDPathMissing: true, Scheme: scheme}
		if _, err := env.Start(); err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		start := time.Now()
		if err := env.Stop(); err != nil {
			b.Fatal(err)
		}
		stopping += time.Since(start)
		b.StartTimer()
	}
	b.ReportMetric(float64(stopping.Milliseconds())/float64(b.N), "stop-ms/op")
}

// BenchmarkControlPlane_Start splits the processes' part of Start: etcd
// started until its /health answers, then kube-apiserver until its
// /healthz does (envtest polls each every 100 ms after a first try).
func BenchmarkControlPlane_Start(b *testing.B) {
	var etcd time.Duration
	for b.Loop() {
		cp := &envtest.ControlPlane{Etcd: &envtest.Etcd{}, APIServer: &envtest.APIServer{}}
		t0 := time.Now()
		if err := cp.Etcd.Start(); err != nil {
			b.Fatal(err)
		}
		etcd += time.Since(t0)
		cp.APIServer.EtcdURL = cp.Etcd.URL
		if err := cp.APIServer.Start(); err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		if err := cp.Stop(); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
	}
	b.ReportMetric(float64(etcd.Milliseconds())/float64(b.N), "etcd-ms/op")
}

// BenchmarkEnvironment_StartEightInParallel measures eight environments
// started at once, until the last one is ready.
func BenchmarkEnvironment_StartEightInParallel(b *testing.B) {
	for b.Loop() {
		envs := make([]*envtest.Environment, 8)
		errs := make([]error, 8)
		var wg sync.WaitGroup
		for i := range envs {
			envs[i] = &envtest.Environment{CRDDirectoryPaths: []string{filepath.Join("..", "config", "crd")}, ErrorIfCRDPathMissing: true, Scheme: scheme}
			wg.Go(func() { _, errs[i] = envs[i].Start() })
		}
		wg.Wait()
		b.StopTimer()
		for i, env := range envs {
			if errs[i] != nil {
				b.Errorf("environment %d: %v", i, errs[i])
			}
			if err := env.Stop(); err != nil {
				b.Errorf("environment %d: stop: %v", i, err)
			}
		}
		b.StartTimer()
	}
}
