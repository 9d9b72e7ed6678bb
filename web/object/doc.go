// Package object is the page of one object, read through the API:
//
//   - YAML: the object as kubectl get -o yaml prints it, highlighted on the
//     server into spans (no client-side code);
//   - Managed fields: the YAML with every field marked by the managers that
//     own it (metadata.managedFields' fieldsV1 decoded with
//     structured-merge-diff's fieldpath), shared fields marked as such, each
//     manager's operation, subresource, API version and time, and a
//     per-manager view ("what does kubectl own?");
//   - Deletion: deletionTimestamp and grace period, each finalizer with who
//     added it and who is expected to remove it, the timeline from the
//     sandbox's deletion journal, the owner/dependent tree with each node's
//     state, and for a namespace its conditions and what it still contains.
//
// The page is bookmarkable: URL builds "/ui/object?r=<type>&ns=<ns>&name=<name>&tab=<tab>".
package object
