package playground

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestIndexIntervals(t *testing.T) {
	for _, tc := range []struct {
		in          string
		completions int
		add         []int
		want        string
		total       int
	}{
		{"", 5, nil, "", 0},
		{"1,3-4", 5, []int{2}, "1-4", 4},
		{"0-9", 5, nil, "0-4", 5},
		{"7", 10, []int{0, 8, 5}, "0,5,7-8", 4},
	} {
		got := parseIndexes(tc.in, tc.completions).withIndexes(tc.add...)
		if got.String() != tc.want || got.total() != tc.total {
			t.Errorf("%q + %v = %q (%d), want %q (%d)", tc.in, tc.add, got, got.total(), tc.want, tc.total)
		}
	}
}

// A Job's next pod waits 10s after a failure, doubled with each further
// failure, at most 10 minutes; a success starts over.
func TestJobBackoff(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	failedAt := func(d time.Duration) *corev1.Pod {
		return &corev1.Pod{Status: corev1.PodStatus{Phase: corev1.PodFailed, ContainerStatuses: []corev1.ContainerStatus{{
			State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 1, FinishedAt: metav1.NewTime(t0.Add(d))}}}}}}
	}
	b := nextBackoff(jobBackoff{}, nil, []*corev1.Pod{failedAt(0)})
	if got := b.remaining(t0.Add(4 * time.Second)); got != 6*time.Second {
		t.Errorf("after one failure: %v", got)
	}
	b = nextBackoff(b, nil, []*corev1.Pod{failedAt(time.Second), failedAt(2 * time.Second)})
	if got := b.remaining(t0.Add(2 * time.Second)); got != 40*time.Second {
		t.Errorf("after three failures: %v", got)
	}
	for range 20 {
		b = nextBackoff(b, nil, []*corev1.Pod{failedAt(2 * time.Second)})
	}
	if got := b.remaining(t0.Add(2 * time.Second)); got != 10*time.Minute {
		t.Errorf("after many failures: %v", got)
	}
	succeeded := failedAt(3 * time.Second)
	succeeded.Status.Phase = corev1.PodSucceeded
	if b = nextBackoff(b, []*corev1.Pod{succeeded}, []*corev1.Pod{failedAt(4 * time.Second)}); b.failures != 1 {
		t.Errorf("failures after a success: %d", b.failures)
	}
}
