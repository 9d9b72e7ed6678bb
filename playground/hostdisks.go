package playground

import (
	"strings"
	"sync"
	"time"

	"kubeplay/internal/jsonmap"
)

// nodeDisks are the simulated nodes' disks, as far as pods share files
// through them: a hostPath volume of a directory under /tmp starts empty and
// holds what the pods of its node wrote there (a marker file that a Job's
// pod leaves for the pod that replaces it), for as long as the sandbox
// lives, whatever becomes of the pods and the kubelets.
type nodeDisks struct {
	mu sync.Mutex
	// writers are, by node and file, the uid of the pod that wrote it.
	writers map[string]map[string]string
}

// write records that pod uid made (exists) or removed the file at path
// on node.
func (d *nodeDisks) write(node, path, uid string, exists bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if !exists {
		delete(d.writers[node], path)
		return
	}
	if d.writers == nil {
		d.writers = map[string]map[string]string{}
	}
	if d.writers[node] == nil {
		d.writers[node] = map[string]string{}
	}
	if _, ok := d.writers[node][path]; !ok {
		d.writers[node][path] = uid
	}
}

// leftByOthers reports whether a pod other than uid left a file at path
// on node.
func (d *nodeDisks) leftByOthers(node, path, uid string) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	writer, ok := d.writers[node][path]
	return ok && writer != uid
}

// tmpHostMounts are the mounts of container c of pod p of hostPath
// volumes under /tmp: host directory by mount path.
func tmpHostMounts(p, c jsonmap.Object) map[string]string {
	volumes := map[string]string{}
	for _, v := range jsonmap.Items(jsonmap.Child(p, "spec")["volumes"]) {
		if dir := jsonmap.String(v, "hostPath", "path"); dir == "/tmp" || strings.HasPrefix(dir, "/tmp/") {
			volumes[stringOf(v["name"])] = strings.TrimSuffix(dir, "/")
		}
	}
	out := map[string]string{}
	for _, m := range jsonmap.Items(c["volumeMounts"]) {
		if dir, ok := volumes[stringOf(m["name"])]; ok && m["subPath"] == nil && m["subPathExpr"] == nil {
			out[strings.TrimSuffix(stringOf(m["mountPath"]), "/")] = dir
		}
	}
	return out
}

// hostPathOf is the file on the host that path, in the container, is
// (false if no mount of mounts holds it).
func hostPathOf(mounts map[string]string, path string) (string, bool) {
	for mountPath, dir := range mounts {
		if rest, ok := strings.CutPrefix(path, mountPath+"/"); ok {
			return dir + "/" + rest, true
		}
	}
	return "", false
}

// program is what container c of the pod does, finding in its host
// directories the files other pods of its node left there.
func (s *podSync) program(c map[string]any) program {
	mounts := tmpHostMounts(s.p, c)
	if len(mounts) == 0 {
		return programOf(s.p, c)
	}
	uid := jsonmap.String(s.p, "metadata", "uid")
	return programFinding(s.p, c, func(path string) (exists, known bool) {
		host, ok := hostPathOf(mounts, path)
		if !ok {
			return false, false
		}
		return s.k.disks.leftByOthers(s.node, host, uid), true
	})
}

// wrote records on the node's disk the files in its host directories that
// container c, running prog, has made or removed after running for ran.
func (s *podSync) wrote(c map[string]any, prog program, ran time.Duration) {
	mounts := tmpHostMounts(s.p, c)
	if len(mounts) == 0 {
		return
	}
	uid := jsonmap.String(s.p, "metadata", "uid")
	for _, f := range prog.files {
		if host, ok := hostPathOf(mounts, f.path); ok && f.at <= ran {
			s.k.disks.write(s.node, host, uid, f.exists)
		}
	}
}
