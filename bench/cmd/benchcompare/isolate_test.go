package main

import (
	"os"
	"testing"
	"time"
)

// TestMain lets onceIsolated run this test binary as its child: with -child it is the command.
func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == "-child" {
		main()
		return
	}
	os.Exit(m.Run())
}

func TestOnceIsolated_MeasuresInAChildProcess(t *testing.T) {
	c := config{interval: time.Millisecond, warmup: 5, isolate: true}
	res, err := once(t.Context(), c, 20, 2, true)
	if err != nil {
		t.Fatal(err)
	}
	if res.Engine != "funcgraph" || res.Runs != 20 || res.Concurrency != 2 || res.Elapsed <= 0 {
		t.Fatalf("result %+v, want funcgraph's 20 runs at concurrency 2", res)
	}
}

func TestRunChild_RefusesWhatItCannotMeasure(t *testing.T) {
	for _, c := range []struct {
		engine string
		runs   int
	}{{"funcgraph", 0}, {"temporal", 10}} {
		if code := runChild(c.engine, c.runs, 1, 0, time.Millisecond); code != 2 {
			t.Errorf("runChild(%q, %d) = %d, want 2", c.engine, c.runs, code)
		}
	}
}
