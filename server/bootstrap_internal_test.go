package server

import (
	"encoding/json"
	"flag"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"kubeplay/store"
)

var update = flag.Bool("update", false, "write zz_generated_bootstrap.txt from what the bootstrap stores")

// bootstrapClock is the server's clock in these tests: not the wall clock,
// which the field manager's timestamps follow.
var bootstrapClock = time.Date(2001, 2, 3, 4, 5, 6, 0, time.UTC)

// storedBootstrap starts a server on a new store and returns the bootstrap
// objects it stored, in revision order. one: it stores them one at a time
// (defaults, managedFields, allocation, as any create), as on a store that
// lost them, rather than prebuilt, as on an empty store.
func storedBootstrap(t *testing.T, one bool) []store.KeyValue {
	t.Helper()
	ctx := t.Context()
	st, err := store.Open(ctx, ":memory:", store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if one {
		if _, err := st.Create(ctx, "/not-registry", nil); err != nil { // not empty any more
			t.Fatal(err)
		}
	}
	s, err := New(ctx, Options{Store: st, Now: func() time.Time { return bootstrapClock }})
	if err != nil {
		t.Fatal(err)
	}
	if one {
		if err := s.reg.bootstrap(ctx, localAPIServices(defaultBuiltin())); err != nil { // if New left any to make
			t.Fatal(err)
		}
	}
	list, err := st.List(ctx, "/registry/", "", 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	slices.SortFunc(list.Items, func(a, b store.KeyValue) int { return int(a.ModRevision - b.ModRevision) })
	return list.Items
}

// withPlaceholders returns a stored bootstrap object's value with its uid,
// creationTimestamp (which must be bootstrapClock) and managedFields times
// replaced by the placeholders of prebuiltBootstrap.
func withPlaceholders(t *testing.T, kv store.KeyValue) string {
	t.Helper()
	var obj struct {
		Metadata struct {
			UID               string `json:"uid"`
			CreationTimestamp string `json:"creationTimestamp"`
			ManagedFields     []struct {
				Time string `json:"time"`
			} `json:"managedFields"`
		} `json:"metadata"`
	}
	if err := json.Unmarshal(kv.Value, &obj); err != nil {
		t.Fatalf("%s: %v", kv.Key, err)
	}
	md := obj.Metadata
	if md.UID == "" || len(md.ManagedFields) == 0 || md.ManagedFields[0].Time == "" {
		t.Fatalf("%s: no uid, or no managedFields entry with a time: %s", kv.Key, kv.Value)
	}
	for _, e := range md.ManagedFields {
		if e.Time != md.ManagedFields[0].Time {
			t.Fatalf("%s: managedFields written at different times: %s", kv.Key, kv.Value)
		}
	}
	if want := bootstrapClock.Format(time.RFC3339); md.CreationTimestamp != want {
		t.Fatalf("%s: creationTimestamp %q, want the server's clock, %q", kv.Key, md.CreationTimestamp, want)
	}
	v := string(kv.Value)
	// The uid once; the times at least once (status conditions and a second
	// managedFields entry repeat them).
	for _, r := range [][2]string{{md.UID, uidPlaceholder}, {md.CreationTimestamp, createdPlaceholder}, {md.ManagedFields[0].Time, managedPlaceholder}} {
		old, placeholder := `"`+r[0]+`"`, r[1]
		if n := strings.Count(v, old); n == 0 || n > 1 && placeholder == uidPlaceholder {
			t.Fatalf("%s: %s appears %d times", kv.Key, old, n)
		}
		v = strings.ReplaceAll(v, old, placeholder)
	}
	return v
}

// TestBootstrap_prebuilt: zz_generated_bootstrap.txt holds what the
// bootstrap stores one object at a time, in the same order, but for the
// placeholders; -update writes it.
func TestBootstrap_prebuilt(t *testing.T) {
	objs, err := bootstrapObjects()
	if err != nil {
		t.Fatal(err)
	}
	stored := storedBootstrap(t, true)
	if len(stored) != len(objs) {
		t.Fatalf("%d bootstrap objects stored, want %d", len(stored), len(objs))
	}
	var b strings.Builder
	for _, kv := range stored {
		b.WriteString(kv.Key + "\t" + withPlaceholders(t, kv) + "\n")
	}
	if *update {
		if err := os.WriteFile("zz_generated_bootstrap.txt", []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	if b.String() != prebuiltBootstrap {
		t.Fatal("zz_generated_bootstrap.txt is not what the bootstrap stores: run go generate ./server")
	}
}

// TestBootstrap_fresh: an empty store gets the bootstrap objects prebuilt,
// byte for byte what they are made one at a time but for their uids (each
// its own) and times (now).
func TestBootstrap_fresh(t *testing.T) {
	before := time.Now().UTC().Truncate(time.Second)
	prebuilt, made := storedBootstrap(t, false), storedBootstrap(t, true)
	if len(prebuilt) != len(made) {
		t.Fatalf("%d objects prebuilt, %d made", len(prebuilt), len(made))
	}
	uids := map[string]bool{}
	for i, kv := range prebuilt {
		if kv.Key != made[i].Key {
			t.Fatalf("object %d: %s prebuilt, %s made", i, kv.Key, made[i].Key)
		}
		if got, want := withPlaceholders(t, kv), withPlaceholders(t, made[i]); got != want {
			t.Errorf("%s prebuilt:\n%s\nmade:\n%s", kv.Key, got, want)
		}
		var obj struct {
			Metadata struct {
				UID           string `json:"uid"`
				ManagedFields []struct {
					Time time.Time `json:"time"`
				} `json:"managedFields"`
			} `json:"metadata"`
		}
		if err := json.Unmarshal(kv.Value, &obj); err != nil {
			t.Fatal(err)
		}
		if uids[obj.Metadata.UID] {
			t.Errorf("%s: uid %s twice", kv.Key, obj.Metadata.UID)
		}
		uids[obj.Metadata.UID] = true
		if tm := obj.Metadata.ManagedFields[0].Time; tm.Before(before) || tm.After(time.Now()) {
			t.Errorf("%s: managedFields time %v, not now", kv.Key, tm)
		}
	}
}

func BenchmarkPrebuiltObjects(b *testing.B) {
	now := time.Now()
	for b.Loop() {
		prebuiltObjects(now, now)
	}
}
