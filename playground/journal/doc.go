// Package journal records every request a sandbox's API serves — from the
// UI, kubectl, client-go, a script or the sandbox's own controllers — with
// its headers, bodies, status and latency, and for watches each event as it
// is sent, so learners can see the HTTP exchange behind every command.
//
// A Journal keeps the newest entries in memory (a bounded ring: old entries
// fall off), pages through them by sequence number, and fans new entries
// and watch events out to subscribers without knowing how they travel (a
// WebSocket natively, an in-page channel in the browser): Follow catches a
// subscriber up from a sequence number and then follows, without a gap or a
// repeat between the two. A subscriber that falls behind is dropped and
// follows again from the last sequence number it saw, as a store watcher
// does.
package journal
