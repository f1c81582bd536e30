package engine

// The group index lists the runs of one group (StartRunRequest.Group) without reading any
// other run's rows. A run started with a group has, besides its rows in the sharded families
// (index.go), one row in its group's partition and, while it is Pending or Running, one in
// its group's active partition:
//
//	PartitionKey  "~group~<group>"    every run of the group
//	RowKey        <19-digit (MaxInt64 - created, 100 ns precision)>_<run id>  (newest first)
//
//	PartitionKey  "~gactive~<group>"  while Pending or Running
//	RowKey        <19-digit created, 100 ns precision>_<run id>               (oldest first)
//
// with the properties of the other index rows, Group included. A group's partitions are not
// sharded: a group is one conversation, thread or tenant, whose runs start one at a time
// (a partition serves about 2,000 entities per second).
//
// So the newest N runs of a group are the first N rows of one query, and its oldest
// unfinished run the first row of another (RunQuery.OldestFirst): a listing costs one query
// per page plus a head read per run it returns, whatever the number of runs other groups or
// the whole engine keep. A filter the row keys do not order (a finished status, a graph
// name or hash, Unfinished newest first) is a property condition within the group's
// partition: its cost follows the group's runs.
//
// Cost: two inserts more when a grouped run starts, one merge and one delete more when it
// finishes, two deletes more when it is purged or replaced; nothing for a run without a
// group. The rows follow the rules of the other index rows: written before the head, their
// status after the finishing commit, repaired or removed by listings and the repair pass.
const (
	groupPrefix       = "~group~"
	groupActivePrefix = "~gactive~"
)

// ValidGroup reports whether g can be a StartRunRequest.Group: the rule of instance ids
// (ValidInstanceID), 1–256 printable ASCII characters without / \ # ?, neither "." nor "..".
func ValidGroup(g string) bool { return ValidInstanceID(g) }

// groupCursor returns the one cursor of a listing of q.Group: its partition of every run,
// newest first, or with OldestFirst its partition of unfinished runs.
func groupCursor(q RunQuery, limit int) *listCursor {
	all, active := groupPartitions(q.Group)
	c := &listCursor{q: Query{PartitionKey: all, RowKeyFrom: indexRowFrom, RowKeyTo: indexRowTo, Limit: singleFetch(limit)}}
	if q.OldestFirst {
		// Ascending creation times: created ≥ t ⇔ key ≥ t, created < t ⇔ key < t.
		c.q.PartitionKey, c.oldestFirst = active, true
		if !q.CreatedAfter.IsZero() {
			c.q.RowKeyFrom = padRowTime(q.CreatedAfter.UnixNano())
		}
		if !q.CreatedBefore.IsZero() {
			c.q.RowKeyTo = padRowTime(q.CreatedBefore.UnixNano())
		}
	} else {
		c.q.RowKeyFrom, c.q.RowKeyTo = createdRange(q)
		if q.unfinished() {
			c.q.Where = append(c.q.Where, Cond{Property: iStatus, Op: CondEq, Value: indexActive})
		}
	}
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

// checkGroup refuses a group outside ValidGroup, or whose partitions the store cannot key
// (ErrInvalidGroup). "" is no group.
func (e *Engine) checkGroup(group string) error {
	if group == "" {
		return nil
	}
	if !ValidGroup(group) {
		return ErrInvalidGroup
	}
	if c, ok := e.store.(PartitionKeyChecker); ok {
		all, active := groupPartitions(group)
		if c.CheckPartitionKey(all) != nil || c.CheckPartitionKey(active) != nil {
			return ErrInvalidGroup
		}
	}
	return nil
}
