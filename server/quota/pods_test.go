package quota

import (
	"encoding/json"
	"testing"
	"time"

	"kubeplay/internal/jsonmap"
)

func TestPods_Usage(t *testing.T) {
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	for _, tc := range []struct{ name, pod, want string }{
		{"containers add up", `{"spec":{"containers":[
			{"resources":{"requests":{"cpu":"100m","memory":"1Gi"},"limits":{"cpu":"1"}}},
			{"resources":{"requests":{"cpu":"200m","example.com/gpu":"1","hugepages-2Mi":"4Mi"}}}]}}`,
			"count/pods=1,cpu=300m,hugepages-2Mi=4Mi,limits.cpu=1,memory=1Gi,pods=1,requests.cpu=300m,requests.example.com/gpu=1,requests.hugepages-2Mi=4Mi,requests.memory=1Gi"},
		{"an init container counts if larger, with the sidecars before it", `{"spec":{
			"initContainers":[{"restartPolicy":"Always","resources":{"requests":{"cpu":"100m"}}},{"resources":{"requests":{"cpu":"1"}}}],
			"containers":[{"resources":{"requests":{"cpu":"200m"}}}]}}`,
			"count/pods=1,cpu=1100m,pods=1,requests.cpu=1100m"},
		{"overhead", `{"spec":{"overhead":{"cpu":"50m"},"containers":[{"resources":{"requests":{"cpu":"100m"}}}]}}`,
			"count/pods=1,cpu=150m,pods=1,requests.cpu=150m"},
		{"pod-level resources", `{"spec":{"resources":{"requests":{"cpu":"2"}},"containers":[{"resources":{"requests":{"cpu":"100m"}}}]}}`,
			"count/pods=1,cpu=2,pods=1,requests.cpu=2"},
		{"a pod that ended is only counted", `{"status":{"phase":"Succeeded"},"spec":{"containers":[{"resources":{"requests":{"cpu":"1"}}}]}}`,
			"count/pods=1"},
		{"a pod past its grace period is only counted", `{"metadata":{"deletionTimestamp":"2026-01-01T11:59:00Z","deletionGracePeriodSeconds":30},"spec":{"containers":[{}]}}`,
			"count/pods=1"},
		{"a pod within its grace period uses its pod", `{"metadata":{"deletionTimestamp":"2026-01-01T11:59:50Z","deletionGracePeriodSeconds":30},"spec":{"containers":[{}]}}`,
			"count/pods=1,pods=1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var pod jsonmap.Object
			if err := json.Unmarshal([]byte(tc.pod), &pod); err != nil {
				t.Fatal(err)
			}
			if got := (pods{}).Usage(pod, now).String(); got != tc.want {
				t.Errorf("usage %s, want %s", got, tc.want)
			}
		})
	}
}
