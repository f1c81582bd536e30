//go:build integration

package exampleapp_test

import (
	"math/rand/v2"
	"testing"
	"time"
)

// TestIntegrationFleet_SurvivesKill9: while 200 runs execute, workers are killed with SIGKILL
// at random moments and restarted (seeded). Every run still completes as a sequential
// execution would; handler re-executions are allowed and reported; no step is committed twice
// and no accepted event is lost.
func TestIntegrationFleet_SurvivesKill9(t *testing.T) {
	t.Parallel() // slow, and independent of the package's other tests (its own app, storage prefix and ports)
	const seed = 42
	runs := fleetRuns(t, 200, seed)
	f := newFleet(t, 2, "FUNCGRAPH_VISIBILITY_TIMEOUT=3s")
	stop := make(chan struct{})
	killed := make(chan int, 1)
	go func() {
		rng := rand.New(rand.NewPCG(seed, 1))
		kills := 0
		defer func() { killed <- kills }()
		for kills < 6 {
			select {
			case <-stop:
				return
			case <-time.After(time.Duration(500+rng.IntN(1500)) * time.Millisecond):
			}
			i := rng.IntN(len(f.addrs))
			f.kill(i)
			kills++
			time.Sleep(time.Duration(200+rng.IntN(800)) * time.Millisecond)
			f.start(i)
		}
	}()
	accepted := f.drive(runs, seed)
	close(stop)
	kills := <-killed
	steps := f.verify(runs, accepted)
	t.Logf("seed %d: %d SIGKILLs; 200 runs, %d committed steps, %d accepted events; re-executions dropped by the conditional commit: %d; redelivered work items: %d",
		seed, kills, steps, len(accepted), f.count("step dropped"), f.count("dequeue_count=2"))
	if kills == 0 {
		t.Error("no worker was killed: the test proved nothing")
	}
}
