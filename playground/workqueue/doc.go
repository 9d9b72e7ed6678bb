// Package workqueue is the queue every simulated controller works from, with
// the semantics of client-go's rate-limited work queue: a key is queued at
// most once however often it is added, is never handed to two workers at
// once, is queued again if it was added while a worker held it, and comes
// back after a per-key exponential backoff when its reconcile failed. A
// controller that keeps failing on one key therefore slows down on that key
// alone, and an idle queue costs nothing: no timer runs unless a key waits.
package workqueue
