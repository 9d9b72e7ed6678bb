// Package editor writes objects through the API: create (POST), replace
// (PUT), the four patch types and server-side apply, with dryRun,
// fieldManager, force and fieldValidation, and shows the API's answer with
// its Warning headers. When an apply conflicts it lists the conflicting
// fields and their managers and offers the three ways out the Server-Side
// Apply documentation gives: force, drop the fields from the applied
// configuration, or adopt the live values. The YAML is edited in CodeMirror
// 6 (web/assets/editor.js), over a plain textarea that works without it.
// Writes are refused from other origins.
package editor
