package funchosttest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// Folder is an app root as `func start` and the host read it at startup, before anything is
// started: host.json, local.settings.json, the app settings they make, the function folders
// and the executable. ReadFolder returns it; Start runs the same reading.
type Folder struct {
	// Root is the absolute app root.
	Root string
	// Config is host.json.
	Config HostConfig
	// LocalSettings is local.settings.json.
	LocalSettings LocalSettings
	// Settings are the app settings: the environment, plus each local.settings.json Value
	// whose name the environment does not set to a non-empty value (Core Tools'
	// StartHostAction: "Skipping '<name>' from local settings as it's already defined in
	// current environment variables").
	Settings map[string]string
	// Executable is host.json's defaultExecutablePath as the host resolves it: %VAR%
	// expanded, then the file in the app root if it exists, otherwise looked up on PATH.
	// Empty when it resolves nowhere (ExecutableErr says why).
	Executable    string
	ExecutableErr error
	// Functions are the functions that indexed, in host order (name, ordinal,
	// case-insensitive); FunctionErrors the folders that did not, with the host's reason.
	Functions      []string
	FunctionErrors map[string]error
}

// ReadFolder reads appRoot as the host would with the environment env (what `func start`
// sees in its own process environment), without starting anything. A function whose
// function.json cannot be indexed (an unresolved %NAME%, a bad route, an invalid queue name)
// is in FunctionErrors, as the host disables it and runs the others; a host.json the host
// cannot read, or a local.settings.json Core Tools cannot decrypt, is an error.
func ReadFolder(appRoot string, env map[string]string) (*Folder, error) {
	f, _, _, err := readFolder(appRoot, env, func(string, ...any) {})
	return f, err
}

// Setting returns an app setting as the host's configuration reads it: names match
// case-insensitively.
func (f *Folder) Setting(name string) (string, bool) { return lookupSetting(f.Settings, name) }

// WorkerRuntime is FUNCTIONS_WORKER_RUNTIME as `func azure functionapp publish` decides it:
// the environment first, then local.settings.json's Values. Without it (and without
// --custom) the publish stops before it uploads anything.
func (f *Folder) WorkerRuntime() string {
	v, _ := f.Setting("FUNCTIONS_WORKER_RUNTIME")
	return v
}

// readFolder is ReadFolder that also returns the loaded functions and the routable HTTP
// functions, for the emulator.
func readFolder(appRoot string, env map[string]string, logf func(string, ...any)) (*Folder, []*function, []*function, error) {
	root, err := filepath.Abs(appRoot)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("read app root: %w", err)
	}
	cfg, err := loadHostConfig(root)
	if err != nil {
		return nil, nil, nil, err
	}
	ls, err := loadLocalSettings(root, logf)
	if err != nil {
		return nil, nil, nil, err
	}
	f := &Folder{Root: root, Config: cfg, LocalSettings: ls, Settings: mergeSettings(env, ls.Values)}
	lookup := func(name string) string { v, _ := f.Setting(name); return v }
	fns, failed, err := loadFunctions(root, lookup, f.Setting)
	if err != nil {
		return nil, nil, nil, err
	}
	routes := prepareHTTP(fns, failed)
	f.FunctionErrors = failed
	for _, fn := range fns {
		if _, bad := failed[fn.Name]; !bad {
			f.Functions = append(f.Functions, fn.Name)
		}
	}
	if cfg.ExecutablePath == "" {
		f.ExecutableErr = errors.New("WorkerDescription DefaultExecutablePath cannot be empty")
	} else {
		f.Executable, f.ExecutableErr = resolveExecutable(root, expandSettings(cfg.ExecutablePath, f.Settings))
	}
	return f, fns, routes, nil
}

// mergeSettings overlays local.settings.json Values on env as Core Tools does.
func mergeSettings(env, values map[string]string) map[string]string {
	out := make(map[string]string, len(env)+len(values))
	for k, v := range env {
		out[k] = v
	}
	for k, v := range values {
		if out[k] == "" {
			out[k] = v
		}
	}
	return out
}

// lookupSetting finds name in settings, exactly or else case-insensitively (the host's
// configuration keys are case-insensitive).
func lookupSetting(settings map[string]string, name string) (string, bool) {
	if v, ok := settings[name]; ok {
		return v, true
	}
	for k, v := range settings {
		if strings.EqualFold(k, name) {
			return v, true
		}
	}
	return "", false
}

// expandSettings replaces %NAME% with the setting NAME; unknown names stay as they are
// (Environment.ExpandEnvironmentVariables).
func expandSettings(s string, settings map[string]string) string {
	return settingRE.ReplaceAllStringFunc(s, func(m string) string {
		if v, ok := lookupSetting(settings, m[1:len(m)-1]); ok {
			return v
		}
		return m
	})
}

// resolveExecutable applies the host's rule: a relative path is app-root-relative if that file
// exists, otherwise it is looked up on PATH.
func resolveExecutable(root, path string) (string, error) {
	if filepath.IsAbs(path) {
		return path, nil
	}
	if candidate := filepath.Join(root, path); fileExists(candidate) {
		return candidate, nil
	}
	found, err := exec.LookPath(path)
	if err != nil {
		return "", fmt.Errorf("%q is neither in the app root nor on PATH: %w", path, err)
	}
	return found, nil
}

func fileExists(path string) bool {
	st, err := os.Stat(path)
	return err == nil && !st.IsDir()
}

// LocalSettings is local.settings.json as Core Tools reads it (AppSettingsFile).
type LocalSettings struct {
	// Found reports that the file exists.
	Found bool
	// IsEncrypted is the file's IsEncrypted; Core Tools takes a missing one as true.
	IsEncrypted bool
	// Values are the settings `func start` puts into the environment.
	Values map[string]string
}

// ErrEncryptedSettings reports a local.settings.json whose IsEncrypted is true or missing and
// that holds values: Core Tools tries to decrypt them and stops ("Failed to decrypt settings.
// Encrypted settings only be edited through 'func settings add'.").
var ErrEncryptedSettings = errors.New("funchosttest: local.settings.json is encrypted (IsEncrypted true or missing): Core Tools fails to decrypt settings")

// loadLocalSettings reads <appRoot>/local.settings.json as Core Tools does. A missing file, or
// one that is not a JSON object with string-like Values, gives no Values (Core Tools warns and
// goes on: the warning goes to logf). Numbers and booleans become text as Json.NET writes them
// ("5", "True"); null values are skipped. IsEncrypted defaults to true, so a file without
// `"IsEncrypted": false` that holds a non-empty value fails with ErrEncryptedSettings, as
// Core Tools fails to decrypt it.
func loadLocalSettings(appRoot string, logf func(string, ...any)) (LocalSettings, error) {
	path := filepath.Join(appRoot, "local.settings.json")
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return LocalSettings{IsEncrypted: true}, nil
	}
	if err != nil {
		return LocalSettings{}, fmt.Errorf("read local.settings.json: %w", err)
	}
	ls := LocalSettings{Found: true, IsEncrypted: true, Values: map[string]string{}}
	var doc struct {
		IsEncrypted *bool                      `json:"IsEncrypted"`
		Values      map[string]json.RawMessage `json:"Values"`
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		logf("funchosttest: Failed to read app settings file at '%s'. Ensure it is a valid JSON file. %v", path, err)
		return LocalSettings{Found: true, IsEncrypted: true}, nil
	}
	for k, raw := range doc.Values {
		v, ok, err := settingText(raw)
		if err != nil {
			logf("funchosttest: Failed to read app settings file at '%s'. %s: %v", path, k, err)
			return LocalSettings{Found: true, IsEncrypted: true}, nil
		}
		if ok {
			ls.Values[k] = v
		} else {
			logf("funchosttest: Skipping '%s' because value is null", k)
		}
	}
	if doc.IsEncrypted != nil {
		ls.IsEncrypted = *doc.IsEncrypted
	}
	if ls.IsEncrypted && slices.ContainsFunc(mapValues(ls.Values), func(v string) bool { return v != "" }) {
		return LocalSettings{}, fmt.Errorf("read %s: %w", path, ErrEncryptedSettings)
	}
	return ls, nil
}

// settingText converts one Values entry as Json.NET's Dictionary<string, string> does.
func settingText(raw json.RawMessage) (string, bool, error) {
	raw = bytes.TrimSpace(raw)
	switch {
	case bytes.Equal(raw, []byte("null")):
		return "", false, nil
	case bytes.Equal(raw, []byte("true")):
		return "True", true, nil
	case bytes.Equal(raw, []byte("false")):
		return "False", true, nil
	case len(raw) > 0 && raw[0] == '"':
		var s string
		err := json.Unmarshal(raw, &s)
		return s, err == nil, err
	case len(raw) > 0 && (raw[0] == '{' || raw[0] == '['):
		return "", false, errors.New("a value is an object or an array, not a string")
	}
	if _, err := strconv.ParseInt(string(raw), 10, 64); err == nil {
		return string(raw), true, nil
	}
	f, err := strconv.ParseFloat(string(raw), 64)
	if err != nil {
		return "", false, err
	}
	return strconv.FormatFloat(f, 'G', -1, 64), true, nil
}

func mapValues(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for _, v := range m {
		out = append(out, v)
	}
	return out
}
