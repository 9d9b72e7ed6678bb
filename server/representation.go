package server

import (
	"encoding/json"
	"fmt"
	"net/http"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"kubeplay/server/catalog"
	"kubeplay/server/encoding"
	"kubeplay/server/table"
)

// Responses are converted as kube-apiserver converts them: after the read
// or write, so that a missing object answers 404 and a write happens even
// when the conversion then fails (a bad includeObject, a list asked for as
// one object). Only media types nothing can carry are refused up front
// (serveResource).

// writeObject answers with an object (or a Status, never converted) in the
// negotiated representation.
func (s *Server) writeObject(w http.ResponseWriter, r *http.Request, req *request, code int, result any) {
	conv, err := s.newConverter(r, req)
	if err == nil {
		if obj, ok := result.(object); ok {
			result, err = conv.object(obj)
		}
	}
	if err != nil {
		encoding.WriteError(w, r, err)
		return
	}
	encoding.Write(w, r, code, result)
}

// writeList answers with a list in the negotiated representation.
func (s *Server) writeList(w http.ResponseWriter, r *http.Request, req *request, list *objectList) {
	conv, err := s.newConverter(r, req)
	var out object
	if err == nil {
		out, err = conv.list(list, req.res)
	}
	if err != nil {
		encoding.WriteError(w, r, err)
		return
	}
	encoding.Write(w, r, http.StatusOK, out)
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
	res     *catalog.Resource
	printer table.Printer
	include string
	now     func() time.Time
	// columnsSent is set once a watch has sent the column definitions, which
	// only its first Table carries.
	columnsSent bool
}

// newConverter negotiates the representation of req's response.
func (s *Server) newConverter(r *http.Request, req *request) (*converter, error) {
	as, err := encoding.Negotiate(r, req.name == "",
		encoding.AsTable, encoding.AsPartialObjectMetadata, encoding.AsPartialObjectMetadataList)
	if err != nil {
		return nil, err
	}
	if req.verb == "watch" && as.MediaType == encoding.YAML {
		return nil, encoding.NotAcceptableStream(r) // watch events have no YAML form
	}
	c := &converter{as: as, res: req.res, now: s.reg.now}
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

// partial is an object's PartialObjectMetadata (all of its metadata), as
// served for as=PartialObjectMetadata and in Table rows.
func (c *converter) partial(obj object) object {
	return object{"kind": encoding.AsPartialObjectMetadata, "apiVersion": c.metaAPIVersion(), "metadata": metadata(obj)}
}

// notAcceptable is the 406 for a conversion that does not fit the answer:
// a list asked for as one object's metadata, or the other way round.
func (c *converter) notAcceptable(isList bool) error {
	typ := "*" + internalPackage(c.res.Group) + "." + c.res.Kind
	msg := fmt.Sprintf("you requested %s, but the requested object is not a list (%s)", c.as.As, typ)
	if isList {
		msg = fmt.Sprintf("you requested %s, but the requested object is a list (%sList)", c.as.As, typ)
	}
	return &apierrors.StatusError{ErrStatus: metav1.Status{
		Status: metav1.StatusFailure, Code: http.StatusNotAcceptable, Reason: metav1.StatusReasonNotAcceptable, Message: msg,
	}}
}

// object converts one object (a get, a write, a watch event's object).
func (c *converter) object(obj object) (object, error) {
	switch c.as.As {
	case encoding.AsTable:
		md := map[string]any{"resourceVersion": metadata(obj)["resourceVersion"]}
		return c.table(md, []object{obj}), nil
	case encoding.AsPartialObjectMetadata:
		return c.partial(obj), nil
	case encoding.AsPartialObjectMetadataList:
		return nil, c.notAcceptable(false)
	}
	return obj, nil
}

// list converts a page of a list.
func (c *converter) list(l *objectList, res *catalog.Resource) (object, error) {
	switch c.as.As {
	case encoding.AsTable:
		return c.table(l.meta(), l.items), nil
	case encoding.AsPartialObjectMetadataList:
		items := make([]any, 0, len(l.items))
		for _, it := range l.items {
			items = append(items, c.partial(it))
		}
		return object{"kind": encoding.AsPartialObjectMetadataList, "apiVersion": c.metaAPIVersion(), "metadata": l.meta(), "items": items}, nil
	case encoding.AsPartialObjectMetadata:
		return nil, c.notAcceptable(true)
	}
	return l.encode(res), nil
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
