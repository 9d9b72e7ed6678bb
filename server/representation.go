package server

import (
	"encoding/json"
	"net/http"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"kubeplay/server/catalog"
	"kubeplay/server/encoding"
	"kubeplay/server/table"
)

// conversions are the as= conversions each read verb serves.
var conversions = map[string][]string{
	"get":   {encoding.AsTable, encoding.AsPartialObjectMetadata},
	"list":  {encoding.AsTable, encoding.AsPartialObjectMetadataList},
	"watch": {encoding.AsTable, encoding.AsPartialObjectMetadata},
}

// includeObject values of a Table request: what each row carries besides its
// cells.
const (
	includeNone     = "None"
	includeMetadata = "Metadata"
	includeObject   = "Object"
)

// converter turns the objects of one response into the representation the
// client negotiated: the objects themselves, a Table, or their metadata.
type converter struct {
	as      encoding.Negotiated
	printer table.Printer
	include string
	now     func() time.Time
	// columnsSent is set once a watch has sent the column definitions, which
	// only its first Table carries.
	columnsSent bool
}

// newConverter negotiates the representation of req's response.
func (s *Server) newConverter(r *http.Request, req *request) (*converter, error) {
	as, err := encoding.Negotiate(r.Header.Get("Accept"), req.name == "", conversions[req.verb]...)
	if err != nil {
		return nil, err
	}
	c := &converter{as: as, now: s.now}
	if as.As == encoding.AsTable {
		c.include = r.URL.Query().Get("includeObject")
		switch c.include {
		case "":
			c.include = includeMetadata
		case includeNone, includeMetadata, includeObject:
		default:
			return nil, apierrors.NewBadRequest(`Unable to convert to Table as requested: includeObject: Invalid value: "` +
				c.include + `": must be 'Metadata', 'Object', 'None', or empty`)
		}
		c.printer = printerOf(req.res)
	}
	return c, nil
}

func (c *converter) metaAPIVersion() string { return "meta.k8s.io/" + c.as.Version }

// partial is an object's PartialObjectMetadata.
func (c *converter) partial(obj object) object {
	return object{"kind": encoding.AsPartialObjectMetadata, "apiVersion": c.metaAPIVersion(), "metadata": metadata(obj)}
}

// object converts one object (a get, or a watch event's object).
func (c *converter) object(obj object) object {
	switch c.as.As {
	case encoding.AsTable:
		md := map[string]any{"resourceVersion": metadata(obj)["resourceVersion"]}
		return c.table(md, []object{obj})
	case encoding.AsPartialObjectMetadata:
		return c.partial(obj)
	}
	return obj
}

// list converts a page of a list.
func (c *converter) list(l *objectList, res *catalog.Resource) object {
	switch c.as.As {
	case encoding.AsTable:
		return c.table(l.meta(), l.items)
	case encoding.AsPartialObjectMetadataList:
		items := make([]any, 0, len(l.items))
		for _, it := range l.items {
			items = append(items, c.partial(it))
		}
		return object{"kind": encoding.AsPartialObjectMetadataList, "apiVersion": c.metaAPIVersion(), "metadata": l.meta(), "items": items}
	}
	return l.encode(res)
}

// table prints objects as a Table with list metadata md. Ages are computed
// at the time of the request, as the real server does.
func (c *converter) table(md map[string]any, objs []object) object {
	rows := make([]any, 0, len(objs))
	for _, obj := range objs {
		row := map[string]any{"cells": c.printer.Cells(obj, c.now()), "object": nil}
		if conds := c.printer.Conditions(obj); conds != nil {
			row["conditions"] = conds
		}
		switch c.include {
		case includeMetadata:
			row["object"] = rawObject(c.partial(obj))
		case includeObject:
			row["object"] = rawObject(obj)
		}
		rows = append(rows, row)
	}
	var columns any // a watch sends the columns with its first Table only
	if !c.columnsSent {
		columns = c.printer.Columns()
	}
	return object{"kind": encoding.AsTable, "apiVersion": c.metaAPIVersion(), "metadata": md, "columnDefinitions": columns, "rows": rows}
}

// rawObject encodes an object in the server's field order, so that a row's
// object reads like the object served alone.
func rawObject(obj object) json.RawMessage {
	b, err := encoding.MarshalObject(obj)
	if err != nil {
		return json.RawMessage("null")
	}
	return b
}

func printerOf(res *catalog.Resource) table.Printer {
	if res.Custom == nil {
		return table.ForResource(res.Group, res.Resource)
	}
	cols := make([]table.Column, len(res.Custom.Columns))
	for i, c := range res.Custom.Columns {
		cols[i] = table.Column(c)
	}
	return table.Custom(cols)
}
