package celrules

import "github.com/google/cel-go/cel"

// library is the part of the Kubernetes CEL libraries kubeplay implements.
func library() []cel.EnvOption { return nil }
