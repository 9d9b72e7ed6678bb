package playground

import (
	"fmt"
	"strings"
	"sync"
	"time"

	"kubeplay/internal/jsonmap"
)

// nodeDisks are the simulated disks, as far as containers share files
// through them: a pod's emptyDir volume starts empty and holds what its
// containers' runs wrote there (a marker file a container leaves for its
// restart); a hostPath volume of a directory under /tmp starts empty and
// holds what the pods of its node wrote there (one a Job's pod leaves for
// the pod that replaces it), for as long as the sandbox lives, whatever
// becomes of the pods and the kubelets. A container's run finds the files
// other runs left (see podSync.program).
type nodeDisks struct {
	mu sync.Mutex
	// writers are, by disk ("node/<name>" or "pod/<uid>") and file, the
	// run (runID) that wrote it.
	writers map[string]map[string]string
}

// write records that run made (exists) or removed the file at path on
// disk.
func (d *nodeDisks) write(disk, path, run string, exists bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if !exists {
		delete(d.writers[disk], path)
		return
	}
	if d.writers == nil {
		d.writers = map[string]map[string]string{}
	}
	if d.writers[disk] == nil {
		d.writers[disk] = map[string]string{}
	}
	if _, ok := d.writers[disk][path]; !ok {
		d.writers[disk][path] = run
	}
}

// leftByOthers reports whether a run other than run left a file at path
// on disk.
func (d *nodeDisks) leftByOthers(disk, path, run string) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	writer, ok := d.writers[disk][path]
	return ok && writer != run
}

// drop forgets disk (a pod's, once the pod is gone).
func (d *nodeDisks) drop(disk string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	delete(d.writers, disk)
}

// diskMount is where a container mounts a volume kept on a disk: the disk
// and the directory on it.
type diskMount struct{ disk, dir string }

// diskMounts are the mounts of container c of pod p, on node, of volumes
// kept on a disk, by mount path.
func diskMounts(p, c jsonmap.Object, node string) map[string]diskMount {
	volumes := map[string]diskMount{}
	for _, v := range jsonmap.Items(jsonmap.Child(p, "spec")["volumes"]) {
		name := stringOf(v["name"])
		if dir := jsonmap.String(v, "hostPath", "path"); dir == "/tmp" || strings.HasPrefix(dir, "/tmp/") {
			volumes[name] = diskMount{"node/" + node, strings.TrimSuffix(dir, "/")}
		} else if v["emptyDir"] != nil {
			volumes[name] = diskMount{"pod/" + jsonmap.String(p, "metadata", "uid"), name}
		}
	}
	out := map[string]diskMount{}
	for _, m := range jsonmap.Items(c["volumeMounts"]) {
		if v, ok := volumes[stringOf(m["name"])]; ok && m["subPath"] == nil && m["subPathExpr"] == nil {
			out[strings.TrimSuffix(stringOf(m["mountPath"]), "/")] = v
		}
	}
	return out
}

// onDisk is the disk and the file on it that path, in the container, is
// (false if no mount of mounts holds it).
func onDisk(mounts map[string]diskMount, path string) (disk, file string, ok bool) {
	for mountPath, m := range mounts {
		if rest, found := strings.CutPrefix(path, mountPath+"/"); found {
			return m.disk, m.dir + "/" + rest, true
		}
	}
	return "", "", false
}

// runID names one run of the container whose status is cs in pod p.
func runID(p, cs jsonmap.Object) string {
	return fmt.Sprintf("%s/%s/%v", jsonmap.String(p, "metadata", "uid"), cs["name"], cs["restartCount"])
}

// program is what container c of the pod, in the run whose status is cs,
// does, finding on its disks the files other runs left there.
func (s *podSync) program(c map[string]any, cs jsonmap.Object) program {
	mounts := diskMounts(s.p, c, s.node)
	if len(mounts) == 0 {
		return programOf(s.p, c)
	}
	run := runID(s.p, cs)
	return programFinding(s.p, c, func(path string) (exists, known bool) {
		disk, file, ok := onDisk(mounts, path)
		if !ok {
			return false, false
		}
		return s.k.disks.leftByOthers(disk, file, run), true
	})
}

// wrote records on its disks the files that container c, in the run whose
// status is cs, running prog, has made or removed after running for ran.
func (s *podSync) wrote(c map[string]any, cs jsonmap.Object, prog program, ran time.Duration) {
	mounts := diskMounts(s.p, c, s.node)
	run := runID(s.p, cs)
	for _, f := range prog.files {
		if disk, file, ok := onDisk(mounts, f.path); ok && f.at <= ran {
			s.k.disks.write(disk, file, run, f.exists)
		}
	}
}
