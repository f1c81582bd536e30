package exampleapp

import "testing"

func TestBuild_TraceExporterSetting(t *testing.T) {
	t.Parallel()
	a, err := Build(Config{TraceExporter: TraceStdout})
	if err != nil {
		t.Fatal(err)
	}
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := Build(Config{TraceExporter: "jaeger"}); err == nil {
		t.Fatal("an unknown exporter was accepted")
	}
}
