package app

import (
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	psapi "k8s.io/pod-security-admission/api"

	"kubeplay/server"
)

// writeFile writes content to name in dir and returns its path.
func writeFile(t *testing.T, dir, name, content string) string {
	t.Helper()
	path := filepath.Join(dir, name)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestReadAdmissionConfiguration reads the PodSecurity plugin's
// configuration as kube-apiserver does: inline or at a path relative to
// the file, in v1 or v1beta1, missing defaults privileged:latest.
func TestReadAdmissionConfiguration(t *testing.T) {
	latest := func(l psapi.Level) psapi.LevelVersion {
		return psapi.LevelVersion{Level: l, Version: psapi.LatestVersion()}
	}
	dir := t.TempDir()
	writeFile(t, dir, "psa/config.yaml", `apiVersion: pod-security.admission.config.k8s.io/v1beta1
kind: PodSecurityConfiguration
defaults:
  enforce: restricted
  warn-version: v1.30
exemptions:
  namespaces: [kube-system]
`)
	for _, tc := range []struct {
		name, file string
		want       *server.PodSecurityConfiguration
		others     []string
	}{
		{"inline v1", `apiVersion: apiserver.config.k8s.io/v1
kind: AdmissionConfiguration
plugins:
- name: EventRateLimit
  path: eventconfig.yaml
- name: PodSecurity
  configuration:
    apiVersion: pod-security.admission.config.k8s.io/v1
    kind: PodSecurityConfiguration
    defaults:
      enforce: baseline
      audit: restricted
      audit-version: v1.29
    exemptions:
      usernames: [admin]
      runtimeClasses: [kata]
`, &server.PodSecurityConfiguration{
			Defaults: psapi.Policy{Enforce: latest(psapi.LevelBaseline),
				Audit: psapi.LevelVersion{Level: psapi.LevelRestricted, Version: psapi.MajorMinorVersion(1, 29)},
				Warn:  latest(psapi.LevelPrivileged)},
			ExemptUsernames: []string{"admin"}, ExemptRuntimeClasses: []string{"kata"},
		}, []string{"EventRateLimit"}},
		{"path to v1beta1", `apiVersion: apiserver.config.k8s.io/v1
kind: AdmissionConfiguration
plugins:
- name: PodSecurity
  path: psa/config.yaml
`, &server.PodSecurityConfiguration{
			Defaults: psapi.Policy{Enforce: latest(psapi.LevelRestricted), Audit: latest(psapi.LevelPrivileged),
				Warn: psapi.LevelVersion{Level: psapi.LevelPrivileged, Version: psapi.MajorMinorVersion(1, 30)}},
			ExemptNamespaces: []string{"kube-system"},
		}, nil},
		{"no PodSecurity", `{"apiVersion": "apiserver.config.k8s.io/v1", "kind": "AdmissionConfiguration", "plugins": []}`, nil, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, others, err := readAdmissionConfiguration(writeFile(t, dir, "admission.yaml", tc.file))
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tc.want) || !reflect.DeepEqual(others, tc.others) {
				t.Errorf("got %+v, %v\nwant %+v, %v", got, others, tc.want, tc.others)
			}
		})
	}
}

// TestReadAdmissionConfiguration_Errors: a bad file stops the server with
// the error kube-apiserver v1.35.4 exits with (its "command failed" log),
// but where noted.
func TestReadAdmissionConfiguration_Errors(t *testing.T) {
	dir := t.TempDir()
	inline := func(psa string) string {
		return "apiVersion: apiserver.config.k8s.io/v1\nkind: AdmissionConfiguration\nplugins:\n- name: PodSecurity\n  configuration:\n    apiVersion: pod-security.admission.config.k8s.io/v1\n" + psa
	}
	for _, tc := range []struct{ name, file, want string }{
		{"levels", inline("    kind: PodSecurityConfiguration\n    defaults:\n      enforce: strict\n      enforce-version: \"1.2.3\"\n"),
			`failed to apply admission: failed to initialize admission plugin "PodSecurity": PodSecurity configuration error: [enforce: must be one of privileged, baseline, restricted, enforce-version: must be "latest" or "v1.x"]`},
		{"exemptions", inline("    kind: PodSecurityConfiguration\n    exemptions:\n      usernames: [\"\", a, a]\n      namespaces: [Bad_NS]\n      runtimeClasses: [x, x]\n"),
			`failed to apply admission: failed to initialize admission plugin "PodSecurity": PodSecurity invalid: [exemptions.namespaces[0]: Invalid value: "Bad_NS": a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?'), exemptions.runtimeClasses[1]: Duplicate value: "x", exemptions.usernames[0]: Invalid value: "": username must not be empty, exemptions.usernames[2]: Duplicate value: "a"]`},
		{"unknown field", inline("    kind: PodSecurityConfiguration\n    defaults:\n      enforc: baseline\n"),
			`failed to apply admission: couldn't init admission plugin "PodSecurity": strict decoding error: unknown field "defaults.enforc"`},
		// kube-apiserver names its scheme's source line: "pkg/runtime/scheme.go:111".
		{"kind", inline("    kind: Nope\n"),
			`failed to apply admission: couldn't init admission plugin "PodSecurity": no kind "Nope" is registered for version "pod-security.admission.config.k8s.io/v1" in scheme `},
		{"not YAML", "not: [yaml\n", `failed to apply admission: failed to read plugin config: yaml: line 1: did not find expected ',' or ']'`},
		// kube-apiserver exits with a fatal log line: Couldn't open admission
		// plugin configuration <path>: &fs.PathError{...}.
		{"missing path", "apiVersion: apiserver.config.k8s.io/v1\nkind: AdmissionConfiguration\nplugins:\n- name: PodSecurity\n  path: missing.yaml\n",
			"couldn't open admission plugin configuration " + filepath.Join(dir, "missing.yaml") + ": open " + filepath.Join(dir, "missing.yaml") + ": no such file or directory"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			file := writeFile(t, dir, "admission.yaml", tc.file)
			err := Run(t.Context(), []string{"kube-apiserver", "--cert-dir=" + dir, "--admission-control-config-file=" + file}, io.Discard, io.Discard)
			if err == nil || !strings.HasPrefix(err.Error(), tc.want) {
				t.Errorf("kube-apiserver: %v\nwant %s", err, tc.want)
			}
			if _, err := parseServeFlags([]string{"--admission-control-config-file", file}, io.Discard); err == nil || !strings.HasPrefix(err.Error(), tc.want) {
				t.Errorf("serve: %v\nwant %s", err, tc.want)
			}
		})
	}
	missing := filepath.Join(dir, "none.yaml")
	if _, _, err := readAdmissionConfiguration(missing); err == nil || err.Error() != `failed to apply admission: failed to read plugin config: unable to read admission control configuration from "`+missing+`" [open `+missing+`: no such file or directory]` {
		t.Errorf("a missing file: %v", err)
	}
}

// TestAdmissionConfigurationFlags: kube-apiserver gives the PodSecurity
// configuration to its cluster, and warns of the plugins it ignores; serve
// gives it to the root cluster and to new sandboxes.
func TestAdmissionConfigurationFlags(t *testing.T) {
	dir := t.TempDir()
	file := writeFile(t, dir, "admission.yaml", `apiVersion: apiserver.config.k8s.io/v1
kind: AdmissionConfiguration
plugins:
- name: PodSecurity
  configuration:
    apiVersion: pod-security.admission.config.k8s.io/v1
    kind: PodSecurityConfiguration
    exemptions:
      namespaces: [kube-system]
- name: ResourceQuota
`)
	cl, err := parseCommandLine([]string{"--cert-dir", dir, "--admission-control-config-file", file}, kubeAPIServerFlags)
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	settings, err := kubeAPIServerConfig(cl, &stderr)
	if err != nil {
		t.Fatal(err)
	}
	if ps := settings.cluster.PodSecurity; ps == nil || !reflect.DeepEqual(ps.ExemptNamespaces, []string{"kube-system"}) {
		t.Errorf("kube-apiserver: %+v", ps)
	}
	if want := "kubeplay: ignoring the configuration of admission plugins kubeplay does not configure: ResourceQuota\n"; stderr.String() != want {
		t.Errorf("kube-apiserver's stderr %q, want %q", &stderr, want)
	}
	cfg, err := parseServeFlags([]string{"--admission-control-config-file", file}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if ps := cfg.root.PodSecurity; ps == nil || !reflect.DeepEqual(ps.ExemptNamespaces, []string{"kube-system"}) || cfg.sandboxes.Sandbox.PodSecurity != ps {
		t.Errorf("serve: root %+v, sandboxes %+v", cfg.root.PodSecurity, cfg.sandboxes.Sandbox.PodSecurity)
	}
}
