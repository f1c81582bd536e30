package funchost

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestWriteFunctions_RoundTripAndDrift(t *testing.T) {
	dir := t.TempDir()
	app := testApp(t)
	if err := os.MkdirAll(filepath.Join(dir, "stale"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "stale", "function.json"), []byte("{}"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "README.txt"), []byte("keep"), 0o644); err != nil {
		t.Fatal(err)
	}
	if diffs, _ := app.DiffFunctions(dir); len(diffs) == 0 {
		t.Fatal("DiffFunctions reported no drift before writing")
	}
	if err := app.WriteFunctions(dir); err != nil {
		t.Fatal(err)
	}
	if diffs, err := app.DiffFunctions(dir); err != nil || len(diffs) != 0 {
		t.Fatalf("after write: diffs %v, err %v", diffs, err)
	}
	if _, err := os.Stat(filepath.Join(dir, "stale")); !os.IsNotExist(err) {
		t.Fatalf("stale function folder kept: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "README.txt")); err != nil {
		t.Fatalf("unrelated file removed: %v", err)
	}
	got, _ := os.ReadFile(filepath.Join(dir, "fg_echo_invoke", "function.json"))
	want := `{
  "bindings": [
    {
      "type": "httpTrigger",
      "direction": "in",
      "name": "req",
      "authLevel": "function",
      "methods": [
        "post"
      ],
      "route": "graphs/echo/invoke"
    },
    {
      "type": "http",
      "direction": "out",
      "name": "res"
    }
  ]
}
`
	if string(got) != want {
		t.Fatalf("function.json =\n%s\nwant\n%s", got, want)
	}
	queue, _ := os.ReadFile(filepath.Join(dir, "work", "function.json"))
	for _, frag := range []string{`"type": "queueTrigger"`, `"queueName": "work-items"`, `"connection": "AzureWebJobsStorage"`, `"type": "queue"`, `"queueName": "next"`} {
		if !strings.Contains(string(queue), frag) {
			t.Errorf("queue function.json lacks %s:\n%s", frag, queue)
		}
	}
	timer, _ := os.ReadFile(filepath.Join(dir, "sweep", "function.json"))
	for _, frag := range []string{`"type": "timerTrigger"`, `"schedule": "0 */5 * * * *"`, `"runOnStartup": false`} {
		if !strings.Contains(string(timer), frag) {
			t.Errorf("timer function.json lacks %s:\n%s", frag, timer)
		}
	}
	// A changed route is drift.
	if err := os.WriteFile(filepath.Join(dir, "items", "function.json"), []byte(strings.ReplaceAll(string(got), "graphs/echo/invoke", "x")), 0o644); err != nil {
		t.Fatal(err)
	}
	if diffs, _ := app.DiffFunctions(dir); len(diffs) != 1 || !strings.Contains(diffs[0], "items") {
		t.Fatalf("diffs = %v, want one for items", diffs)
	}
}
