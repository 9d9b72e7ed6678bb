// Package layout is the page shell shared by every UI page: the HTML
// document, the stylesheet link and the site header. Pages render their
// content as Page's children.
package layout
