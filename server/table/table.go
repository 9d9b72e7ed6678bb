package table

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Printer prints the objects of one type.
type Printer interface {
	// Columns returns the column definitions, the same for every object.
	Columns() []metav1.TableColumnDefinition
	// Cells returns one object's cells, one per column, computing ages at now.
	// It never fails: a missing or malformed field prints as the real server
	// prints an unset one.
	Cells(obj map[string]any, now time.Time) []any
	// Conditions returns the row's conditions (the "Completed" condition of
	// a finished pod), or nil.
	Conditions(obj map[string]any) []metav1.TableRowCondition
}

//go:embed columns.json
var columnsJSON []byte

// columns maps "group/resource" to the column definitions kube-apiserver
// v1.35 serves for it (recorded from the oracle; the default columns are not
// listed).
var columns = sync.OnceValue(func() map[string][]metav1.TableColumnDefinition {
	var m map[string][]metav1.TableColumnDefinition
	if err := json.Unmarshal(columnsJSON, &m); err != nil {
		panic(fmt.Sprintf("table: columns.json: %v", err)) // embedded data: a programming error
	}
	return m
})

// cellsFunc computes the cells of one built-in type.
type cellsFunc func(o obj, now time.Time) []any

// builtin is the printer of a built-in type.
type builtin struct {
	columns    []metav1.TableColumnDefinition
	cells      cellsFunc
	conditions func(o obj) []metav1.TableRowCondition
}

func (b builtin) Columns() []metav1.TableColumnDefinition { return b.columns }

func (b builtin) Cells(o map[string]any, now time.Time) []any { return b.cells(o, now) }

func (b builtin) Conditions(o map[string]any) []metav1.TableRowCondition {
	if b.conditions == nil {
		return nil
	}
	return b.conditions(o)
}

// replacedBy names the resources older releases served in a group that no
// longer has them, printed as the resource that replaced them.
var replacedBy = map[string]string{"extensions/ingresses": "networking.k8s.io/ingresses"}

// ForResource returns the printer of a built-in resource type.
func ForResource(group, resource string) Printer {
	key := group + "/" + resource
	if k, ok := replacedBy[key]; ok {
		key = k
	}
	if f, ok := printers[key]; ok {
		p := builtin{columns: columns()[key], cells: f}
		if key == "/pods" {
			p.conditions = podConditions
		}
		return p
	}
	return Default()
}

// Default returns the printer of types without their own columns: Name and
// Created At.
func Default() Printer { return builtin{columns: defaultColumns, cells: defaultCells} }

var defaultColumns = []metav1.TableColumnDefinition{
	{Name: "Name", Type: "string", Format: "name", Description: nameDescription},
	{Name: "Created At", Type: "date", Description: creationTimestampDescription},
}

const (
	nameDescription              = "Name must be unique within a namespace. Is required when creating resources, although some resources may allow a client to request the generation of an appropriate name automatically. Name is primarily intended for creation idempotence and configuration definition. Cannot be updated. More info: https://kubernetes.io/docs/concepts/overview/working-with-objects/names#names"
	creationTimestampDescription = "CreationTimestamp is a timestamp representing the server time when this object was created. It is not guaranteed to be set in happens-before order across separate operations. Clients may not set this value. It is represented in RFC3339 form and is in UTC.\n\nPopulated by the system. Read-only. Null for lists. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata"
)

func defaultCells(o obj, _ time.Time) []any {
	return []any{o.str("metadata", "name"), o.str("metadata", "creationTimestamp")}
}
