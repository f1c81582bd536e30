// Package faultproxy is a fault-injecting HTTP reverse proxy for tests: it stands in front of
// one storage service endpoint (an Azurite blob, queue or table port) on a loopback port and
// does to chosen requests what production does to them:
//
//   - LoseReply forwards the request, lets the service apply it, then drops the connection
//     without an answer — what a dropped connection, or an Azure 500/503 "may have
//     succeeded", looks like to a client, whose SDK then retries a write that already landed;
//   - Busy answers 503 ServerBusy without forwarding (a throttling burst);
//   - Drop closes the connection without forwarding (the request never arrives);
//   - an Outage fails every request for a while: refused connections, closed connections,
//     or 503s.
//
// Rules pick requests by what they are (method, path, query, headers, body) — matchers for the
// kinds of write of the storage services are provided (TableBatch, QueueEnqueue, BlobPut, …)
// — and fire after Skip matching requests, at most Times times, with a seeded Probability, so
// a test scripts exactly which write goes wrong. Counters (Rule.Fired, Proxy.Stats) let a
// test assert that the faults it asked for happened.
//
// StartSet puts one proxy in front of each endpoint of a storage connection string and
// returns the connection string that points at them, for the process itself or a child
// process. The package is plain net/http: it knows the services' URL shapes, not their SDKs.
//
// It is for tests only; it never runs in a product binary.
package faultproxy
