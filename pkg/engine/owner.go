package engine

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"unicode/utf8"
)

// The owner index lists the runs of one owner (RunQuery.Owner) without reading any other
// run's rows, so that a caller who may see only their own runs is never handed a page, a
// continuation token or a count that stems from anybody else's. A run's owner is the string
// member "owner" (MetadataOwnerKey) of the metadata it was started with, the key the runs
// API's per-user isolation records the caller under. A run with an owner has, besides its
// rows in the sharded families (index.go) and its group's (group.go), one row in its owner's
// partition and, while it is Pending or Running, one in its owner's active partition:
//
//	PartitionKey  "~owner~<h>"    every run of the owner
//	              "~oactive~<h>"  while Pending or Running
//	              h = the first 16 bytes of SHA-256(owner), in lowercase hex
//	RowKey        <19-digit (MaxInt64 - created, 100 ns precision)>_<run id>  (newest first)
//
// with the properties of the other index rows, Owner included. An owner is hashed because it
// may hold characters no key may (an identity such as "aad:…" with a slash); a listing also
// asks for Owner equal to the caller's, so two owners whose hashes met would still see only
// their own runs. The partitions are not sharded: an owner is one identity, whose runs start
// at a person's or a client's pace (a partition serves about 2,000 entities per second).
//
// So a page of an owner's newest runs is one query plus a head read per run it returns,
// whatever the number of runs other owners keep, and an owner without runs reads one empty
// partition. A filter the row keys do not order (a finished status, a graph name or hash) is
// a property condition within the owner's partition: its cost follows the owner's runs,
// never anyone else's.
//
// Cost: two inserts more when a run with an owner starts, one merge and one delete more when
// it finishes, two deletes more when it is purged or replaced; nothing for a run without an
// owner. The rows follow the rules of the other index rows: written before the head, their
// status after the finishing commit, repaired or removed by listings and the repair pass.
const (
	ownerPrefix       = "~owner~"
	ownerActivePrefix = "~oactive~"
	iOwner            = "Owner"
)

// MetadataOwnerKey is the member of a run's metadata (StartRunRequest.Metadata) that names
// its owner: a string that passes ValidOwner files the run in its owner's index partitions
// (RunQuery.Owner).
const MetadataOwnerKey = "owner"

// MaxOwnerBytes bounds an owner the index keeps, in bytes of UTF-8.
const MaxOwnerBytes = 512

// ValidOwner reports whether the run index keeps runs of owner o: 1–MaxOwnerBytes bytes of
// valid UTF-8 without control characters (U+0000–U+001F, U+007F–U+009F). A run whose
// metadata names another owner (a number, an empty or longer string) has no owner rows.
func ValidOwner(o string) bool {
	if o == "" || len(o) > MaxOwnerBytes || !utf8.ValidString(o) {
		return false
	}
	for _, r := range o {
		if r < 0x20 || (r >= 0x7f && r <= 0x9f) {
			return false
		}
	}
	return true
}

// metadataOwner returns the owner named by normalized start metadata (a JSON object), or ""
// when it names none the index keeps. As encoding/json decodes it: with "owner" twice, the
// last one counts.
func metadataOwner(meta json.RawMessage) string {
	var m map[string]json.RawMessage
	if json.Unmarshal(meta, &m) != nil {
		return ""
	}
	raw, ok := m[MetadataOwnerKey]
	if !ok {
		return ""
	}
	var o string
	if json.Unmarshal(raw, &o) != nil || !ValidOwner(o) {
		return ""
	}
	return o
}

// ownerPartitions returns the partitions of an owner: every run, and the unfinished ones.
func ownerPartitions(owner string) (all, active string) {
	sum := sha256.Sum256([]byte(owner))
	h := hex.EncodeToString(sum[:16])
	return ownerPrefix + h, ownerActivePrefix + h
}

// ownerCursor returns the one cursor of a listing of q.Owner: its partition of unfinished
// runs for a Pending or Running filter, else its partition of every run; both newest first.
func ownerCursor(q RunQuery, limit int) *listCursor {
	all, active := ownerPartitions(q.Owner)
	c := &listCursor{q: Query{PartitionKey: all, Limit: singleFetch(limit)}}
	if q.unfinished() {
		c.q.PartitionKey = active
	}
	c.q.RowKeyFrom, c.q.RowKeyTo = createdRange(q)
	c.q.Where = append(c.q.Where, Cond{Property: iOwner, Op: CondEq, Value: q.Owner})
	if q.Status != "" && !q.unfinished() {
		c.q.Where = append(c.q.Where, finishedStatusConds(q.Status)...)
	}
	if q.GraphName != "" {
		c.q.Where = append(c.q.Where, Cond{Property: iGraph, Op: CondEq, Value: q.GraphName})
	}
	if q.GraphHash != "" {
		c.q.Where = append(c.q.Where, Cond{Property: iHash, Op: CondEq, Value: q.GraphHash})
	}
	return c
}
