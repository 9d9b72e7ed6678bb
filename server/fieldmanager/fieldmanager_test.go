package fieldmanager

import "testing"

// The managers kube-apiserver v1.35 recorded for creates sent with these
// User-Agent headers and no fieldManager.
func TestManagerFromUserAgent(t *testing.T) {
	long := ""
	for range 140 {
		long += "a"
	}
	for _, tc := range []struct{ userAgent, want string }{
		{"kubectl/v1.32.4 (linux/amd64) kubernetes/abc", "kubectl"},
		{"no-slash-agent", "no-slash-agent"},
		{long + "/x", long[:128]},
		{"tab\there/1", "tabhere"},
		{"é-unicode/2", "é-unicode"},
	} {
		if got := ManagerFromUserAgent(tc.userAgent); got != tc.want {
			t.Errorf("ManagerFromUserAgent(%q) = %q, want %q", tc.userAgent, got, tc.want)
		}
	}
}
