// Command wasmsize reports how many bytes of a Go WebAssembly binary's code
// each package takes, from the function bodies and the name section (so the
// binary must be built without -ldflags=-s), and the size of the data
// section. Usage: go run ./static/internal/wasmsize FILE.wasm [DEPTH], DEPTH
// being how many path elements name a package (default 2).
package main

import (
	"bufio"
	"fmt"
	"os"
	"sort"
	"strings"
)

// uleb reads an unsigned LEB128 number at b[*i], advancing *i.
func uleb(b []byte, i *int) uint64 {
	var r uint64
	var s uint
	for {
		c := b[*i]
		*i++
		r |= uint64(c&0x7f) << s
		if c < 0x80 {
			return r
		}
		s += 7
	}
}

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: wasmsize FILE.wasm [DEPTH]")
		os.Exit(2)
	}
	b, err := os.ReadFile(os.Args[1])
	if err != nil {
		fmt.Fprintln(os.Stderr, "wasmsize:", err)
		os.Exit(1)
	}
	depth := 2
	if len(os.Args) > 2 {
		fmt.Sscan(os.Args[2], &depth)
	}
	i := 8
	var imports int
	var bodies []int
	names := map[int]string{}
	dataSize := 0
	for i < len(b) {
		id := b[i]
		i++
		n := int(uleb(b, &i))
		sec := b[i : i+n]
		j := 0
		switch id {
		case 2:
			cnt := int(uleb(sec, &j))
			for k := 0; k < cnt; k++ {
				l := int(uleb(sec, &j))
				j += l
				l = int(uleb(sec, &j))
				j += l
				kind := sec[j]
				j++
				switch kind {
				case 0:
					uleb(sec, &j)
					imports++
				case 1: // a table: its element type, then limits
					j++
					skipLimits(sec, &j)
				case 2: // a memory: limits
					skipLimits(sec, &j)
				case 3:
					j += 2
				}
			}
		case 10:
			cnt := int(uleb(sec, &j))
			for k := 0; k < cnt; k++ {
				l := int(uleb(sec, &j))
				bodies = append(bodies, l)
				j += l
			}
		case 11:
			dataSize += n
		case 0:
			l := int(uleb(sec, &j))
			name := string(sec[j : j+l])
			j += l
			if name == "name" {
				for j < len(sec) {
					sid := sec[j]
					j++
					sl := int(uleb(sec, &j))
					sub := sec[j : j+sl]
					j += sl
					if sid == 1 {
						q := 0
						cnt := int(uleb(sub, &q))
						for k := 0; k < cnt; k++ {
							idx := int(uleb(sub, &q))
							nl := int(uleb(sub, &q))
							names[idx] = string(sub[q : q+nl])
							q += nl
						}
					}
				}
			}
		}
		i += n
	}
	agg := map[string]int{}
	total := 0
	for k, sz := range bodies {
		nm := names[imports+k]
		pkg := pkgOf(nm, depth)
		agg[pkg] += sz
		total += sz
	}
	type kv struct {
		k string
		v int
	}
	var l []kv
	for k, v := range agg {
		l = append(l, kv{k, v})
	}
	sort.Slice(l, func(a, b int) bool { return l[a].v > l[b].v })
	w := bufio.NewWriter(os.Stdout)
	defer w.Flush()
	fmt.Fprintf(w, "code %d data %d\n", total, dataSize)
	for _, e := range l[:min(60, len(l))] {
		fmt.Fprintf(w, "%8d KB %s\n", e.v/1024, e.k)
	}
}

// skipLimits skips the limits at b[*i]: flags, minimum, maximum if flagged.
func skipLimits(b []byte, i *int) {
	flags := b[*i]
	*i++
	uleb(b, i)
	if flags&1 != 0 {
		uleb(b, i)
	}
}

// pkgOf returns the first depth path elements of the package of function n.
func pkgOf(n string, depth int) string {
	n = strings.ReplaceAll(n, "_", "/")
	// Go symbol: path/to/pkg.Func or path/to/pkg.(*T).M
	slash := strings.LastIndex(n, "/")
	dot := strings.Index(n[slash+1:], ".")
	p := n
	if dot >= 0 {
		p = n[:slash+1+dot]
	}
	parts := strings.Split(p, "/")
	if len(parts) > depth {
		parts = parts[:depth]
	}
	return strings.Join(parts, "/")
}
