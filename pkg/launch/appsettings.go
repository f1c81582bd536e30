package launch

import (
	"fmt"
	"strings"

	"github.com/funcgraph/funcgraph/pkg/funchost"
)

// envWorkQueue is the app setting the generated fg_orchestrator function.json reads its queue
// name from ("queueName": "%FUNCGRAPH_WORK_QUEUE%"): the host resolves it when it indexes the
// functions. `stage` writes it into local.settings.json; in Azure it is an app setting. It must
// name the queue the engine writes to, <FUNCGRAPH_STORAGE_PREFIX>-work: under the Functions
// host the app refuses to start when it is missing or names another queue, and `serve`
// refuses to start when it is set to another queue.
const envWorkQueue = "FUNCGRAPH_WORK_QUEUE"

// checkWorkQueueEnv refuses a FUNCGRAPH_WORK_QUEUE that names another queue than the one
// FUNCGRAPH_STORAGE_PREFIX gives the engine. It runs before any storage is opened, so a
// misconfigured app creates nothing.
func checkWorkQueueEnv(getenv func(string) string) error {
	got := strings.TrimSpace(getenv(envWorkQueue))
	if got == "" {
		return nil
	}
	names, err := namesFor(strings.TrimSpace(getenv(EnvStoragePrefix)))
	if err != nil {
		return err
	}
	if got != names.WorkQueue {
		return settingMismatch(funchost.AppSetting{Name: envWorkQueue, Value: names.WorkQueue}, got, getenv)
	}
	return nil
}

// checkAppSettings compares every app setting the app's function.json files read (see
// funchost.FunctionApp.AppSettings) with the name the app uses. Under the Functions host each
// must be set and equal, since the host resolved the bindings from it; for `serve` only a set
// value must agree.
func checkAppSettings(app *funchost.FunctionApp, getenv func(string) string, mode Mode) error {
	for _, s := range app.AppSettings() {
		got := strings.TrimSpace(getenv(s.Name))
		switch {
		case got == s.Value:
		case got == "" && mode != ModeCustomHandler:
		case got == "":
			return fmt.Errorf("app setting %s is not set: the host cannot resolve %%%s%% in the function.json of %s, so %s would not run; "+
				"set %s=%s (`stage` writes it into local.settings.json; in Azure add it to the app settings)",
				s.Name, s.Name, strings.Join(s.Functions, ", "), strings.Join(s.Functions, ", "), s.Name, s.Value)
		default:
			return settingMismatch(s, got, getenv)
		}
	}
	return nil
}

// settingMismatch describes a setting that names got while the app uses s.Value.
func settingMismatch(s funchost.AppSetting, got string, getenv func(string) string) error {
	readers := "its function.json"
	if len(s.Functions) > 0 {
		readers = "the function.json of " + strings.Join(s.Functions, ", ")
	}
	if s.Name != envWorkQueue {
		return fmt.Errorf("app setting %s=%q, but the app uses %q: %s would read a name the app does not use; set %s=%s",
			s.Name, got, s.Value, readers, s.Name, s.Value)
	}
	prefix := strings.TrimSpace(getenv(EnvStoragePrefix))
	shown := fmt.Sprintf("%s=%q", EnvStoragePrefix, prefix)
	if prefix == "" {
		shown = EnvStoragePrefix + " unset (default " + defaultStoragePrefix + ")"
	}
	fix := fmt.Sprintf("set %s=%s", envWorkQueue, s.Value)
	if p, ok := strings.CutSuffix(got, "-work"); ok {
		if _, err := namesFor(p); err == nil {
			fix += fmt.Sprintf(", or %s=%s", EnvStoragePrefix, p)
		}
	}
	return fmt.Errorf("%s=%q names the work queue %q, but %s puts the engine's work queue at %q: "+
		"the queue trigger (%s, queueName %%%s%%) would listen where the engine never writes and every run would stay Pending; %s",
		envWorkQueue, got, got, shown, s.Value, readersOr(s.Functions, "fg_orchestrator"), envWorkQueue, fix)
}

func readersOr(fns []string, fallback string) string {
	if len(fns) == 0 {
		return fallback
	}
	return strings.Join(fns, ", ")
}
