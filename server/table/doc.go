// Package table prints objects as the rows of a meta.k8s.io Table, the
// representation kube-apiserver serves for Accept: application/json;as=Table
// and that kubectl get shows. A Printer knows one type's columns and how to
// compute each object's cells; ForResource returns the printer of a built-in
// type (its columns recorded from a real kube-apiserver v1.35, see
// columns.json), or the default Name / Created At printer for types without
// one. Custom resources plug in their additionalPrinterColumns by
// implementing Printer.
//
// Ages are computed at the time given to Cells, as the real server computes
// them when it answers.
package table
