package deploy

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"regexp"
	"strings"
	"testing"

	"github.com/genvideo/gen/shared/awsstack"
	"github.com/genvideo/gen/shared/workflow"
)

// TestLogMetricFiltersMatchTheLogs matches each metric filter of the
// template against lines the functions' own logger writes: the line it
// exists to count matches, the same message at WARN and another ERROR do
// not. A filter on a field the logger never writes ("msg" where Lambda's
// JSON says "message") counts nothing, silently.
func TestLogMetricFiltersMatchTheLogs(t *testing.T) {
	tp := loadTemplate(t)
	tests := []struct {
		filter, message string
	}{
		{"FailedRefundsMetric", "cannot fail and refund a task whose workflow did not start; it stays charged until the sweep runs it"},
		{"ModelUnavailableMetric", workflow.AlarmModelUnavailable},
		{"ProviderOutcomeUnknownMetric", workflow.AlarmOutcomeUnknown},
		{"ProviderBusyMetric", workflow.AlarmProviderBusy},
	}
	for _, tt := range tests {
		t.Run(tt.filter, func(t *testing.T) {
			res, ok := tp.Resources[tt.filter]
			if !ok {
				t.Fatalf("no %s in the template", tt.filter)
			}
			pattern, _ := res.Properties["FilterPattern"].(string)
			if mustJSON(t, res.Properties["LogGroupName"]) != `{"Ref":"FunctionLogGroup"}` {
				t.Errorf("%s reads %s, want FunctionLogGroup", tt.filter, mustJSON(t, res.Properties["LogGroupName"]))
			}
			if !filterMatches(t, pattern, logLine(t, slog.LevelError, tt.message)) {
				t.Errorf("%s %q does not match the ERROR it counts: %s", tt.filter, pattern, logLine(t, slog.LevelError, tt.message))
			}
			if filterMatches(t, pattern, logLine(t, slog.LevelWarn, tt.message)) {
				t.Errorf("%s %q matches a WARN", tt.filter, pattern)
			}
			if filterMatches(t, pattern, logLine(t, slog.LevelError, "store unavailable")) {
				t.Errorf("%s %q matches an unrelated ERROR", tt.filter, pattern)
			}
		})
	}
}

// logLine is what a function logs at level: awsstack.NewLogger's JSON.
func logLine(t *testing.T, level slog.Level, message string) []byte {
	t.Helper()
	var b bytes.Buffer
	awsstack.NewLogger(&b, slog.LevelDebug).Log(t.Context(), level, message, "task", "gen_1_x", "model", "gen-3.1-fast-generate-001")
	return b.Bytes()
}

// filterTerm is one term of a CloudWatch Logs JSON filter pattern of the
// form { $.a = "x" && $.b = "*y*" }: the subset the template uses
// (https://docs.aws.amazon.com/AmazonCloudWatch/latest/logs/FilterAndPatternSyntax.html).
var filterTerm = regexp.MustCompile(`^\$\.(\w+)\s*=\s*"([^"]*)"$`)

// filterMatches reports whether the JSON log line matches pattern,
// with its wildcards (*).
func filterMatches(t *testing.T, pattern string, line []byte) bool {
	t.Helper()
	body, ok := strings.CutPrefix(strings.TrimSpace(pattern), "{")
	body, ok2 := strings.CutSuffix(body, "}")
	if !ok || !ok2 {
		t.Fatalf("filter %q is not a JSON pattern", pattern)
	}
	var fields map[string]any
	if err := json.Unmarshal(line, &fields); err != nil {
		t.Fatalf("log line %s: %v", line, err)
	}
	for _, term := range strings.Split(body, "&&") {
		m := filterTerm.FindStringSubmatch(strings.TrimSpace(term))
		if m == nil {
			t.Fatalf("filter %q: term %q is outside the subset this test reads", pattern, term)
		}
		value, _ := fields[m[1]].(string)
		glob := "^" + strings.ReplaceAll(regexp.QuoteMeta(m[2]), `\*`, ".*") + "$"
		if !regexp.MustCompile(glob).MatchString(value) {
			return false
		}
	}
	return true
}
