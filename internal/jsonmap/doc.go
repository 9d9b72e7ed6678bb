// Package jsonmap reads values decoded from JSON into Go's generic types:
// objects as map[string]any, lists as []any, numbers as float64, int64 or
// json.Number depending on who decoded them. It tolerates any shape: a
// missing or mistyped field reads as absent.
package jsonmap
