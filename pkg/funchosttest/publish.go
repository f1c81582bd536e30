package funchosttest

import (
	"debug/buildinfo"
	"fmt"
	"path/filepath"
	"slices"
	"sort"
)

// CheckPublishFolder reads dir as `func azure functionapp publish` and then the host in Azure
// read it, and lists what would stop them (nil when nothing would):
//
//   - Core Tools needs FUNCTIONS_WORKER_RUNTIME=custom, from local.settings.json (it reads the
//     file and never uploads it); without it the publish stops before uploading;
//   - the host needs a readable host.json, each of functions (when given) among the function
//     folders at the root, and every function folder indexing with the settings
//     local.settings.json lists (what `--publish-local-settings` would upload);
//   - the executable named by defaultExecutablePath must be in dir itself (nothing else is on
//     the PATH in Azure), a Go executable built for linux/amd64.
//
// local.settings.json must not name a storage account either: `--publish-local-settings`
// would upload it over the app's own.
func CheckPublishFolder(dir string, functions []string) []string {
	f, err := ReadFolder(dir, nil)
	if err != nil {
		return []string{err.Error()}
	}
	var problems []string
	if f.WorkerRuntime() != "custom" {
		problems = append(problems, fmt.Sprintf("FUNCTIONS_WORKER_RUNTIME is %q, want custom: Core Tools stops before uploading", f.WorkerRuntime()))
	}
	if _, ok := f.LocalSettings.Values["AzureWebJobsStorage"]; ok {
		problems = append(problems, "local.settings.json names a storage account: --publish-local-settings would upload it")
	}
	for _, fn := range functions {
		if !slices.Contains(f.Functions, fn) {
			problems = append(problems, fmt.Sprintf("function %s does not index: %v", fn, f.FunctionErrors[fn]))
		}
	}
	failed := make([]string, 0, len(f.FunctionErrors))
	for fn := range f.FunctionErrors {
		failed = append(failed, fn)
	}
	sort.Strings(failed)
	for _, fn := range failed {
		problems = append(problems, fmt.Sprintf("function %s: %v", fn, f.FunctionErrors[fn]))
	}
	if f.Executable != filepath.Join(f.Root, f.Config.ExecutablePath) {
		return append(problems, fmt.Sprintf("defaultExecutablePath %q is not in the folder (%v)", f.Config.ExecutablePath, f.ExecutableErr))
	}
	info, err := buildinfo.ReadFile(f.Executable)
	if err != nil {
		return append(problems, fmt.Sprintf("%s: %v", f.Executable, err))
	}
	var goos, goarch string
	for _, s := range info.Settings {
		switch s.Key {
		case "GOOS":
			goos = s.Value
		case "GOARCH":
			goarch = s.Value
		}
	}
	if goos != "linux" || goarch != "amd64" {
		problems = append(problems, fmt.Sprintf("%s is built for %s/%s, want linux/amd64", f.Executable, goos, goarch))
	}
	return problems
}
