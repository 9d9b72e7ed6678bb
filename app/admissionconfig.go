package app

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	psadmissionapi "k8s.io/pod-security-admission/admission/api"
	psload "k8s.io/pod-security-admission/admission/api/load"
	psvalidation "k8s.io/pod-security-admission/admission/api/validation"
	"sigs.k8s.io/yaml"

	"kubeplay/server"
)

// admissionConfigVersions are the apiVersions of an AdmissionConfiguration
// kube-apiserver v1.35 reads.
var admissionConfigVersions = []string{"apiserver.config.k8s.io/v1", "apiserver.config.k8s.io/v1alpha1", "apiserver.k8s.io/v1alpha1"}

// admissionConfiguration is an AdmissionConfiguration file: each plugin's
// configuration, given inline or as the path of a file.
type admissionConfiguration struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Plugins    []struct {
		Name          string         `json:"name"`
		Path          string         `json:"path,omitempty"`
		Configuration map[string]any `json:"configuration,omitempty"`
	} `json:"plugins"`
}

// readAdmissionConfiguration reads kube-apiserver's
// --admission-control-config-file: the configuration of its PodSecurity
// plugin (nil if it has none: kube-apiserver's default), and the names of
// the other plugins it configures, which kubeplay does not apply. Errors
// are worded as kube-apiserver's at its start.
func readAdmissionConfiguration(file string) (*server.PodSecurityConfiguration, []string, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, nil, fmt.Errorf("failed to apply admission: failed to read plugin config: unable to read admission control configuration from %q [%v]", file, err)
	}
	var cfg admissionConfiguration
	asJSON, err := yaml.YAMLToJSONStrict(data)
	if err == nil {
		d := json.NewDecoder(bytes.NewReader(asJSON))
		d.DisallowUnknownFields()
		err = d.Decode(&cfg)
	}
	if err != nil {
		return nil, nil, fmt.Errorf("failed to apply admission: failed to read plugin config: %v", err)
	}
	if !slices.Contains(admissionConfigVersions, cfg.APIVersion) || cfg.Kind != "AdmissionConfiguration" {
		return nil, nil, fmt.Errorf("failed to apply admission: failed to read plugin config: %s: not an AdmissionConfiguration of %s", file, strings.Join(admissionConfigVersions, ", "))
	}
	var podSecurity *server.PodSecurityConfiguration
	var others []string
	for _, p := range cfg.Plugins {
		if p.Name != "PodSecurity" {
			others = append(others, p.Name)
			continue
		}
		var raw []byte
		switch {
		case p.Configuration != nil:
			if raw, err = yaml.Marshal(p.Configuration); err != nil {
				return nil, nil, err
			}
		case p.Path != "":
			path := p.Path
			if !filepath.IsAbs(path) { // relative to the file, as kube-apiserver reads it
				path = filepath.Join(filepath.Dir(file), path)
			}
			if raw, err = os.ReadFile(path); err != nil {
				return nil, nil, fmt.Errorf("couldn't open admission plugin configuration %s: %v", path, err)
			}
		}
		if podSecurity, err = parsePodSecurityConfiguration(raw); err != nil {
			return nil, nil, err
		}
	}
	return podSecurity, others, nil
}

// parsePodSecurityConfiguration reads a PodSecurityConfiguration
// (pod-security.admission.config.k8s.io v1, v1beta1 or v1alpha1; YAML or
// JSON; empty: the default), with kube-apiserver's checks and words.
func parsePodSecurityConfiguration(data []byte) (*server.PodSecurityConfiguration, error) {
	cfg, err := psload.LoadFromData(data)
	if err != nil {
		return nil, fmt.Errorf("failed to apply admission: couldn't init admission plugin %q: %v", "PodSecurity", err)
	}
	defaults, err := psadmissionapi.ToPolicy(cfg.Defaults)
	if err != nil {
		return nil, fmt.Errorf("failed to apply admission: failed to initialize admission plugin %q: PodSecurity configuration error: %w", "PodSecurity", err)
	}
	if errs := psvalidation.ValidatePodSecurityConfiguration(cfg); len(errs) > 0 {
		return nil, fmt.Errorf("failed to apply admission: failed to initialize admission plugin %q: PodSecurity invalid: %w", "PodSecurity", errs.ToAggregate())
	}
	return &server.PodSecurityConfiguration{
		Defaults:             defaults,
		ExemptUsernames:      cfg.Exemptions.Usernames,
		ExemptNamespaces:     cfg.Exemptions.Namespaces,
		ExemptRuntimeClasses: cfg.Exemptions.RuntimeClasses,
	}, nil
}
