package platformruns

import "time"

// SetRecheck sets the safety nets of b's waits for their turn: near for the run next in
// line, far for those behind it.
func SetRecheck(b *Backend, near, far time.Duration) { b.recheck, b.recheckFar = near, far }
