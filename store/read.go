package store

import (
	"context"
	"database/sql"
	"fmt"
)

// getSQL reads a key as of a revision (?2, 0 meaning the latest) together with
// the state to validate that revision against: one statement is one snapshot,
// so a compaction cannot slip between the check and the read.
const getSQL = `WITH s (cur, horizon) AS (` + stateSQL + `)
	SELECT s.cur, s.horizon, k.rev, k.value, k.create_rev, k.deleted
	FROM s LEFT JOIN (
		SELECT rev, value, create_rev, deleted FROM kv
		WHERE key = ?1 AND (?2 = 0 OR rev <= ?2)
		ORDER BY rev DESC LIMIT 1
	) AS k`

// Get implements Store. A key's latest value is served from the values kept
// in memory when it has one (see DB.gets): nothing wrote the key since it was
// read.
func (db *DB) Get(ctx context.Context, key string, atRev int64) (KeyValue, error) {
	if err := db.check(ctx); err != nil {
		return KeyValue{}, err
	}
	var tracked *listEntry
	if atRev == 0 {
		kept, _, miss := db.gets.get(key, db.rev.Load)
		if miss == nil {
			return kept[0], nil
		}
		tracked = miss
	}
	var (
		cur, horizon  int64
		rev, createRV sql.NullInt64
		deleted       sql.NullBool
		kv            = KeyValue{Key: key}
	)
	err := db.sql.QueryRowContext(dbctx(ctx), getSQL, []byte(key), atRev).
		Scan(&cur, &horizon, &rev, &kv.Value, &createRV, &deleted)
	if err != nil {
		return KeyValue{}, db.fail(err)
	}
	if _, err := checkRev(atRev, cur, horizon); err != nil {
		return KeyValue{}, err
	}
	if !rev.Valid || deleted.Bool {
		return KeyValue{}, fmt.Errorf("%w: %q", ErrNotFound, key)
	}
	kv.ModRevision, kv.CreateRevision = rev.Int64, createRV.Int64
	if tracked != nil {
		db.gets.put(key, tracked, []KeyValue{kv}, cur)
	}
	return kv, nil
}

// liveKeys selects the live keys of a key range as of a revision, in key
// order, each with the revision of its row there: the newest row of each key
// at or below the revision (SQLite takes a bare column, here deleted, from
// the row max() picks), unless that row is a tombstone. It reads the
// (key, rev, deleted) index alone, in order, so a LIMIT stops it early.
// %s is the range condition on key, from keyRange.sql; the parameters are
// the range's, then the revision.
const liveKeys = `SELECT key, max(rev) AS rev, deleted FROM kv WHERE %s AND rev <= ?
	GROUP BY key HAVING deleted = 0`

// List implements Store. A whole prefix at the current revision is served
// from the listings kept in memory when it has one (see listCache), at the
// current revision: nothing under the prefix changed since it was read.
func (db *DB) List(ctx context.Context, prefix, startKey string, limit int, atRev int64) (ListResult, error) {
	var tracked *listEntry
	if startKey == "" && limit <= 0 && atRev == 0 {
		if err := db.check(ctx); err != nil {
			return ListResult{}, err
		}
		items, rev, miss := db.lists.get(prefix, db.rev.Load)
		if miss == nil {
			return ListResult{Items: items, Revision: rev}, nil
		}
		tracked = miss
	}
	var res ListResult
	err := db.read(ctx, func(tx *sql.Tx, cur, horizon int64) error {
		rev, err := checkRev(atRev, cur, horizon)
		if err != nil {
			return err
		}
		res.Revision = rev
		r := prefixRange(prefix).from(startKey)
		if r.empty() {
			return nil
		}
		page := int64(-1) // SQLite: no limit
		if limit > 0 {
			page = int64(limit) + 1 // one more says whether anything remains
		}
		rows, err := tx.Query(`SELECT m.key, k.value, k.create_rev, k.rev
			FROM (`+fmt.Sprintf(liveKeys, r.sql("key"))+` ORDER BY key LIMIT ?) AS m
			JOIN kv AS k ON k.rev = m.rev ORDER BY m.key`, append(r.args(), rev, page)...)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var (
				kv  KeyValue
				key []byte
			)
			if err := rows.Scan(&key, &kv.Value, &kv.CreateRevision, &kv.ModRevision); err != nil {
				return err
			}
			kv.Key = string(key)
			res.Items = append(res.Items, kv)
		}
		if err := rows.Err(); err != nil {
			return err
		}
		if limit <= 0 || len(res.Items) <= limit {
			return nil
		}
		res.Items = res.Items[:limit]
		rest := prefixRange(prefix).after(res.Items[limit-1].Key)
		return tx.QueryRow(`SELECT count(*) FROM (`+fmt.Sprintf(liveKeys, rest.sql("key"))+`)`,
			append(rest.args(), rev)...).Scan(&res.Remaining)
	})
	if err != nil {
		return ListResult{}, err
	}
	if tracked != nil {
		db.lists.put(prefix, tracked, res.Items, res.Revision)
	}
	return res, nil
}

// Count implements Store.
func (db *DB) Count(ctx context.Context, prefix string) (int64, error) {
	var n int64
	err := db.read(ctx, func(tx *sql.Tx, cur, _ int64) error {
		r := prefixRange(prefix)
		return tx.QueryRow(`SELECT count(*) FROM (`+fmt.Sprintf(liveKeys, r.sql("key"))+`)`,
			append(r.args(), cur)...).Scan(&n)
	})
	return n, err
}

// Keys implements Store. It reads the key index alone (see liveKeys).
func (db *DB) Keys(ctx context.Context, prefix string) ([]string, error) {
	var keys []string
	err := db.read(ctx, func(tx *sql.Tx, cur, _ int64) error {
		r := prefixRange(prefix)
		rows, err := tx.Query(`SELECT key FROM (`+fmt.Sprintf(liveKeys, r.sql("key"))+`) ORDER BY key`, append(r.args(), cur)...)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var key []byte
			if err := rows.Scan(&key); err != nil {
				return err
			}
			keys = append(keys, string(key))
		}
		return rows.Err()
	})
	return keys, err
}

// keyRange is the half-open byte range of keys [lo, hi); hi nil means
// unbounded. Bounds are bytes, bound as BLOBs, so they compare exactly as Go
// compares strings.
type keyRange struct {
	lo, hi []byte
}

// prefixRange is the range of the keys starting with prefix.
func prefixRange(prefix string) keyRange {
	return keyRange{lo: []byte(prefix), hi: prefixEnd(prefix)}
}

// prefixEnd returns the smallest key greater than every key starting with
// prefix, or nil if there is none (prefix is empty or all 0xff).
func prefixEnd(prefix string) []byte {
	end := []byte(prefix)
	for i := len(end) - 1; i >= 0; i-- {
		if end[i] < 0xff {
			end[i]++
			return end[:i+1]
		}
	}
	return nil
}

// from narrows r to the keys >= start.
func (r keyRange) from(start string) keyRange {
	if string(r.lo) < start {
		r.lo = []byte(start)
	}
	return r
}

// after narrows r to the keys > key: the next key after key is key + "\x00".
func (r keyRange) after(key string) keyRange {
	return r.from(key + "\x00")
}

func (r keyRange) empty() bool {
	return r.hi != nil && string(r.lo) >= string(r.hi)
}

// sql returns the condition for column col to be in r, with one placeholder
// per bound, in the order args returns them.
func (r keyRange) sql(col string) string {
	if r.hi == nil {
		return col + " >= ?"
	}
	return col + " >= ? AND " + col + " < ?"
}

func (r keyRange) args() []any {
	if r.hi == nil {
		return []any{r.lo}
	}
	return []any{r.lo, r.hi}
}
