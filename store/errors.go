package store

import "fmt"

// sqliteConstraint is SQLite's primary result code SQLITE_CONSTRAINT. Result
// codes are SQLite's own, the same in every build; extended codes (such as
// SQLITE_CONSTRAINT_PRIMARYKEY, 1555) carry the primary code in their low
// byte. Messages, on the other hand, differ between builds and versions, so
// errors are never matched by their text.
const sqliteConstraint = 19

// fromResultCode turns err, a driver error carrying SQLite result code code,
// into a store error. The driver error is flattened to text so that no
// driver type leaks above the store.
func fromResultCode(code int, err error) error {
	switch code & 0xff {
	case sqliteConstraint:
		// The only constraint a write can break is the revision's primary
		// key, and only if another writer took that revision (see DB.write).
		return fmt.Errorf("%w: %v", ErrConflict, err)
	}
	return fmt.Errorf("store: sqlite: %v", err)
}
