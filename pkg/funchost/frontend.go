package funchost

import "time"

// FrontEndTimeout is how long the Azure front end (the load balancer in front of every
// function app) waits for an HTTP response: past it the caller gets 502 while the function
// keeps running. No route of a funcgraph app may wait that long; the routes that wait for a
// run answer before their bound (host.Options.MaxWait), which must be below this.
const FrontEndTimeout = 230 * time.Second
