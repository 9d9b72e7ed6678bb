package main

import (
	"bufio"
	"fmt"
	"os"
	"regexp"
	"strings"
)

// impossibleRule says why the tests whose full name matches re cannot pass
// against kubeplay.
type impossibleRule struct {
	re     *regexp.Regexp
	reason string
}

// readImpossible reads impossible.txt: "reason: TEXT" lines name the reason
// of the test-name regexps on the lines after it, up to the next reason;
// blank lines and lines starting with # are comments.
func readImpossible(path string) ([]impossibleRule, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var rules []impossibleRule
	reason := ""
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		if r, ok := strings.CutPrefix(line, "reason:"); ok {
			reason = strings.TrimSpace(r)
			continue
		}
		if reason == "" {
			return nil, fmt.Errorf("%s:%d: a test regexp before any reason: line", path, n)
		}
		re, err := regexp.Compile(line)
		if err != nil {
			return nil, fmt.Errorf("%s:%d: %v", path, n, err)
		}
		rules = append(rules, impossibleRule{re, reason})
	}
	return rules, sc.Err()
}

// impossibleReason is the reason of the first rule matching the test name,
// or "".
func impossibleReason(rules []impossibleRule, name string) string {
	for _, r := range rules {
		if r.re.MatchString(name) {
			return r.reason
		}
	}
	return ""
}
