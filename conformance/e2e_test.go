// Package conformance builds the Kubernetes v1.35.4 end-to-end suite
// (k8s.io/kubernetes/test/e2e) as one e2e.test binary, restricted to the SIGs
// kubeplay implements, to run against a kubeplay sandbox: see README.md and
// `go tool task conformance`.
//
// It is a module of its own so that the main module's `go test ./...` and CI
// never build it: the suite pulls in most of Kubernetes and takes twenty
// minutes to compile.
//
// TestMain does what the upstream suite's does before running specs: register
// the framework's flags, add the embedded test manifests as file sources, and
// let the framework read its context.
package conformance

import (
	"flag"
	"fmt"
	"os"
	"testing"

	"k8s.io/component-base/version"
	conformancetestdata "k8s.io/kubernetes/test/conformance/testdata"
	"k8s.io/kubernetes/test/e2e"
	"k8s.io/kubernetes/test/e2e/framework"
	"k8s.io/kubernetes/test/e2e/framework/config"
	"k8s.io/kubernetes/test/e2e/framework/testfiles"
	e2etestingmanifests "k8s.io/kubernetes/test/e2e/testing-manifests"
	testfixtures "k8s.io/kubernetes/test/fixtures"

	// Freezes the feature-gate and label constants the specs use.
	_ "k8s.io/kubernetes/test/e2e/feature"

	// The specs, one package per SIG (common holds sig-node, sig-storage and
	// sig-network specs shared with node conformance). A package registers
	// its specs when imported; --ginkgo.focus picks which run.
	_ "k8s.io/kubernetes/test/e2e/apimachinery"
	_ "k8s.io/kubernetes/test/e2e/apps"
	_ "k8s.io/kubernetes/test/e2e/auth"
	_ "k8s.io/kubernetes/test/e2e/common"
	_ "k8s.io/kubernetes/test/e2e/instrumentation"
	_ "k8s.io/kubernetes/test/e2e/kubectl"
	_ "k8s.io/kubernetes/test/e2e/network"
	_ "k8s.io/kubernetes/test/e2e/node"
	_ "k8s.io/kubernetes/test/e2e/scheduling"
	_ "k8s.io/kubernetes/test/e2e/storage"

	// The framework's optional parts, as the upstream suite enables them.
	_ "k8s.io/kubernetes/test/e2e/framework/debug/init"
	_ "k8s.io/kubernetes/test/e2e/framework/metrics/init"
	_ "k8s.io/kubernetes/test/e2e/framework/node/init"
	_ "k8s.io/kubernetes/test/utils/format"
)

func TestMain(m *testing.M) {
	showVersion := flag.Bool("version", false, "Print the Kubernetes version the suite was built from, and exit.")
	config.CopyFlags(config.Flags, flag.CommandLine)
	framework.RegisterCommonFlags(flag.CommandLine)
	framework.RegisterClusterFlags(flag.CommandLine)
	flag.Parse()

	if *showVersion {
		fmt.Println(version.Get())
		os.Exit(0)
	}
	if flag.NArg() > 0 {
		fmt.Fprintf(os.Stderr, "e2e.test: unexpected arguments %q\n", flag.Args())
		os.Exit(2)
	}

	// The suite reads its manifests (CRDs, webhook certificates, kubectl
	// testdata) through testfiles; these are compiled in, so no checkout of
	// the Kubernetes repository is needed at run time.
	testfiles.AddFileSource(e2etestingmanifests.GetE2ETestingManifestsFS())
	testfiles.AddFileSource(testfixtures.GetTestFixturesFS())
	testfiles.AddFileSource(conformancetestdata.GetConformanceTestdataFS())

	framework.AfterReadingAllFlags(&framework.TestContext)
	os.Exit(m.Run())
}

func TestE2E(t *testing.T) {
	e2e.RunE2ETests(t)
}
