package funchost

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
)

// AppSetting is an app setting that the generated function.json files read a name from, as a
// `%NAME%` binding expression the host resolves when it indexes the functions, and the value
// the app itself uses for that name. The two must agree: a queue trigger reading its queue
// name from a setting that names another queue than the one the app writes to would wait
// forever, silently.
type AppSetting struct {
	// Name is the setting's name, as written between the percent signs.
	Name string
	// Value is the name the app uses (the queue it writes to or listens on).
	Value string
	// Functions are the functions whose bindings read the setting, in host order.
	Functions []string
}

// settingNameRE is what BindQueueName accepts as a setting name: the characters an app
// setting name and an environment variable share.
var settingNameRE = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// BindQueueName makes the generated function.json read queue, wherever a queue trigger or a
// queue output names it, from the app setting setting (`"queueName": "%setting%"`), so that
// one function.json serves every deployment and the name is decided by the app settings.
// The app must then refuse to run when the setting names another queue (AppSettings lists
// what to check). Bindings of functions registered before or after the call are covered; a
// queue can be bound to one setting only, and a setting to one queue.
func (a *FunctionApp) BindQueueName(queue, setting string) error {
	if strings.TrimSpace(queue) == "" {
		return fmt.Errorf("bind queue name: empty queue name")
	}
	if !settingNameRE.MatchString(setting) {
		return fmt.Errorf("bind queue name %q: setting name %q: want letters, digits and underscores", queue, setting)
	}
	key := strings.ToLower(queue)
	a.mu.Lock()
	defer a.mu.Unlock()
	if old, ok := a.queueSettings[key]; ok {
		if old.setting == setting {
			return nil
		}
		return fmt.Errorf("bind queue name %q to %s: it is bound to %s", queue, setting, old.setting)
	}
	for q, b := range a.queueSettings {
		if b.setting == setting {
			return fmt.Errorf("bind queue name %q to %s: the setting names queue %q", queue, setting, q)
		}
	}
	if a.queueSettings == nil {
		a.queueSettings = map[string]queueSetting{}
	}
	a.queueSettings[key] = queueSetting{queue: queue, setting: setting}
	return nil
}

// queueSetting is one BindQueueName.
type queueSetting struct{ queue, setting string }

// queueNameExpr returns what function.json says for queue: `%SETTING%` when the queue is
// bound to a setting, the name itself otherwise.
func (a *FunctionApp) queueNameExpr(queue string) string {
	a.mu.Lock()
	defer a.mu.Unlock()
	if b, ok := a.queueSettings[strings.ToLower(queue)]; ok && queue != "" {
		return "%" + b.setting + "%"
	}
	return queue
}

// AppSettings returns the app settings the generated function.json files read, sorted by
// name: each with the value the app uses and the functions that read it. A setting bound with
// BindQueueName that no function reads is not listed.
func (a *FunctionApp) AppSettings() []AppSetting {
	a.mu.Lock()
	bound := make(map[string]queueSetting, len(a.queueSettings))
	for k, v := range a.queueSettings {
		bound[k] = v
	}
	a.mu.Unlock()
	readers := map[string][]string{}
	use := func(fn, queue string) {
		if b, ok := bound[strings.ToLower(queue)]; ok && queue != "" && !slices.Contains(readers[b.setting], fn) {
			readers[b.setting] = append(readers[b.setting], fn)
		}
	}
	for _, q := range a.QueueFunctions() {
		use(q.Name, q.QueueName)
		for _, o := range q.Outputs {
			use(q.Name, o.QueueName)
		}
	}
	for _, t := range a.TimerFunctions() {
		for _, o := range t.Outputs {
			use(t.Name, o.QueueName)
		}
	}
	var out []AppSetting
	for _, b := range bound {
		if fns := readers[b.setting]; len(fns) > 0 {
			slices.SortFunc(fns, compareNames)
			out = append(out, AppSetting{Name: b.setting, Value: b.queue, Functions: fns})
		}
	}
	slices.SortFunc(out, func(x, y AppSetting) int { return strings.Compare(x.Name, y.Name) })
	return out
}
