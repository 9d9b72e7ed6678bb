// Package releases says which API resources each Kubernetes release from
// v1.16 to v1.35 served, and when each beta and alpha kind was deprecated
// and removed: what an emulated version of a sandbox serves, and the
// deprecation warnings it answers with.
//
// The table in zz_generated_releases.go is derived by internal/gen from the
// releases themselves as the Go module proxy publishes them (each release's
// swagger.json and k8s.io/api's prerelease lifecycles); regenerating it
// downloads about 350 MB once (kept in the -cache folder).
package releases

//go:generate go run ./internal/gen -cache /tmp/kubeplay-emulation-cache -out zz_generated_releases.go -openapi ../openapi/spec/v3
