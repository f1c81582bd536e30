package procmem

import (
	"os"
	"testing"
)

func TestMB_ReadsOwnResidentSet(t *testing.T) {
	if rss := statusMB(os.Getpid(), "VmRSS"); rss <= 0 {
		t.Fatalf("VmRSS of this process = %v MB, want > 0", rss)
	}
	if got := statusMB(os.Getpid(), "NoSuchField"); got != -1 {
		t.Fatalf("missing field = %v, want -1", got)
	}
}

func TestLastLiveHeapMB_TakesTheLastTrace(t *testing.T) {
	log := "gc 1 @0.01s 1%: 0.1+0.2+0.3 ms clock, 4->5->2 MB, 5 MB goal\nnoise\n" +
		"gc 2 @0.50s 1%: 0.1+0.2+0.3 ms clock, 9->10->3 MB, 8 MB goal\n"
	mb, line, ok := lastLiveHeapMB(log)
	if !ok || mb != 3*(1<<20)/1e6 || line == "" {
		t.Fatalf("LastLiveHeapMB = %v, %q, %v; want 3 MiB in MB", mb, line, ok)
	}
	if _, _, ok := lastLiveHeapMB("no trace"); ok {
		t.Fatal("LastLiveHeapMB found a trace in a log without one")
	}
}

func TestStartServer_MissingBinaryIsAnError(t *testing.T) {
	if s, err := StartServer("/nonexistent/funcgraph"); err == nil {
		s.Stop()
		t.Fatal("StartServer of a missing binary succeeded")
	}
}
