package playground

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"time"

	"kubeplay/internal/jsonmap"
)

// Images the simulated kubelets cannot pull. No registry is reached: every
// image is "pulled" but for a reference that says it does not exist, in the
// ways the e2e suite and the docs make one up. Such an image fails as on a
// kind node (containerd): the container waits in ErrImagePull, then
// ImagePullBackOff between attempts, with the kubelet's Failed and BackOff
// events, the attempts backing off (per pod and image) from 10 s doubling up
// to 5 minutes on the sandbox's clock. A reference cannot be pulled when
//   - a label of its registry host is "invalid" (the suite's
//     invalid.registry.k8s.io, a host under the reserved .invalid domain):
//     the host does not resolve;
//   - an element of its repository path, or its tag, says it does not exist
//     (webserver:404, foo:non-existent, test.io/invalid/test,
//     nginx:doesnotexist): one of unpullableWords, or containing
//     "nonexistent", "non-existent" or "notexist";
//   - its tag is a version whose minor number has three digits or more, the
//     typo of the Deployments page (nginx:1.161 for nginx:1.16.1).

// unpullableWords are the path elements and tags that name no image.
var unpullableWords = map[string]bool{"invalid": true, "404": true, "notfound": true, "not-found": true,
	"does-not-exist": true, "doesnotexist": true, "bogus": true}

// typoVersion is a version tag with an implausible minor number.
var typoVersion = regexp.MustCompile(`^v?[0-9]+\.[0-9]{3,}(\.[0-9]+)?$`)

// Back-off of an image's failed pulls, per pod and image, as a kubelet's.
const (
	pullBackoffInitial = 10 * time.Second
	pullBackoffMax     = 5 * time.Minute
	// podSyncRetry is when a kubelet syncs again a pod whose sync failed
	// (its pod workers' back-off period).
	podSyncRetry = 10 * time.Second
)

// pullError is why image cannot be pulled, as the container runtime says
// it, "" if it can.
func pullError(image string) string {
	ref := canonicalImage(image)
	name, tag := ref, ""
	if i := strings.LastIndexAny(ref, ":@"); i > strings.LastIndex(ref, "/") {
		name, tag = ref[:i], ref[i+1:]
	}
	host, repo, _ := strings.Cut(name, "/")
	prefix := fmt.Sprintf("failed to pull and unpack image %q: failed to resolve reference %q: ", ref, ref)
	for _, label := range strings.Split(host, ".") {
		if label == "invalid" {
			return fmt.Sprintf("rpc error: code = Unknown desc = %sfailed to do request: Head \"https://%s/v2/%s/manifests/%s\": dial tcp: lookup %s: no such host",
				prefix, host, repo, tag, host)
		}
	}
	for _, word := range append(strings.Split(repo, "/"), tag) {
		word = strings.ToLower(word)
		if unpullableWords[word] || strings.Contains(word, "nonexistent") || strings.Contains(word, "non-existent") || strings.Contains(word, "notexist") {
			return fmt.Sprintf("rpc error: code = NotFound desc = %s%s: not found", prefix, ref)
		}
	}
	if typoVersion.MatchString(tag) {
		return fmt.Sprintf("rpc error: code = NotFound desc = %s%s: not found", prefix, ref)
	}
	return ""
}

// pullBackOff is the failed pulls of one image for one pod.
type pullBackOff struct {
	failures int
	last     time.Time
	// looked is when the kubelet last tried to start the container.
	looked time.Time
}

// delay is how long after the last failure the next pull waits.
func (b pullBackOff) delay() time.Duration {
	return doubling(pullBackoffInitial, pullBackoffMax, b.failures)
}

// failPull is an attempt to start a container whose image cannot be
// pulled (why says the runtime's error): pulled again, failing, unless the
// back-off of its last failure still holds.
func (s *podSync) failPull(cs jsonmap.Object, image, why, fieldPath string) {
	uid := jsonmap.String(s.p, "metadata", "uid")
	s.k.mu.Lock()
	defer s.k.mu.Unlock()
	if s.k.pullBackOffs[uid] == nil {
		s.k.pullBackOffs[uid] = map[string]pullBackOff{}
	}
	backOffs := s.k.pullBackOffs[uid]
	b := backOffs[image]
	if since := s.now.Sub(b.looked); b.failures > 0 && since < podSyncRetry {
		// Its own status write brings the pod back at once; a kubelet
		// tries again when its pod worker's retry comes.
		s.later(podSyncRetry - since)
		return
	}
	if b.failures > 0 {
		b.looked = s.now
		backOffs[image] = b
		if wait := b.last.Add(b.delay()).Sub(s.now); wait > 0 {
			s.event(fieldPath, "Normal", "BackOff", fmt.Sprintf("Back-off pulling image %q", image))
			s.event(fieldPath, "Warning", "Failed", "Error: ImagePullBackOff")
			cs["state"] = map[string]any{"waiting": map[string]any{"reason": "ImagePullBackOff",
				"message": fmt.Sprintf("Back-off pulling image %q: ErrImagePull: %s", image, why)}}
			s.later(wait)
			return
		}
	}
	s.event(fieldPath, "Normal", "Pulling", fmt.Sprintf("Pulling image %q", image))
	s.event(fieldPath, "Warning", "Failed", fmt.Sprintf("Failed to pull image %q: %s", image, why))
	s.event(fieldPath, "Warning", "Failed", "Error: ErrImagePull")
	backOffs[image] = pullBackOff{failures: b.failures + 1, last: s.now, looked: s.now}
	cs["state"] = map[string]any{"waiting": map[string]any{"reason": "ErrImagePull", "message": why}}
	s.later(podSyncRetry)
}

// recallPullBackOffs learns, for a pod whose images this kubelet has
// failed to pull before it (re)started (the sandbox's controllers restart
// when its clock is advanced), the back-off of each from the pod's Failed
// events: how many pulls failed, and when the last did.
func (k *kubelet) recallPullBackOffs(ctx context.Context, p jsonmap.Object) error {
	uid := jsonmap.String(p, "metadata", "uid")
	var images []string
	st := jsonmap.Child(p, "status")
	k.mu.Lock()
	for _, cs := range append(jsonmap.Items(st["initContainerStatuses"]), jsonmap.Items(st["containerStatuses"])...) {
		switch jsonmap.String(jsonmap.Object(cs), "state", "waiting", "reason") {
		case "ErrImagePull", "ImagePullBackOff":
			if _, known := k.pullBackOffs[uid][specImage(p, stringOf(cs["name"]))]; !known {
				images = append(images, specImage(p, stringOf(cs["name"])))
			}
		}
	}
	k.mu.Unlock()
	if len(images) == 0 {
		return nil
	}
	events, err := list(ctx, k.api, "/api/v1/namespaces/"+jsonmap.String(p, "metadata", "namespace")+"/events?fieldSelector=involvedObject.uid%3D"+uid)
	if err != nil {
		return err
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.pullBackOffs[uid] == nil {
		k.pullBackOffs[uid] = map[string]pullBackOff{}
	}
	for _, image := range images {
		var b pullBackOff
		prefix := fmt.Sprintf("Failed to pull image %q: ", image)
		for _, ev := range events {
			if ev["reason"] != "Failed" || !strings.HasPrefix(stringOf(ev["message"]), prefix) {
				continue
			}
			count, _ := jsonmap.IntOf(ev["count"])
			b.failures += int(max(count, 1))
			if last := parseTime(stringOf(ev["lastTimestamp"])); last.After(b.last) {
				b.last = last
			}
		}
		b.looked = b.last
		k.pullBackOffs[uid][image] = b
	}
	return nil
}

// specImage is the image of the pod's container or init container name.
func specImage(p jsonmap.Object, name string) string {
	spec := jsonmap.Child(p, "spec")
	for _, c := range append(jsonmap.Items(spec["initContainers"]), jsonmap.Items(spec["containers"])...) {
		if c["name"] == name {
			return stringOf(c["image"])
		}
	}
	return ""
}
