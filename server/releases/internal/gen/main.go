// Command gen derives which Kubernetes release served which API resources
// from the releases themselves, as published in the Go module proxy (data,
// not code): each release's api/openapi-spec/swagger.json (in the
// k8s.io/kubernetes module; every group version the release has, alpha
// ones included) and the zz_generated.prerelease-lifecycle.go files of
// k8s.io/api, k8s.io/apiextensions-apiserver and k8s.io/kube-aggregator
// (when each beta and alpha kind is deprecated and removed, and what
// replaces it). It writes one compact Go table, so that nothing is
// downloaded or parsed at start-up; the downloads are kept in -cache.
package main

import (
	"archive/zip"
	"bytes"
	"cmp"
	"encoding/json"
	"flag"
	"fmt"
	"go/format"
	"io"
	"log"
	"maps"
	"math/bits"
	"net/http"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"k8s.io/kube-openapi/pkg/openapiconv"
	"k8s.io/kube-openapi/pkg/validation/spec"

	"kubeplay/server/internal/apipath"
)

// patches are the last patch release of each minor, as the module proxy
// lists them when this table was generated.
var patches = map[int]int{
	16: 15, 17: 17, 18: 20, 19: 16, 20: 15, 21: 14, 22: 17, 23: 17, 24: 17, 25: 16,
	26: 15, 27: 16, 28: 15, 29: 15, 30: 14, 31: 14, 32: 13, 33: 13, 34: 4, 35: 4,
}

// defaultOnBetas are the beta group versions added after v1.23 that
// kube-apiserver nevertheless serves by default (from v1.24 on, new beta
// APIs are off by default).
var defaultOnBetas = map[string]bool{"flowcontrol.apiserver.k8s.io/v1beta3": true}

// apiModules are the modules with the API types of kube-apiserver, and the
// folder of their API groups.
var apiModules = map[string]string{
	"k8s.io/api":                     "",
	"k8s.io/apiextensions-apiserver": "pkg/apis/",
	"k8s.io/kube-aggregator":         "pkg/apis/",
}

// olderGroupVersions are the group versions kubeplay serves that v1.35 no
// longer has: their OpenAPI v3 documents are converted from the swagger.json
// of the last release that served them, into -openapi.
var olderGroupVersions = []string{
	"admissionregistration.k8s.io/v1beta1", "apiextensions.k8s.io/v1beta1", "autoscaling/v2beta1", "autoscaling/v2beta2", "batch/v1beta1", "certificates.k8s.io/v1beta1", "coordination.k8s.io/v1beta1", "discovery.k8s.io/v1beta1", "events.k8s.io/v1beta1", "extensions/v1beta1",
	"flowcontrol.apiserver.k8s.io/v1beta1", "flowcontrol.apiserver.k8s.io/v1beta2", "flowcontrol.apiserver.k8s.io/v1beta3", "networking.k8s.io/v1beta1", "node.k8s.io/v1beta1", "policy/v1beta1",
	"rbac.authorization.k8s.io/v1beta1", "scheduling.k8s.io/v1beta1", "storage.k8s.io/v1beta1",
}

func main() {
	openapiDir := flag.String("openapi", "../openapi/spec/v3", "folder of the OpenAPI v3 documents, where those of the older group versions are written")
	cache := flag.String("cache", filepath.Join(os.TempDir(), "kubeplay-releases"), "folder for the downloaded module zips")
	proxy := flag.String("proxy", "https://proxy.golang.org", "Go module proxy")
	out := flag.String("out", "zz_generated_releases.go", "output file")
	flag.Parse()
	if err := run(*cache, *proxy, *out, *openapiDir); err != nil {
		log.Fatal(err)
	}
}

type resource struct {
	group, version, plural, kind string
	namespaced                   bool
	verbs                        map[string]bool
	subresources                 map[string]bool
	exists                       uint64 // bit m: release 1.m has it
}

type lifecycle struct {
	deprecated, removed int
	replacement         string
}

func run(cache, proxy, out, openapiDir string) error {
	if err := os.MkdirAll(cache, 0o755); err != nil {
		return err
	}
	minors := slices.Sorted(func(yield func(int) bool) {
		for m := range patches {
			if !yield(m) {
				return
			}
		}
	})
	byKey := map[string]*resource{}
	swaggers := map[int][]byte{}
	for _, m := range minors {
		version := fmt.Sprintf("v1.%d.%d", m, patches[m])
		z, err := fetch(cache, proxy, "k8s.io/kubernetes", version)
		if err != nil {
			return err
		}
		raw, err := readZip(z, "k8s.io/kubernetes@"+version+"/api/openapi-spec/swagger.json")
		if err != nil {
			return err
		}
		if err := addSwagger(byKey, raw, m); err != nil {
			return fmt.Errorf("%s: %w", version, err)
		}
		swaggers[m] = raw
	}
	// The lifecycle files exist from k8s.io/api v0.19 on; the newest word on
	// a kind wins.
	lifecycles := map[string]lifecycle{}
	for _, m := range minors {
		if m < 19 {
			continue
		}
		version := fmt.Sprintf("v0.%d.%d", m, patches[m])
		for module, dir := range apiModules {
			z, err := fetch(cache, proxy, module, version)
			if err != nil {
				return err
			}
			if err := addLifecycles(lifecycles, z, module+"@"+version+"/"+dir); err != nil {
				return fmt.Errorf("%s %s: %w", module, version, err)
			}
		}
	}
	for _, gv := range olderGroupVersions {
		// Each resource from the last release that served it by default.
		last := map[string]int{}
		for _, r := range byKey {
			if r.group+"/"+r.version == gv && r.kind != "" {
				if on := defaults(r, lifecycles[r.group+"/"+r.version+"/"+r.kind]); on != 0 {
					last[r.plural] = 63 - bits.LeadingZeros64(on)
				}
			}
		}
		if err := writeOlderDocument(openapiDir, gv, last, swaggers); err != nil {
			return fmt.Errorf("%s: %w", gv, err)
		}
	}
	return write(out, byKey, lifecycles, minors)
}

// writeOlderDocument writes the OpenAPI v3 document of gv as the releases
// that served it would: each resource's paths, and the definitions they
// need, converted from the swagger.json of the last release that served it
// (last, by plural name), newer definitions first. A document of v1.35
// already there (a beta group version recorded from kube-apiserver) keeps
// its paths and definitions, and gets the older ones besides.
func writeOlderDocument(dir, gv string, last map[string]int, swaggers map[int][]byte) error {
	plurals := slices.SortedFunc(maps.Keys(last), func(a, b string) int { return cmp.Or(last[b]-last[a], strings.Compare(a, b)) })
	var doc spec.Swagger
	doc.Paths = &spec.Paths{Paths: map[string]spec.PathItem{}}
	doc.Definitions = spec.Definitions{}
	prefix := "/apis/" + gv + "/"
	for _, plural := range plurals {
		var all spec.Swagger
		if err := json.Unmarshal(swaggers[last[plural]], &all); err != nil {
			return err
		}
		if doc.Info == nil {
			doc.Swagger, doc.Info = all.Swagger, &spec.Info{InfoProps: spec.InfoProps{Title: "Kubernetes", Version: fmt.Sprintf("1.%d", last[plural])}}
		}
		var need []string
		for p, item := range all.Paths.Paths {
			_, haveRoot := doc.Paths.Paths[prefix]
			if rel, ok := strings.CutPrefix(p, prefix); ok && (rel == "" && !haveRoot || rel != "" && apipath.Resource(rel) == plural) {
				doc.Paths.Paths[p] = item
				raw, _ := json.Marshal(item)
				need = append(need, refs(raw)...)
			}
		}
		for len(need) > 0 {
			name := need[len(need)-1]
			need = need[:len(need)-1]
			if _, done := doc.Definitions[name]; done {
				continue
			}
			def, ok := all.Definitions[name]
			if !ok {
				return fmt.Errorf("no definition %s", name)
			}
			doc.Definitions[name] = def
			raw, _ := json.Marshal(def)
			need = append(need, refs(raw)...)
		}
	}
	raw, err := json.Marshal(openapiconv.ConvertV2ToV3(&doc))
	if err != nil {
		return err
	}
	file := filepath.Join(dir, "apis__"+strings.ReplaceAll(gv, "/", "__")+"_openapi.json")
	if current, err := os.ReadFile(file); err == nil {
		if raw, err = mergeInto(current, raw); err != nil {
			return err
		}
	}
	return os.WriteFile(file, raw, 0o644)
}

// mergeInto adds to a recorded v1.35 document the paths and schemas of an
// older one it lacks; any other document is replaced.
func mergeInto(current, older []byte) ([]byte, error) {
	var cur, old map[string]any
	if err := json.Unmarshal(current, &cur); err != nil {
		return nil, err
	}
	if info, _ := cur["info"].(map[string]any); info["version"] != fmt.Sprintf("1.%d", slices.Max(slices.Collect(maps.Keys(patches)))) {
		return older, nil
	}
	if err := json.Unmarshal(older, &old); err != nil {
		return nil, err
	}
	for _, key := range [][2]string{{"paths", ""}, {"components", "schemas"}} {
		into, from := cur[key[0]].(map[string]any), old[key[0]].(map[string]any)
		if key[1] != "" {
			into, from = into[key[1]].(map[string]any), from[key[1]].(map[string]any)
		}
		for k, v := range from {
			if _, ok := into[k]; !ok {
				into[k] = v
			}
		}
	}
	return json.Marshal(cur)
}

var refOf = regexp.MustCompile(`"#/definitions/([^"]+)"`)

// refs returns the definitions a JSON text refers to.
func refs(raw []byte) []string {
	var out []string
	for _, m := range refOf.FindAllSubmatch(raw, -1) {
		out = append(out, string(m[1]))
	}
	return out
}

// fetch returns the zip of module@version, downloading it once.
func fetch(cache, proxy, module, version string) (*zip.Reader, error) {
	file := filepath.Join(cache, strings.ReplaceAll(module, "/", "_")+"@"+version+".zip")
	raw, err := os.ReadFile(file)
	if err != nil {
		url := proxy + "/" + module + "/@v/" + version + ".zip"
		log.Printf("downloading %s", url)
		resp, err := http.Get(url)
		if err != nil {
			return nil, err
		}
		defer resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return nil, fmt.Errorf("%s: %s", url, resp.Status)
		}
		if raw, err = io.ReadAll(resp.Body); err != nil {
			return nil, err
		}
		if err := os.WriteFile(file, raw, 0o644); err != nil {
			return nil, err
		}
	}
	return zip.NewReader(bytes.NewReader(raw), int64(len(raw)))
}

func readZip(z *zip.Reader, name string) ([]byte, error) {
	f, err := z.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(f)
}

type operation struct {
	Action string `json:"x-kubernetes-action"`
	GVK    *struct {
		Group, Version, Kind string
	} `json:"x-kubernetes-group-version-kind"`
}

// actionVerbs maps x-kubernetes-action to the discovery verb.
var actionVerbs = map[string]string{
	"get": "get", "list": "list", "watch": "watch", "watchlist": "watch", "put": "update",
	"patch": "patch", "post": "create", "delete": "delete", "deletecollection": "deletecollection",
}

// addSwagger records the resources of one release's swagger document.
func addSwagger(byKey map[string]*resource, raw []byte, minor int) error {
	var doc struct {
		Paths map[string]map[string]json.RawMessage `json:"paths"`
	}
	if err := json.Unmarshal(raw, &doc); err != nil {
		return err
	}
	for p, ops := range doc.Paths {
		path, ok := apipath.Parse(p)
		if !ok {
			continue
		}
		group, version, namespaced, plural, sub := path.Group, path.Version, path.Namespaced, path.Resource, path.Subresource
		for method, opRaw := range ops {
			if method == "parameters" {
				continue
			}
			var op operation
			if err := json.Unmarshal(opRaw, &op); err != nil {
				return fmt.Errorf("%s %s: %w", p, method, err)
			}
			if op.GVK == nil {
				continue
			}
			key := group + "/" + version + "/" + plural
			r := byKey[key]
			if r == nil {
				r = &resource{group: group, version: version, plural: plural, verbs: map[string]bool{}, subresources: map[string]bool{}}
				byKey[key] = r
			}
			r.exists |= 1 << minor
			r.namespaced = r.namespaced || namespaced
			if sub != "" {
				r.subresources[sub] = true
				continue
			}
			r.kind = op.GVK.Kind
			if v, ok := actionVerbs[op.Action]; ok {
				r.verbs[v] = true
			}
		}
	}
	return nil
}

var (
	lifecycleFunc = regexp.MustCompile(`func \(in \*(\w+)\) APILifecycle(Deprecated|Removed|Replacement)\(\)[^{]*\{\s*return ([^\n]+)`)
	minorOf       = regexp.MustCompile(`^1, (\d+)$`)
	replacementOf = regexp.MustCompile(`Group: "([^"]*)", Version: "([^"]*)", Kind: "([^"]*)"`)
	groupNameOf   = regexp.MustCompile(`\+groupName=([\w.]+)`)
)

// addLifecycles reads the deprecation facts of every kind in one k8s.io/api zip.
func addLifecycles(lifecycles map[string]lifecycle, z *zip.Reader, prefix string) error {
	for _, f := range z.File {
		if path.Base(f.Name) != "zz_generated.prerelease-lifecycle.go" || !strings.HasPrefix(f.Name, prefix) {
			continue
		}
		dir := strings.TrimPrefix(path.Dir(f.Name), prefix) // "networking/v1beta1"
		pkg, version := path.Split(dir)
		group := strings.TrimSuffix(pkg, "/")
		if doc, err := readZip(z, path.Dir(f.Name)+"/doc.go"); err == nil {
			if m := groupNameOf.FindSubmatch(doc); m != nil {
				group = string(m[1])
			}
		}
		if group == "core" {
			group = ""
		}
		raw, err := readZip(z, f.Name)
		if err != nil {
			return err
		}
		for _, m := range lifecycleFunc.FindAllStringSubmatch(string(raw), -1) {
			key := group + "/" + version + "/" + m[1]
			l := lifecycles[key]
			switch m[2] {
			case "Replacement":
				if r := replacementOf.FindStringSubmatch(m[3]); r != nil {
					gv := r[2]
					if r[1] != "" {
						gv = r[1] + "/" + r[2]
					}
					l.replacement = gv + " " + r[3]
				}
			default:
				n := minorOf.FindStringSubmatch(strings.TrimSpace(m[3]))
				if n == nil {
					return fmt.Errorf("%s: %s: unexpected %q", f.Name, m[1], m[3])
				}
				minor, _ := strconv.Atoi(n[1])
				if m[2] == "Deprecated" {
					l.deprecated = minor
				} else {
					l.removed = minor
				}
			}
			lifecycles[key] = l
		}
	}
	return nil
}

// defaults returns the releases that serve r without --runtime-config: GA
// versions always; beta ones until their removal if the resource came
// before v1.24 (or its group version is an exception); alpha ones never.
func defaults(r *resource, l lifecycle) uint64 {
	switch {
	case !strings.Contains(r.version, "alpha") && !strings.Contains(r.version, "beta"):
		return r.exists
	case strings.Contains(r.version, "alpha"):
		return 0
	}
	first := 0
	for first < 64 && r.exists&(1<<first) == 0 {
		first++
	}
	if first >= 24 && !defaultOnBetas[r.group+"/"+r.version] {
		return 0
	}
	on := r.exists
	if l.removed > 0 {
		on &= 1<<l.removed - 1
	}
	return on
}

func write(out string, byKey map[string]*resource, lifecycles map[string]lifecycle, minors []int) error {
	var b bytes.Buffer
	fmt.Fprintf(&b, "// Code generated by internal/gen from the swagger.json of Kubernetes v1.%d to v1.%d and the prerelease lifecycles of k8s.io/api, apiextensions-apiserver and kube-aggregator; DO NOT EDIT.\n\n", minors[0], minors[len(minors)-1])
	b.WriteString("package releases\n\n")
	fmt.Fprintf(&b, "// Oldest and Newest are the minor versions of the releases the table covers.\nconst (\n\tOldest = %d\n\tNewest = %d\n)\n\n", minors[0], minors[len(minors)-1])
	b.WriteString("// patches holds the last patch of each minor release.\nvar patches = map[int]int{")
	for _, m := range minors {
		fmt.Fprintf(&b, "%d: %d, ", m, patches[m])
	}
	b.WriteString("}\n\nvar table = []Resource{\n")
	for _, key := range slices.Sorted(func(yield func(string) bool) {
		for k := range byKey {
			if !yield(k) {
				return
			}
		}
	}) {
		r := byKey[key]
		if r.kind == "" {
			continue
		}
		l := lifecycles[r.group+"/"+r.version+"/"+r.kind]
		fmt.Fprintf(&b, "\t{Group: %q, Version: %q, Resource: %q, Kind: %q, Namespaced: %v, Verbs: %s, Subresources: %s, Exists: %#x, Default: %#x",
			r.group, r.version, r.plural, r.kind, r.namespaced, strs(r.verbs), strs(r.subresources), r.exists, defaults(r, l))
		if l.deprecated > 0 {
			fmt.Fprintf(&b, ", Deprecated: %d, Removed: %d", l.deprecated, l.removed)
		}
		if l.replacement != "" {
			fmt.Fprintf(&b, ", Replacement: %q", l.replacement)
		}
		b.WriteString("},\n")
	}
	b.WriteString("}\n")
	src, err := format.Source(b.Bytes())
	if err != nil {
		return err
	}
	return os.WriteFile(out, src, 0o644)
}

func strs(set map[string]bool) string {
	if len(set) == 0 {
		return "nil"
	}
	keys := make([]string, 0, len(set))
	for k := range set {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return fmt.Sprintf("%#v", keys)
}
