// Package header is the emulated release as the header of every page shows
// it, with a form to switch it (posted to package emulation's page).
package header
